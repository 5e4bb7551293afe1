"""Annotation's background jobs (``plumbing.jobs``): question generation runs and synthetic
generation runs. Neither is swept: a run whose worker died is taken over by the next claim
once its heartbeat is silent, and an admin resumes a generation run from its page."""

from __future__ import annotations

from datetime import timedelta

from annotation.models import GenerationRun, SyntheticRun
from plumbing import jobs
from plumbing.jobs import RunStatus

# A running generation run whose worker has not reported for this long is taken to be dead.
GENERATION_STALE_AFTER = timedelta(minutes=5)
SYNTHETIC_STALE_AFTER = timedelta(minutes=10)


def enqueue_generation(run_id: int) -> None:
    from annotation.tasks import generate_questions

    generate_questions.delay(run_id)


def enqueue_synthetic(run_id: int) -> None:
    from annotation.tasks import synthetic_generation

    synthetic_generation.delay(run_id)


GENERATION_RUN = jobs.register(
    jobs.JobKind(
        name="generation-run",
        model=GenerationRun,
        queued=RunStatus.QUEUED,
        running=RunStatus.RUNNING,
        failed=RunStatus.FAILED,
        stale_after=GENERATION_STALE_AFTER.total_seconds,
        enqueue=enqueue_generation,
        claim_by="",
        periodic=False,
    )
)

SYNTHETIC_RUN = jobs.register(
    jobs.JobKind(
        name="synthetic-run",
        model=SyntheticRun,
        queued=RunStatus.QUEUED,
        running=RunStatus.RUNNING,
        failed=RunStatus.FAILED,
        stale_after=SYNTHETIC_STALE_AFTER.total_seconds,
        enqueue=enqueue_synthetic,
        claim_by="",
        keep_started=True,
        claim_fields={"error": ""},
        periodic=False,
    )
)
