"""Issue 32, item 2: the ingest worker's time is bounded per person and shared fairly. A PDF
of 500 blank pages took 412 s of OCR; one account could queue seven hours of worker time an
hour, ahead of everyone else's pages. Blank pages are now skipped before OCR, each person's
documents may take INGEST_SECONDS_PER_HOUR of worker time an hour, and an extraction gives
way to a waiting document of someone who has used less of the hour."""

from __future__ import annotations

from collections import deque
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from dataset.models import Collection
from ingest import services
from ingest.models import Document, DocumentPage, DocumentStatus, PageStatus
from tests.factories import UserFactory
from tests.ingest.pdfs import blank_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def collection() -> Collection:
    return Collection.objects.create(code="web-2024", name="Reports 2024")


def upload(user, collection: Collection, data: bytes, name: str) -> Document:
    return services.document_upload(
        user=user, collection=collection, file_name=name, chunks=[data], enqueue=False
    )


def worked_earlier(user, collection: Collection, seconds: float, minutes_ago: int = 10) -> None:
    """Pages of ``user``'s read ``minutes_ago``, ``seconds`` of worker time in all."""
    document = Document.objects.create(
        collection=collection,
        number=900 + Document.objects.count(),
        kind="pdf",
        file_name="earlier.pdf",
        sha256=f"{Document.objects.count():064d}",
        size_bytes=1,
        stored_path="documents/x.pdf",
        uploaded_by=user,
        status=DocumentStatus.DONE,
        page_count=1,
        pages_done=1,
    )
    DocumentPage.objects.create(
        document=document,
        number=1,
        status=PageStatus.DONE,
        seconds=seconds,
        finished_at=timezone.now() - timedelta(minutes=minutes_ago),
    )


class Queue:
    """The ingest queue as one worker sees it: first in, first out."""

    def __init__(self, monkeypatch) -> None:
        self.messages: deque[tuple[int, float]] = deque()
        monkeypatch.setattr(
            "ingest.jobs.enqueue_extraction",
            lambda pk, countdown=0: self.messages.append((pk, countdown)),
        )

    def run(self, django_capture_on_commit_callbacks) -> list[tuple[int, str]]:
        """Run the messages due now, in order, as the worker would; what each run returned."""
        ran = []
        while self.messages and self.messages[0][1] == 0:
            pk, _ = self.messages.popleft()
            with django_capture_on_commit_callbacks(execute=True):
                ran.append((pk, services.document_extract(document_id=pk)))
        return ran


def test_blank_pages_are_not_read_through_ocr(collection) -> None:
    user = UserFactory(role="adjudicator")
    document = upload(user, collection, blank_pdf(3), "blank.pdf")
    assert services.document_extract(document_id=document.pk) == DocumentStatus.DONE
    pages = list(document.pages.order_by("number"))
    assert [p.status for p in pages] == [PageStatus.NO_TEXT] * 3
    # Without the check each went through OCR: ocr_language set, "OCR found no text".
    assert all(p.ocr_language == "" and p.message == services.BLANK_MESSAGE for p in pages)
    assert all(p.finished_at is not None and p.seconds is not None for p in pages)


@override_settings(INGEST_SLICE_SECONDS=5)
def test_one_persons_backlog_does_not_hold_anothers_page(
    collection, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    heavy, light = UserFactory(role="adjudicator"), UserFactory(role="adjudicator")
    worked_earlier(heavy, collection, seconds=120)  # heavy has used two minutes this hour
    queue = Queue(monkeypatch)
    backlog = [upload(heavy, collection, blank_pdf(4, tag=str(i)), f"b{i}.pdf") for i in range(3)]
    page = upload(light, collection, blank_pdf(1, tag="light"), "one.pdf")
    for document in [*backlog, page]:  # queued in upload order, the light one last
        queue.messages.append((document.pk, 0))
    ran = queue.run(django_capture_on_commit_callbacks)
    # Each of the backlog's documents gives way at once; the light person's page is read
    # next; then the backlog, which had gone back to the end of the queue.
    assert ran[:4] == [(d.pk, "queued") for d in backlog] + [(page.pk, "done")]
    assert all(status == "done" for _, status in ran[4:])
    assert {pk for pk, _ in ran[4:]} == {d.pk for d in backlog}
    waited = Document.objects.get(pk=backlog[0].pk)
    assert waited.status == "done" and waited.pages_done == 4
    assert waited.message == services.NO_TABLE_MESSAGE  # the wait it was told of is over
    # Giving way is no failed attempt (the sweeper fails a document after a few of those).
    assert waited.attempts == 1


@override_settings(INGEST_SECONDS_PER_HOUR=100)
def test_a_person_past_the_hours_budget_waits_and_is_told_when(
    collection, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    heavy, light = UserFactory(role="adjudicator"), UserFactory(role="adjudicator")
    worked_earlier(heavy, collection, seconds=60, minutes_ago=50)
    worked_earlier(heavy, collection, seconds=50, minutes_ago=10)
    queue = Queue(monkeypatch)
    late = upload(heavy, collection, blank_pdf(2, tag="late"), "late.pdf")
    other = upload(light, collection, blank_pdf(2, tag="other"), "other.pdf")
    queue.messages.extend([(late.pk, 0), (other.pk, 0)])
    assert queue.run(django_capture_on_commit_callbacks) == [
        (late.pk, "queued"),
        (other.pk, "done"),
    ]
    late.refresh_from_db()
    assert late.status == "queued" and late.page_count is None  # not even opened yet
    assert "ingest work for this hour (100 s, INGEST_SECONDS_PER_HOUR) is used" in late.message
    # It goes on once the page read 50 minutes ago is an hour old: in about 10 minutes.
    (message,) = queue.messages
    assert message[0] == late.pk and 9 * 60 < message[1] <= 10 * 60
    # The sweeper does not send it again meanwhile.
    assert services.documents_sweep() == 0
    # The upload page shows the budget used, and when the pages go on.
    client = Client()
    heavy.user_permissions.add(*_ingest_permission())
    client.force_login(heavy)
    page = client.get("/ingest/").content.decode()
    assert "Your ingest work this hour: 110 s of 100 s" in page and "all used" in page


def test_the_upload_page_shows_what_is_left(collection) -> None:
    user = UserFactory(role="adjudicator")
    worked_earlier(user, collection, seconds=42)
    worked_earlier(user, collection, seconds=500, minutes_ago=61)  # over an hour ago
    client = Client()
    client.force_login(user)
    page = client.get("/ingest/").content.decode()
    assert "Your ingest work this hour: 42 s of 1,800 s of worker time (1,758 s left)" in page


def _ingest_permission():
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(codename="ingest_document")
