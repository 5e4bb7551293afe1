"""Pictures of tables (PNG, JPEG) and scanned pages: uploaded through the page, the API and the
command, read through OCR in the collection's language, and each bad picture refused with its
own message and nothing kept."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from PIL import Image
from rest_framework.authtoken.models import Token

from dataset import services as dataset_services
from hctqa.core.extraction.worker import PageRunner, PageTimeout
from hctqa.core.images import render_table_png
from ingest import files, services
from ingest.models import Document, PageStatus
from plumbing.errors import ApplicationError
from tests.factories import UserFactory
from tests.ingest.pdfs import TOTAL_ROWS, scanned_pdf
from tests.ingest.test_ingest import ingest, nothing_kept, upload, upload_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def adjudicator():
    return UserFactory(role="adjudicator")


@pytest.fixture
def collection():
    from dataset.models import Collection

    return Collection.objects.create(code="scans", name="Scanned yearbooks")


def as_jpeg(png: bytes) -> bytes:
    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(out, format="JPEG", quality=90)
    return out.getvalue()


@pytest.mark.parametrize(("encode", "suffix"), [(lambda b: b, "png"), (as_jpeg, "jpg")])
def test_an_image_is_one_page_read_through_ocr_in_pixels(
    adjudicator, collection, encode, suffix: str
) -> None:
    data = encode(render_table_png(TOTAL_ROWS))
    document = ingest(adjudicator, collection, data, name=f"screenshot.{suffix}")
    assert (document.kind, document.page_count, document.status) == ("image", 1, "done")
    assert document.stored_path.endswith(f".{suffix}")
    page = document.pages.get()
    width, height = Image.open(io.BytesIO(data)).size
    assert (page.width, page.height, page.ocr_language) == (width, height, "eng")
    candidate = document.candidates.get()
    assert candidate.machine_csv == TOTAL_ROWS
    assert "Total 30 34 64" in candidate.ocr_text
    assert 0 <= candidate.bbox[0] < candidate.bbox[2] <= width  # pixels
    assert files.read(candidate.crop_path).startswith(b"\x89PNG")

    client = Client()
    client.force_login(adjudicator)
    shown = client.get(document.get_absolute_url()).content.decode()
    assert "Read through OCR (no usable text layer): the image." in shown
    assert "read through OCR (eng)" in shown
    review = client.get(candidate.get_absolute_url()).content.decode()
    assert 'id="ocr-text"' in review and "North 10 12 22" in review
    # Extracting a moved box again reads it through OCR again.
    moved = services.candidate_reextract(
        editor=adjudicator, candidate=candidate, bbox=[0, 0, width, height]
    )
    assert moved.version == 2 and moved.machine_csv == TOTAL_ROWS
    assert "South 20 22 42" in moved.ocr_text


def test_images_come_in_through_the_api_and_the_command(
    adjudicator, collection, tmp_path: Path
) -> None:
    client = Client()
    token = Token.objects.create(user=adjudicator)
    png = render_table_png(TOTAL_ROWS)
    answer = client.post(
        "/api/ingest/documents/",
        {"collection": "scans", "file": upload_file(png, "table.png")},
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["results"][0]["document"]["kind"] == "image"
    path = tmp_path / "photo.jpeg"
    path.write_bytes(as_jpeg(render_table_png("Item,2019\nSchools,120\nStudents,51000\n")))
    out = io.StringIO()
    call_command("ingest", str(path), "--collection", "scans", stdout=out)
    assert "1 page, 1 table candidate" in out.getvalue()
    made = Document.objects.get(file_name="photo.jpeg")
    assert made.candidates.get().machine_csv == "Item,2019\nSchools,120\nStudents,51000\n"


def _noise_png() -> bytes:
    import numpy as np

    noise = np.random.default_rng(3).integers(0, 255, (300, 300), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(noise).save(out, format="PNG")
    return out.getvalue()


def _gif() -> bytes:
    out = io.BytesIO()
    Image.new("L", (40, 40), 255).save(out, format="GIF")
    return out.getvalue()


def test_another_picture_format_is_refused_at_upload_and_nothing_kept(
    adjudicator, collection, _ingest_files: Path
) -> None:
    with pytest.raises(services.UploadRefused) as refused:
        upload(adjudicator, collection, _gif(), name="table.png")  # named .png, a GIF inside
    assert refused.value.code == "image_format"
    assert "This is a GIF image; only PNG and JPEG images can be read" in refused.value.message
    assert nothing_kept(_ingest_files)


def _refused_by_the_worker(document: Document, root: Path, code: str, message: str) -> None:
    """Refused on its page, nothing half-stored: no file, page or candidate."""
    assert (document.status, document.refused_code) == ("refused", code)
    assert message in document.message
    assert (document.stored_path, document.page_count) == ("", None)
    assert not document.pages.exists() and not document.candidates.exists()
    assert not [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (lambda: _noise_png()[:5000], "truncated_image", "This PNG image is truncated"),
        (
            lambda: as_jpeg(render_table_png(TOTAL_ROWS))[:20] + b"\x00" * 400,
            "corrupt_image",
            "This JPEG image is damaged",
        ),
    ],
    ids=["truncated-png", "damaged-jpeg"],
)
def test_a_damaged_picture_is_refused_by_the_worker_with_its_own_message(
    adjudicator, collection, _ingest_files: Path, make, code: str, message: str
) -> None:
    document = ingest(adjudicator, collection, make(), name="table.png")
    _refused_by_the_worker(document, _ingest_files, code, message)


def test_a_picture_over_the_pixel_limit_is_refused_and_nothing_kept(
    adjudicator, collection, _ingest_files: Path
) -> None:
    png = render_table_png(TOTAL_ROWS)
    width, height = Image.open(io.BytesIO(png)).size
    # Pillow only warns between the limit and twice it: that is a refusal too.
    with override_settings(INGEST_MAX_IMAGE_PIXELS=width * height * 2 // 3):
        document = ingest(adjudicator, collection, png, name="table.png")
    _refused_by_the_worker(document, _ingest_files, "too_many_pixels", "more pixels than the limit")
    assert "INGEST_MAX_IMAGE_PIXELS" in document.message


def test_ocr_over_the_page_time_limit_is_stopped_and_said(
    adjudicator, collection, monkeypatch
) -> None:
    real_call = PageRunner.call

    def slow_ocr(self, request):  # the picture opens; reading it runs over the limit
        if request["op"] == "image_page":
            raise PageTimeout
        return real_call(self, request)

    monkeypatch.setattr(PageRunner, "call", slow_ocr)
    uploaded = ingest(adjudicator, collection, render_table_png(TOTAL_ROWS), name="page.png")
    assert uploaded.status == "failed"
    assert "Reading the image through OCR (eng) took longer than 30 s" in uploaded.message
    page = uploaded.pages.get()
    assert page.status == PageStatus.FAILED and not page.image_path
    assert uploaded.candidates.count() == 0


def test_a_scanned_pages_ocr_over_the_time_limit_keeps_the_page_to_draw_on(
    print_pdf, adjudicator, collection, monkeypatch
) -> None:
    real_call = PageRunner.call

    def slow_ocr(self, request):
        if request["op"] == "scanned_page":
            raise PageTimeout
        return real_call(self, request)

    monkeypatch.setattr(PageRunner, "call", slow_ocr)
    document = ingest(adjudicator, collection, scanned_pdf(print_pdf, TOTAL_ROWS))
    page = document.pages.get()
    assert page.status == PageStatus.FAILED
    assert "Reading page 1 through OCR (eng) took longer than 30 s" in page.message
    assert page.image_path and page.width  # a box can still be drawn and typed in
    assert document.candidates.count() == 0


def test_the_ocr_language_is_the_collections_and_a_missing_one_says_what_to_install(
    adjudicator, collection
) -> None:
    admin = UserFactory(role="admin")
    with pytest.raises(ApplicationError, match="Tesseract language codes"):
        dataset_services.collection_create(user=admin, code="bad", name="Bad", ocr_language="en-GB")
    made = dataset_services.collection_create(
        user=admin, code="bilingual", name="Bilingual tables", ocr_language="eng+zzz"
    )
    assert (
        dataset_services.collection_create(user=admin, code="plain", name="Plain").ocr_language
        == "eng"
    )
    document = ingest(adjudicator, made, render_table_png(TOTAL_ROWS), name="t.png")
    page = document.pages.get()
    assert page.status == PageStatus.FAILED
    assert "apt-get install tesseract-ocr-zzz" in page.message
    assert "change the collection's OCR language" in page.message
