"""The leaderboard's background jobs (``plumbing.jobs``): scoring a submission, a re-scoring
of many, and an inference run. Registered when the app is ready."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from hctqa.core.wording import counted
from leaderboard.models import InferenceRun, Rescore, RunStatus, Status, Submission
from plumbing import jobs


def enqueue_scoring(submission_id: int) -> None:
    from leaderboard.tasks import score_submission

    transaction.on_commit(lambda: score_submission.delay(submission_id))


def enqueue_rescore(rescore_id: int) -> None:
    from leaderboard.tasks import rescore_submissions

    transaction.on_commit(lambda: rescore_submissions.delay(rescore_id))


def enqueue_run(run_id: int) -> None:
    from leaderboard.tasks import run_inference

    transaction.on_commit(lambda: run_inference.delay(run_id))


def _tell_owner(submission_id: int) -> None:
    from leaderboard.services.notices import submission_outcome_notify

    submission_outcome_notify(submission_id=submission_id)


def _tell_runner(run_id: int) -> None:
    from leaderboard.services.notices import inference_run_failed_notify

    inference_run_failed_notify(run_id=run_id)


# Scoring beats every few seconds: a silent one lost its worker. A submission waiting in a
# live re-scoring is that re-scoring's to score, however long the queue before it: the
# re-scoring's own heartbeat is watched instead. A queued one that waited too long (its
# message may be lost) has used an attempt too.
SUBMISSION_SCORING = jobs.register(
    jobs.JobKind(
        name="submission-scoring",
        model=Submission,
        queued=Status.QUEUED,
        running=Status.SCORING,
        failed=Status.FAILED,
        stale_after=lambda: settings.SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS,
        resend_after=lambda: settings.SUBMISSION_STUCK_AFTER_SECONDS,
        max_attempts=lambda: settings.SUBMISSION_MAX_ATTEMPTS,
        gave_up=lambda attempts: (
            f"Scoring did not finish after {counted(attempts, 'attempt')}; score it again to "
            "try again"
        ),
        enqueue=enqueue_scoring,
        claim_by="attempts",
        takeover=False,
        claim_fields={"progress": 5, "error": ""},
        requeue_fields={"started_at": None, "heartbeat_at": None},
        fail_fields={"progress": 100},
        resend_only=~Q(rescore__status__in=[RunStatus.QUEUED, RunStatus.RUNNING]),
        lost_counts=True,
        finished_field=None,
        on_failed=_tell_owner,
    )
)

# A slice at a time; one that lost its worker, or was never queued (a data migration makes
# them), goes back to the queue: a re-scoring never fails (its submissions do).
RESCORE = jobs.register(
    jobs.JobKind(
        name="rescore",
        model=Rescore,
        queued=RunStatus.QUEUED,
        running=RunStatus.RUNNING,
        failed=RunStatus.FAILED,
        stale_after=lambda: settings.SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS,
        resend_after=lambda: settings.SUBMISSION_STUCK_AFTER_SECONDS,
        resend_unqueued=True,
        enqueue=enqueue_rescore,
        takeover=False,
        keep_started=True,
    )
)

# Resumed after a lost worker up to INFERENCE_MAX_AUTO_RESUMES times; a run that ends loses
# its researcher's key in the same update.
INFERENCE_RUN = jobs.register(
    jobs.JobKind(
        name="inference-run",
        model=InferenceRun,
        queued=RunStatus.QUEUED,
        running=RunStatus.RUNNING,
        failed=RunStatus.FAILED,
        stale_after=lambda: settings.INFERENCE_STALE_AFTER_SECONDS,
        resend_after=lambda: settings.INFERENCE_QUEUED_RESEND_SECONDS,
        max_attempts=lambda: settings.INFERENCE_MAX_AUTO_RESUMES,
        gave_up=lambda attempts: (
            f"The worker stopped {counted(attempts, 'time')} during this run; resume it to "
            "try again"
        ),
        enqueue=enqueue_run,
        keep_started=True,
        claim_fields={"error": ""},
        fail_fields={"sealed_api_key": ""},
        cancel_flag="cancel_requested",
        cancelled=RunStatus.CANCELLED,
        on_failed=_tell_runner,
    )
)


def _kept_uploads_expire() -> int:
    from leaderboard.services import kept_uploads_expire

    return kept_uploads_expire()


jobs.register_chore("kept-uploads-expired", _kept_uploads_expire)
