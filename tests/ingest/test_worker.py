"""Extraction runs on the ingest queue in a real Celery worker, page by page."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ingest import services
from ingest.models import Document
from tests.factories import CollectionFactory, UserFactory
from tests.ingest.pdfs import NESTED_ROWS, TOTAL_ROWS, pages_pdf

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def shared_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The worker process reads the uploads where this process keeps them."""
    monkeypatch.setenv("INGEST_FILES_ROOT", str(tmp_path / "ingest"))
    return tmp_path / "ingest"


def test_an_upload_is_extracted_by_the_ingest_worker(
    print_pdf, shared_files: Path, celery_worker_process
) -> None:
    user = UserFactory(role="adjudicator")
    collection = CollectionFactory(code="census")
    data = pages_pdf(print_pdf, [TOTAL_ROWS, NESTED_ROWS])
    document = services.document_upload(
        user=user, collection=collection, file_name="census.pdf", chunks=[data]
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        document.refresh_from_db()
        if not document.is_working:
            break
        time.sleep(0.3)
    assert document.status == "done", document.message
    assert document.pages_done == 2
    assert list(document.candidates.values_list("machine_csv", flat=True)) == [
        TOTAL_ROWS,
        NESTED_ROWS,
    ]
    assert Document.objects.get(pk=document.pk).attempts == 1
