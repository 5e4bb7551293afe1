"""Runs whose worker died, or whose queue message was lost: found by the sweeper (a periodic
task) and queued again, failed or cancelled."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from hctqa.core.wording import counted
from leaderboard.models import InferenceRun, RunStatus
from leaderboard.services.inference.runs import enqueue_run, stale_before
from leaderboard.services.notices import inference_run_failed_notify


@dataclass(frozen=True)
class InferenceSweepResult:
    requeued: list[int]
    failed: list[int]
    cancelled: list[int]


def inference_run_sweep(*, now: datetime | None = None) -> InferenceSweepResult:
    """Runs whose worker died (running, heartbeat stale): queued again, failed after
    INFERENCE_MAX_AUTO_RESUMES tries, or cancelled if a cancel was waiting. Conditional
    updates: two sweepers cannot both act on one run."""
    now = now or timezone.now()
    stale = Q(status=RunStatus.RUNNING, heartbeat_at__lt=stale_before(now))
    result = InferenceSweepResult([], [], [])
    # Queued so long that its message was probably lost (the broker restarted, retries ran
    # out): send another. A duplicate is harmless, since only one executor can claim a run.
    forgotten = InferenceRun.objects.filter(
        status=RunStatus.QUEUED,
        queued_at__lt=now - timedelta(seconds=settings.INFERENCE_QUEUED_RESEND_SECONDS),
    )
    for pk in forgotten.values_list("pk", flat=True):
        with transaction.atomic():
            if forgotten.filter(pk=pk).update(queued_at=now):
                result.requeued.append(pk)
                enqueue_run(pk)
    for pk, attempts, cancel in InferenceRun.objects.filter(stale).values_list(
        "pk", "attempts", "cancel_requested"
    ):
        still = InferenceRun.objects.filter(stale, pk=pk)
        if cancel:
            if still.update(
                status=RunStatus.CANCELLED, lease="", finished_at=now, sealed_api_key=""
            ):
                result.cancelled.append(pk)
        elif attempts >= settings.INFERENCE_MAX_AUTO_RESUMES:
            with transaction.atomic():
                if still.update(
                    status=RunStatus.FAILED,
                    lease="",
                    finished_at=now,
                    sealed_api_key="",
                    error=f"The worker stopped {counted(attempts, 'time')} during this run; "
                    "resume it to try again",
                ):
                    result.failed.append(pk)
                    inference_run_failed_notify(run_id=pk)
        else:
            with transaction.atomic():
                if still.update(status=RunStatus.QUEUED, lease="", queued_at=now):
                    result.requeued.append(pk)
                    enqueue_run(pk)
    return result
