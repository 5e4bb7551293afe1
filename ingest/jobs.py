"""Ingest's background job (``plumbing.jobs``): extracting an uploaded document, page by page,
and the chore that resends the lost scorings of accepted candidates."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from hctqa.core.wording import counted
from ingest.models import Candidate, CandidateStatus, Document, DocumentStatus
from plumbing import jobs


def enqueue_extraction(document_id: int, countdown: float = 0) -> None:
    from ingest.tasks import extract_document

    if countdown > 0:
        extract_document.apply_async((document_id,), countdown=countdown)
    else:
        extract_document.delay(document_id)


def enqueue_candidate_scoring(candidate_id: int) -> None:
    from ingest.tasks import score_candidate

    score_candidate.delay(candidate_id)


# A document queued again (its pages done stay done) or failed after INGEST_MAX_ATTEMPTS
# stops; its message says why. One that gave way waits for its ``queued_at``, in the future.
DOCUMENT_EXTRACTION = jobs.register(
    jobs.JobKind(
        name="document-extraction",
        model=Document,
        queued=DocumentStatus.QUEUED,
        running=DocumentStatus.EXTRACTING,
        failed=DocumentStatus.FAILED,
        stale_after=lambda: settings.INGEST_STALE_SECONDS,
        resend_after=lambda: settings.INGEST_QUEUED_RESEND_SECONDS,
        max_attempts=lambda: settings.INGEST_MAX_ATTEMPTS,
        gave_up=lambda attempts: (
            f"Extraction stopped {counted(attempts, 'time')} without finishing; the pages done "
            "so far keep their tables."
        ),
        # Looked up when called, so a test can stand in for the queue.
        enqueue=lambda document_id: enqueue_extraction(document_id),
        claim_by="attempts",
        error_field="message",
    )
)


def candidate_scores_resend() -> int:
    """Scores (TEDS) of accepted candidates whose task was lost: sent again once per
    INGEST_QUEUED_RESEND_SECONDS at most (the cache remembers the sending), not at every
    sweep while a long extraction runs. Returns how many were sent."""
    resend = timezone.now() - timezone.timedelta(seconds=settings.INGEST_QUEUED_RESEND_SECONDS)
    unscored = Candidate.objects.filter(
        status=CandidateStatus.ACCEPTED, teds__isnull=True, decided_at__lt=resend
    ).values_list("pk", flat=True)
    sent = 0
    for candidate_id in unscored:
        if cache.add(
            f"ingest-score-resent:{candidate_id}", 1, settings.INGEST_QUEUED_RESEND_SECONDS
        ):
            enqueue_candidate_scoring(candidate_id)
            sent += 1
    return sent


jobs.register_chore("candidate-scores-resent", candidate_scores_resend)
