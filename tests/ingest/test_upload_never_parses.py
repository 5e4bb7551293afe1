"""Issue 23, item 2, replayed: a saved web page built to be slow (tables of colspan=1000) was
parsed inside the upload request, holding a web worker for up to INGEST_PAGE_SECONDS, and a
refused file could be sent again in a loop. Now the request only stores and queues the file,
the ingest worker opens it, a refused file's bytes are refused again at once with the same
reason, and each person's uploads are limited across the page and the API."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token

from hctqa.core.extraction.worker import PageRunner
from ingest import services
from ingest.models import Document
from tests.factories import CollectionFactory, UserFactory
from tests.ingest.pdfs import TOTAL_ROWS, table_pdf

pytestmark = pytest.mark.django_db


def slow_web_page(tables: int = 500) -> bytes:
    """The probe's page, smaller: every table spans thousands of columns (about 8 s to lay
    out on the development machine; the probe's 2.4 MB one takes the full 30 s)."""
    row = "<tr>" + "<td colspan=1000>x</td>" * 4 + "</tr>"
    return ("<!doctype html><html><body>" + f"<table>{row * 2}</table>" * tables).encode()


class ParsedInTheRequest(AssertionError):
    pass


@pytest.fixture
def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a document in this process fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise ParsedInTheRequest("a document was opened outside the ingest worker")

    monkeypatch.setattr(PageRunner, "call", refuse)
    monkeypatch.setattr(PageRunner, "_start", refuse)


@pytest.fixture
def adjudicator():
    return UserFactory(role="adjudicator")


@pytest.fixture
def collection():
    return CollectionFactory(code="qnpc-2024")


def _file(data: bytes, name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def test_the_upload_page_the_api_and_the_command_store_and_queue_without_parsing(
    print_pdf, adjudicator, collection, no_parsing, tmp_path: Path
) -> None:
    page = slow_web_page()
    pdf = table_pdf(print_pdf, TOTAL_ROWS)
    client = Client()
    client.force_login(adjudicator)
    response = client.post(
        "/ingest/", {"collection": collection.code, "files": [_file(page, "p.html")]}
    )
    assert response.status_code == 302
    token = Token.objects.create(user=adjudicator)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.post(
        "/api/ingest/documents/", {"collection": collection.code, "file": [_file(pdf, "r.pdf")]}
    )
    assert response.status_code == 201, response.json()
    assert response.json()["results"][0]["document"]["page_count"] is None
    path = tmp_path / "other.html"
    path.write_bytes(slow_web_page(tables=3))
    call_command(
        "ingest", str(path), "--collection", collection.code, "--enqueue", stdout=io.StringIO()
    )
    documents = Document.objects.order_by("pk")
    assert [(d.kind, d.status, d.page_count) for d in documents] == [
        ("html", "queued", None),
        ("pdf", "queued", None),
        ("html", "queued", None),
    ]


def test_a_file_the_worker_refused_is_refused_again_at_once_with_its_reason(
    adjudicator, collection, _ingest_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = slow_web_page()
    document = services.document_upload(
        user=adjudicator, collection=collection, file_name="slow.html", chunks=[page]
    )
    with override_settings(INGEST_PAGE_SECONDS=1):
        assert services.document_extract(document_id=document.pk) == "refused"
    document.refresh_from_db()
    assert (document.status, document.refused_code) == ("refused", "too_slow")
    assert "took longer than 1 s" in document.message
    assert not document.pages.exists() and not document.candidates.exists()
    assert not (_ingest_files / "documents").exists() or not any(
        (_ingest_files / "documents").iterdir()
    )

    # Sent again, by anyone, in a loop: refused at once, nothing read, nothing kept.
    monkeypatch.setattr(PageRunner, "call", lambda *a, **k: pytest.fail("read again"))
    for _ in range(3):
        with pytest.raises(services.UploadRefused) as refused:
            services.document_upload(
                user=UserFactory(role="adjudicator"),
                collection=collection,
                file_name="again.html",
                chunks=[page],
            )
        assert refused.value.code == "too_slow"
        assert "took longer than 1 s" in refused.value.message
        assert f"refused as document qnpc-2024--{document.number}" in refused.value.message
        assert refused.value.document == document
    assert Document.objects.count() == 1
    assert not list((_ingest_files / "incoming").iterdir())

    # The API says the same, with the document that was refused.
    token = Token.objects.create(user=adjudicator)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.post(
        "/api/ingest/documents/", {"collection": "qnpc-2024", "file": [_file(page, "a.html")]}
    )
    assert response.status_code == 400
    (entry,) = response.json()["results"]
    assert entry["code"] == "too_slow" and entry["document"]["status"] == "refused"

    # Once the refusal is old enough to forget, the file may be sent (and read) again.
    Document.objects.filter(pk=document.pk).update(finished_at=timezone.now() - timedelta(days=2))
    again = services.document_upload(
        user=adjudicator, collection=collection, file_name="again.html", chunks=[page]
    )
    assert again.status == "queued" and again.pk != document.pk


def test_ingest_uploads_are_limited_per_person_across_the_page_and_the_api(
    adjudicator, collection, no_parsing
) -> None:
    from django.conf import settings

    rates = {**settings.API_THROTTLE_RATES, "ingest": "3/hour"}
    pages = [f"<html><body><table><tr><td>{n}</table>".encode() for n in range(8)]
    client = Client()
    client.force_login(adjudicator)
    token = Token.objects.create(user=adjudicator)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    with override_settings(API_THROTTLE_RATES=rates):
        # Two files in one form count twice.
        two = [_file(pages[0], "0.html"), _file(pages[1], "1.html")]
        assert client.post("/ingest/", {"collection": "qnpc-2024", "files": two}).status_code == 302
        response = api.post(
            "/api/ingest/documents/",
            {
                "collection": "qnpc-2024",
                "file": [_file(pages[2], "2.html"), _file(pages[3], "3.html")],
            },
        )
        assert response.status_code == 201
        assert [r.get("code") for r in response.json()["results"]] == [None, "throttled"]
        response = api.post(
            "/api/ingest/documents/",
            {"collection": "qnpc-2024", "file": [_file(pages[4], "4.html")]},
        )
        assert response.status_code == 429 and int(response["Retry-After"]) > 0
        page = client.post(
            "/ingest/", {"collection": "qnpc-2024", "files": [_file(pages[5], "5.html")]}
        )
        assert page.status_code == 429 and int(page["Retry-After"]) > 0
        assert b"sent many files for ingesting lately" in page.content
        # Another person has a budget of their own.
        other = Client()
        other.force_login(UserFactory(role="adjudicator"))
        response = other.post(
            "/ingest/", {"collection": "qnpc-2024", "files": [_file(pages[6], "6.html")]}
        )
        assert response.status_code == 302
    assert Document.objects.count() == 4
