"""Uploading, extracting, reviewing and accepting tables: services, pages and API."""

from __future__ import annotations

import importlib
import io
from pathlib import Path

import pytest
from django.db import IntegrityError
from django.test import Client, override_settings
from django.utils.html import escape
from pypdf import PdfReader, PdfWriter
from rest_framework.authtoken.models import Token

from annotation import selectors as annotation_selectors
from dataset import selectors as dataset_selectors
from dataset import services as dataset_services
from dataset.models import Collection, Question, Table
from hctqa.core.extraction.grid import Grid, GridCell, grid_from_canonical
from hctqa.core.extraction.worker import PageRunner, PageTimeout
from hctqa.core.images import render_table_png
from hctqa.core.splits import split_for_table
from ingest import files, selectors, services
from ingest.models import Candidate, CandidateStatus, Document, PageStatus
from leaderboard.selectors import benchmark_questions
from plumbing.errors import ApplicationError, ConflictError
from tests.factories import CollectionFactory, QuestionFactory, TableFactory, UserFactory
from tests.ingest.pdfs import (
    NESTED_COLUMNS,
    ROW_GROUPS,
    TOTAL_ROWS,
    pages_pdf,
    scanned_pdf,
    table_pdf,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def adjudicator():
    return UserFactory(role="adjudicator")


@pytest.fixture
def collection() -> Collection:
    return Collection.objects.create(
        code="qnpc-2024",
        name="QNPC Statistical Abstract 2024",
        publisher="Qatar National Planning Council",
        url="https://www.npc.qa/",
        licence="CC BY 4.0",
    )


def upload(user, collection: Collection, data: bytes, name: str = "report.pdf") -> Document:
    return services.document_upload(
        user=user, collection=collection, file_name=name, chunks=[data[:1000], data[1000:]]
    )


def ingest(user, collection: Collection, data: bytes, name: str = "report.pdf") -> Document:
    document = upload(user, collection, data, name)
    services.document_extract(document_id=document.pk)
    document.refresh_from_db()
    return document


def state_of(canonical: str, header_rows: int = 1, header_columns: int = 1) -> dict:
    grid = grid_from_canonical(canonical)
    return {**grid.as_json(), "header_rows": header_rows, "header_columns": header_columns}


def nothing_kept(root: Path) -> bool:
    return Document.objects.count() == 0 and not [p for p in root.rglob("*") if p.is_file()]


# --- Collections ------------------------------------------------------------------------------


def test_the_release_sources_become_collections_with_their_codes() -> None:
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    # The data migration's own function, on annotation's models as they last were (before
    # Collection moved to the dataset app): a transactional test elsewhere may have emptied
    # the tables since migrate ran.
    migration = importlib.import_module("annotation.migrations.0013_collections")
    last = ("annotation", "0018_collection_ocr_language")
    then = MigrationLoader(connection).project_state(last).apps
    Collection.objects.all().delete()
    migration.add_release_collections(then, None)
    codes = set(Collection.objects.values_list("code", flat=True))
    assert codes == {"psa", "pak", "census", "arxiv"}
    listed = [code for code, _name in dataset_selectors.source_choices()]
    assert listed == ["psa", "pak", "census", "arxiv", "synthetic", "demo"]


def test_a_collection_code_cannot_break_table_ids(adjudicator) -> None:
    admin = UserFactory(role="admin")
    with pytest.raises(ApplicationError, match="hyphens"):
        dataset_services.collection_create(user=admin, code="qnpc--2024", name="Bad")
    with pytest.raises(IntegrityError):
        Collection.objects.create(code="Bad Code", name="Bad")


# --- Upload, provenance and dedupe ---------------------------------------------------------


def test_an_upload_keeps_its_provenance_and_refuses_the_same_file_twice(
    print_pdf, adjudicator, collection, _ingest_files: Path
) -> None:
    data = table_pdf(print_pdf, TOTAL_ROWS)
    document = upload(adjudicator, collection, data)
    assert document.number == 1
    # Opened by the ingest worker, not by the upload request.
    assert (document.status, document.page_count, document.pages.count()) == ("queued", None, 0)
    assert document.uploaded_by == adjudicator
    assert document.file_name == "report.pdf"
    assert len(document.sha256) == 64
    assert files.read(document.stored_path) == data
    services.document_extract(document_id=document.pk)
    document.refresh_from_db()
    assert document.page_count == 1 and document.pages.get().status == PageStatus.DONE

    with pytest.raises(services.UploadRefused) as refused:
        upload(UserFactory(role="adjudicator"), collection, data, name="copy.pdf")
    assert refused.value.code == "duplicate"
    assert "already ingested as document qnpc-2024--1" in refused.value.message
    assert refused.value.document == document
    assert Document.objects.count() == 1
    assert not list((_ingest_files / "incoming").iterdir())


def test_a_new_document_number_follows_the_collections_existing_tables(
    print_pdf, adjudicator
) -> None:
    psa = CollectionFactory(code="psa")
    TableFactory(id="psa--57--3")
    document = upload(adjudicator, psa, table_pdf(print_pdf, TOTAL_ROWS))
    assert document.number == 58


def test_annotators_need_the_ingest_permission(print_pdf, collection) -> None:
    from django.core.exceptions import PermissionDenied

    annotator = UserFactory(role="annotator")
    with pytest.raises(PermissionDenied):
        upload(annotator, collection, table_pdf(print_pdf, TOTAL_ROWS))
    from django.contrib.auth.models import Permission

    annotator.user_permissions.add(Permission.objects.get(codename="ingest_document"))
    annotator = type(annotator).objects.get(pk=annotator.pk)  # permissions are cached
    assert upload(annotator, collection, table_pdf(print_pdf, TOTAL_ROWS)).pk


# --- Bad input ------------------------------------------------------------------------------


def _encrypted(data: bytes) -> bytes:
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password="secret", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (
            lambda pdf: b"Region,2019\nNorth,1\n",
            "not_supported",
            "neither a PDF, a web page (HTML) nor a PNG or JPEG image, judging by its content",
        ),
        (lambda pdf: pdf[: len(pdf) // 2], "truncated", "truncated"),
        (lambda pdf: b"", "empty", "empty"),
    ],
    ids=["csv", "truncated", "empty"],
)
def test_bad_files_are_refused_at_upload_by_their_bytes_and_nothing_kept(
    print_pdf, adjudicator, collection, _ingest_files: Path, make, code: str, message: str
) -> None:
    with pytest.raises(services.UploadRefused) as refused:
        upload(adjudicator, collection, make(table_pdf(print_pdf, TOTAL_ROWS)), "x.pdf")
    assert refused.value.code == code
    assert message in refused.value.message
    assert nothing_kept(_ingest_files)


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (_encrypted, "encrypted", "needs a password"),
        (lambda pdf: b"%PDF-1.7\n" + b"\x00junk" * 500 + b"\n%%EOF\n", "corrupt", "damaged"),
        (
            lambda pdf: b"<html><body><p>No table here.</p></body></html>",
            "html_no_table",
            "no <table>",
        ),
    ],
    ids=["encrypted", "corrupt", "html-without-table"],
)
def test_files_that_cannot_be_opened_are_refused_by_the_worker_on_their_page(
    print_pdf, adjudicator, collection, _ingest_files: Path, make, code: str, message: str
) -> None:
    document = ingest(adjudicator, collection, make(table_pdf(print_pdf, TOTAL_ROWS)), "x.pdf")
    assert (document.status, document.refused_code) == ("refused", code)
    assert message in document.message
    # Nothing half-stored: no file, page or candidate.
    assert (document.stored_path, document.page_count) == ("", None)
    assert not document.pages.exists() and not document.candidates.exists()
    assert not [p for p in _ingest_files.rglob("*") if p.is_file()]
    client = Client()
    client.force_login(adjudicator)
    page = client.get(f"/ingest/documents/{document.pk}/")
    assert b"Refused" in page.content and escape(message).encode() in page.content


def test_over_the_byte_limit_is_refused(print_pdf, adjudicator, collection, _ingest_files) -> None:
    with override_settings(INGEST_MAX_BYTES=5000), pytest.raises(services.UploadRefused) as refused:
        upload(adjudicator, collection, table_pdf(print_pdf, TOTAL_ROWS))
    assert refused.value.code == "too_large"
    assert "INGEST_MAX_BYTES" in refused.value.message
    assert nothing_kept(_ingest_files)


def test_a_worker_that_cannot_find_the_file_fails_the_document_without_refusing_it(
    print_pdf, adjudicator, collection
) -> None:
    document = upload(adjudicator, collection, table_pdf(print_pdf, TOTAL_ROWS))
    files.remove(document.stored_path)  # a worker without the web server's files
    services.document_extract(document_id=document.pk)
    document.refresh_from_db()
    assert (document.status, document.refused_code) == ("failed", "")
    assert "INGEST_FILES_ROOT" in document.message


def test_over_the_page_limit_is_refused(print_pdf, adjudicator, collection, _ingest_files) -> None:
    data = pages_pdf(print_pdf, [TOTAL_ROWS, ROW_GROUPS])
    with override_settings(INGEST_MAX_PAGES=1):
        document = ingest(adjudicator, collection, data)
    assert (document.status, document.refused_code) == ("refused", "too_many_pages")
    assert "2 pages" in document.message
    assert not document.pages.exists()
    assert not [p for p in _ingest_files.rglob("*") if p.is_file()]


def test_a_pdf_with_only_an_owner_password_is_read(print_pdf, adjudicator, collection) -> None:
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(table_pdf(print_pdf, TOTAL_ROWS))))
    writer.encrypt(user_password="", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    document = ingest(adjudicator, collection, out.getvalue())
    assert document.candidates.get().machine_csv == TOTAL_ROWS


# --- Extraction ----------------------------------------------------------------------------


def test_extraction_finds_each_pages_tables_with_crops(print_pdf, adjudicator, collection) -> None:
    document = ingest(adjudicator, collection, pages_pdf(print_pdf, [NESTED_COLUMNS, TOTAL_ROWS]))
    assert document.status == "done" and document.pages_done == 2
    first, second = document.candidates.order_by("number")
    assert (first.page, first.number, first.machine_csv) == (1, 1, NESTED_COLUMNS)
    assert (second.page, second.number, second.machine_csv) == (2, 2, TOTAL_ROWS)
    assert first.strategy == "lines" and len(first.cell_boxes) > 10
    assert files.read(first.crop_path).startswith(b"\x89PNG")
    assert all(p.status == PageStatus.DONE and p.image_path for p in document.pages.all())
    # Running it again changes nothing: the pages are done.
    services.document_extract(document_id=document.pk)
    assert document.candidates.count() == 2


def test_a_failing_page_says_which_and_why_and_the_others_keep_their_tables(
    print_pdf, adjudicator, collection, monkeypatch
) -> None:
    document = upload(adjudicator, collection, pages_pdf(print_pdf, [TOTAL_ROWS, ROW_GROUPS]))
    real_call = PageRunner.call

    def slow_second_page(self, request):
        if request.get("page") == 2:
            raise PageTimeout
        return real_call(self, request)

    monkeypatch.setattr(PageRunner, "call", slow_second_page)
    services.document_extract(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == "done"
    assert "Page 2 took longer than 30 s" in document.message
    assert document.pages.get(number=2).status == PageStatus.FAILED
    assert document.candidates.get().machine_csv == TOTAL_ROWS


def test_a_document_without_tables_says_how_to_draw_one(print_pdf, adjudicator, collection) -> None:
    data = print_pdf("<!doctype html><html><body><p>Only a paragraph of prose.</p></body></html>")
    document = ingest(adjudicator, collection, data)
    assert document.candidates.count() == 0
    assert "No table was found" in document.message
    assert "draw a box around the table" in document.message


def test_a_scanned_page_is_read_through_ocr_and_a_drawn_box_too(
    print_pdf, adjudicator, collection
) -> None:
    document = ingest(adjudicator, collection, scanned_pdf(print_pdf, TOTAL_ROWS))
    page = document.pages.get()
    assert (page.status, page.ocr_language) == (PageStatus.DONE, "eng")
    found = document.candidates.get()
    assert found.machine_csv == TOTAL_ROWS
    assert "North 10 12 22" in found.ocr_text
    x0, top, x1, bottom = found.bbox
    candidate = services.candidate_draw(
        editor=adjudicator, document=document, page_number=1, bbox=[x0, top, x1, bottom]
    )
    assert candidate.machine_csv == TOTAL_ROWS and "South 20 22 42" in candidate.ocr_text
    assert candidate.crop_path and candidate.box_adjusted
    typed = state_of(TOTAL_ROWS)
    accepted = services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=typed, base_version=candidate.version
    )
    assert accepted.table.canonical_csv == TOTAL_ROWS


def test_a_web_pages_tables_are_candidates_with_their_spans(adjudicator, collection) -> None:
    page = (
        b"<!doctype html><html><body><table><tr><th rowspan=2>Region<th colspan=2>2019"
        b"<tr><th>Male<th>Female<tr><td>North<td>1<td>2</table>"
        b"<table><tr><td>a<td>b</table></body></html>"
    )
    document = ingest(adjudicator, collection, page, name="page.html")
    assert document.kind == "html"
    first, second = document.candidates.order_by("number")
    assert first.machine_csv == "Region,2019,__\n__,Male,Female\nNorth,1,2\n"
    assert (first.strategy, first.page, first.crop_path) == ("html", None, "")


def test_a_web_pages_table_takes_an_uploaded_image(adjudicator, collection) -> None:
    page = b"<html><body><table><tr><td>a<td>1<tr><td>b<td>2</table></body></html>"
    candidate = ingest(adjudicator, collection, page, name="page.html").candidates.get()
    client = Client()
    client.force_login(adjudicator)
    bad = client.post(
        f"/ingest/candidates/{candidate.pk}/image/", {"image": upload_file(b"no", "x.png")}
    )
    assert bad.status_code == 302
    candidate.refresh_from_db()
    assert candidate.crop_path == ""
    png = render_table_png("a,1\nb,2\n")
    client.post(f"/ingest/candidates/{candidate.pk}/image/", {"image": upload_file(png, "t.png")})
    candidate.refresh_from_db()
    accepted = services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state_of("a,1\nb,2\n"), base_version=1
    )
    assert accepted.table.image.read().startswith(b"\x89PNG")


# --- Review and accept ---------------------------------------------------------------------


@pytest.fixture
def candidate(print_pdf, adjudicator, collection) -> Candidate:
    document = ingest(adjudicator, collection, table_pdf(print_pdf, NESTED_COLUMNS))
    return document.candidates.get()


def test_accepting_makes_a_table_in_both_annotation_queues(candidate, adjudicator) -> None:
    corrected = NESTED_COLUMNS.replace("Al Rayyan", "Al-Rayyan")
    accepted = services.candidate_accept(
        editor=adjudicator,
        candidate=candidate,
        state=state_of(corrected, 3, 1),
        base_version=candidate.version,
    )
    table = accepted.table
    assert table.id == "qnpc-2024--1--1"
    assert table.source == "qnpc-2024"
    assert table.split == split_for_table(table.id)
    assert table.canonical_csv == corrected
    assert table.image.read().startswith(b"\x89PNG")
    # Provenance: document, page and box.
    assert (accepted.document.file_name, accepted.page, len(accepted.bbox)) == ("report.pdf", 1, 4)
    # The machine extraction beside the accepted one, scored.
    assert accepted.machine_csv == NESTED_COLUMNS
    assert accepted.exact is False and accepted.teds is None  # the ingest worker adds it
    assert 0.9 < services.candidate_score(candidate_id=accepted.pk) < 1
    accepted.refresh_from_db()
    assert 0.9 < accepted.teds < 1
    assert accepted.cell_recall == pytest.approx(32 / 33)  # one of 33 cells corrected
    annotator = UserFactory(role="annotator")
    assert annotation_selectors.property_queue_next(annotator=annotator) == table
    assert annotation_selectors.question_queue_next(annotator=annotator) == table


def test_an_accepted_table_is_a_real_table_everywhere(candidate, adjudicator) -> None:
    services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
    )
    table = Table.objects.get(pk="qnpc-2024--1--1")
    question = QuestionFactory(table=table)
    assert question in benchmark_questions(split="all", data_scope="real")
    assert question not in benchmark_questions(split="all", data_scope="synthetic")
    assert ("qnpc-2024", "QNPC Statistical Abstract 2024") in dataset_selectors.source_choices()
    assert Question.objects.filter(dataset_selectors.scope_filter("real")).count() == 1


def test_two_people_never_accept_the_same_candidate(candidate, adjudicator) -> None:
    other = UserFactory(role="adjudicator")
    services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
    )
    with pytest.raises(ConflictError, match="already accepted as qnpc-2024--1--1"):
        services.candidate_accept(
            editor=other, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
        )
    # A retried request by the same person returns what was accepted.
    again = services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
    )
    assert again.table_id == "qnpc-2024--1--1"
    assert Table.objects.filter(id__startswith="qnpc-2024").count() == 1


def test_the_database_refuses_a_second_candidate_on_one_table(candidate, adjudicator) -> None:
    services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
    )
    other = Candidate.objects.create(
        document=candidate.document,
        number=2,
        strategy="lines",
        machine_grid={},
        machine_csv="a\n",
    )
    other.status = CandidateStatus.ACCEPTED
    other.table = Table.objects.get()
    other.accepted_csv = "a\n"
    other.exact = True
    from django.utils import timezone

    other.decided_at = timezone.now()
    with pytest.raises(IntegrityError):
        other.save()


def test_a_rejection_needs_a_reason_and_is_final(candidate, adjudicator) -> None:
    with pytest.raises(ApplicationError, match="say why"):
        services.candidate_reject(editor=adjudicator, candidate=candidate, reason="  ")
    services.candidate_reject(
        editor=adjudicator, candidate=candidate, reason="a figure, not a table"
    )
    candidate.refresh_from_db()
    assert (candidate.status, candidate.reject_reason) == ("rejected", "a figure, not a table")
    with pytest.raises(ConflictError, match="rejected"):
        services.candidate_accept(
            editor=adjudicator, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
        )


def test_a_draft_from_before_a_reextraction_is_refused(candidate, adjudicator) -> None:
    result = services.candidate_draft_save(
        editor=adjudicator,
        candidate=candidate,
        state=state_of(NESTED_COLUMNS),
        base_version=1,
        client_ms=1000,
    )
    assert result.accepted
    late = services.candidate_draft_save(
        editor=adjudicator,
        candidate=candidate,
        state=state_of(NESTED_COLUMNS),
        base_version=1,
        client_ms=500,
    )
    assert not late.accepted  # a draft written earlier than the one kept
    x0, top, x1, bottom = candidate.bbox
    moved = services.candidate_reextract(
        editor=adjudicator,
        candidate=candidate,
        bbox=[x0 - 3, top - 3, x1 + 3, bottom + 3],
        strategy="auto",
    )
    assert moved.version == 2 and moved.box_adjusted
    assert moved.machine_csv == NESTED_COLUMNS
    with pytest.raises(ConflictError, match="extracted again"):
        services.candidate_draft_save(
            editor=adjudicator,
            candidate=candidate,
            state=state_of(NESTED_COLUMNS),
            base_version=1,
            client_ms=2000,
        )


def test_edits_that_overlap_or_leave_the_grid_are_refused(candidate, adjudicator) -> None:
    bad = {"n_rows": 2, "n_cols": 2, "cells": [[0, 0, 2, 2, "a"], [1, 1, 1, 1, "b"]]}
    with pytest.raises(ApplicationError, match="overlap"):
        services.candidate_accept(
            editor=adjudicator, candidate=candidate, state=bad, base_version=1
        )
    outside = {"n_rows": 1, "n_cols": 1, "cells": [[0, 0, 1, 3, "a"]]}
    with pytest.raises(ApplicationError, match="colspan"):
        services.candidate_accept(
            editor=adjudicator, candidate=candidate, state=outside, base_version=1
        )


# --- Pages and API ---------------------------------------------------------------------------


def test_the_upload_page_ingests_and_the_document_page_shows_progress(
    print_pdf, adjudicator, collection
) -> None:
    client = Client()
    client.force_login(adjudicator)
    data = table_pdf(print_pdf, TOTAL_ROWS)
    response = client.post(
        "/ingest/",
        {"collection": "qnpc-2024", "files": [upload_file(data, "a.pdf")]},
    )
    document = Document.objects.get()
    assert (
        response.status_code == 302 and response["Location"] == f"/ingest/documents/{document.pk}/"
    )
    page = client.get(f"/ingest/documents/{document.pk}/")
    assert b"waiting for the ingest worker to open the file" in page.content
    assert b"hx-trigger" in page.content
    again = client.post(
        "/ingest/", {"collection": "qnpc-2024", "files": [upload_file(data, "b.pdf")]}
    )
    assert again.status_code == 400
    assert b"already ingested as document qnpc-2024--1" in again.content
    services.document_extract(document_id=document.pk)
    page = client.get(f"/ingest/documents/{document.pk}/")
    assert b"qnpc-2024--1--1" in page.content and b"hx-trigger" not in page.content


def test_files_are_private_and_page_images_only_for_permitted_users(candidate, adjudicator) -> None:
    document = candidate.document
    outsider = Client()
    outsider.force_login(UserFactory(role="researcher"))
    insider = Client()
    insider.force_login(adjudicator)
    image = f"/ingest/documents/{document.pk}/pages/1.jpg"
    assert outsider.get(image).status_code == 403
    response = insider.get(image)
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert insider.get(f"/ingest/candidates/{candidate.pk}/crop.png").status_code == 200
    assert outsider.get(f"/media/{document.stored_path}").status_code == 404


def test_the_api_uploads_with_a_token_and_accepts(print_pdf, adjudicator, collection) -> None:
    token = Token.objects.create(user=adjudicator)
    client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    data = table_pdf(print_pdf, ROW_GROUPS)
    response = client.post(
        "/api/ingest/documents/", {"collection": "qnpc-2024", "file": [upload_file(data, "g.pdf")]}
    )
    assert response.status_code == 201, response.json()
    document_id = response.json()["results"][0]["document"]["id"]
    duplicate = client.post(
        "/api/ingest/documents/", {"collection": "qnpc-2024", "file": [upload_file(data, "g.pdf")]}
    )
    assert duplicate.status_code == 409
    assert duplicate.json()["results"][0]["document"]["id"] == document_id
    services.document_extract(document_id=document_id)
    detail = client.get(f"/api/ingest/documents/{document_id}/").json()
    candidate_id = detail["candidates"][0]["id"]
    work = client.get(f"/api/ingest/candidates/{candidate_id}/").json()
    assert work["state"]["n_cols"] == 3 and work["version"] == 1
    preview = client.post(
        "/api/ingest/preview/", {"state": work["state"]}, content_type="application/json"
    ).json()
    assert 'class="hct-group"' in preview["html"]
    saved = client.post(
        f"/api/ingest/candidates/{candidate_id}/save/",
        {"state": work["state"], "base_version": 1},
        content_type="application/json",
    )
    assert saved.status_code == 200, saved.json()
    assert saved.json()["scores"]["exact"] is True
    assert Table.objects.get(pk=saved.json()["table"]).canonical_csv == ROW_GROUPS
    quality = client.get("/api/ingest/quality/").json()
    assert quality["by_strategy"][0]["label"] == "Ruled lines"
    assert quality["overall"][0]["exact"] == 1.0


def test_the_api_refuses_users_without_the_permission(collection) -> None:
    client = Client()
    client.force_login(UserFactory(role="researcher"))
    assert client.get("/api/ingest/documents/").status_code == 403


def test_the_quality_page_shows_figures_per_collection_and_strategy(candidate, adjudicator) -> None:
    services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state_of(NESTED_COLUMNS), base_version=1
    )
    page = Client().get("/ingest/quality/")
    assert page.status_code == 200
    assert b"QNPC Statistical Abstract 2024" in page.content
    assert b"Ruled lines" in page.content


def test_the_command_ingests_files_into_a_collection(print_pdf, tmp_path: Path, collection) -> None:
    from django.core.management import call_command

    path = tmp_path / "abstract.pdf"
    path.write_bytes(table_pdf(print_pdf, TOTAL_ROWS))
    out = io.StringIO()
    call_command("ingest", str(path), "--collection", "QNPC Statistical Abstract 2024", stdout=out)
    assert "document qnpc-2024--1, 1 page, 1 table candidate (1 lines)" in out.getvalue()
    assert Candidate.objects.get().machine_csv == TOTAL_ROWS


def upload_file(data: bytes, name: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def test_beat_queues_again_an_extraction_whose_worker_died(
    print_pdf, adjudicator, collection, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    document = upload(adjudicator, collection, table_pdf(print_pdf, TOTAL_ROWS))
    long_ago = timezone.now() - timedelta(hours=1)
    Document.objects.filter(pk=document.pk).update(
        status="extracting", heartbeat_at=long_ago, attempts=1
    )
    queued: list[int] = []
    monkeypatch.setattr("ingest.jobs.enqueue_extraction", queued.append)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.documents_sweep() == 1
    assert queued == [document.pk]
    # Sent once: the next sweep finds it queued, not lost.
    assert services.documents_sweep() == 0 and queued == [document.pk]
    # The task claims it again and finishes what the dead worker left.
    services.document_extract(document_id=document.pk)
    document.refresh_from_db()
    assert (document.status, document.attempts) == ("done", 2)
    Document.objects.filter(pk=document.pk).update(
        status="extracting", heartbeat_at=long_ago, attempts=3
    )
    assert services.documents_sweep() == 0
    document.refresh_from_db()
    assert document.status == "failed" and "stopped 3 times" in document.message


def test_the_quality_page_is_linked_from_the_dataset_and_each_document(
    candidate, adjudicator
) -> None:
    # The dataset page is public: anyone finds how extraction does from there.
    assert 'href="/ingest/quality/"' in Client().get("/dataset/").content.decode()
    client = Client()
    client.force_login(adjudicator)
    document = client.get(candidate.document.get_absolute_url()).content.decode()
    assert 'href="/ingest/quality/"' in document
    assert 'href="/ingest/quality/"' in client.get("/ingest/").content.decode()


def test_the_review_goes_through_a_document_before_the_next_one(adjudicator, collection) -> None:
    def document(number: int) -> Document:
        return Document.objects.create(
            collection=collection,
            number=number,
            kind="pdf",
            file_name=f"{number}.pdf",
            sha256=f"{number:064d}",
            size_bytes=1,
        )

    grid = Grid.build(2, 2, [GridCell(r, c, 1, 1, f"{r}{c}") for r in (0, 1) for c in (0, 1)])

    def candidates(doc: Document, count: int) -> list[Candidate]:
        return [
            Candidate.objects.create(
                document=doc,
                number=n,
                strategy="lines",
                machine_grid=grid.as_json(),
                machine_csv=grid.to_canonical(),
            )
            for n in range(1, count + 1)
        ]

    earlier = candidates(document(1), 1)  # uploaded before, still waiting
    first, second = candidates(document(2), 3), candidates(document(3), 1)
    order = lambda c: selectors.next_pending(c)  # noqa: E731
    # From the middle of a document: the rest of it, the ones after first, then before.
    assert order(first[1]) == first[2].pk
    assert order(first[2]) == first[0].pk
    # A document done: the next one, then the earlier ones.
    for done in first[:2]:
        services.candidate_reject(editor=adjudicator, candidate=done, reason="a figure")
    assert order(first[2]) == second[0].pk
    assert order(second[0]) == earlier[0].pk
    # After rejecting, the page goes on to the next candidate.
    client = Client()
    client.force_login(adjudicator)
    response = client.post(f"/ingest/candidates/{first[2].pk}/reject/", {"reason": "a figure"})
    assert response["Location"] == second[0].get_absolute_url()
