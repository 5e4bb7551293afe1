"""Runs whose worker died, or whose queue message was lost: found by the sweeper (a periodic
task) and queued again, failed or cancelled (``plumbing.jobs.sweep``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from leaderboard.jobs import INFERENCE_RUN
from plumbing import jobs


@dataclass(frozen=True)
class InferenceSweepResult:
    requeued: list[int]
    failed: list[int]
    cancelled: list[int]


def inference_run_sweep(*, now: datetime | None = None) -> InferenceSweepResult:
    """Runs whose worker died (running, heartbeat stale): queued again, failed after
    INFERENCE_MAX_AUTO_RESUMES tries, or cancelled if a cancel was waiting; runs queued so
    long that their message was probably lost (INFERENCE_QUEUED_RESEND_SECONDS) are sent
    again (a duplicate is harmless: only one executor can claim a run)."""
    swept = jobs.sweep(INFERENCE_RUN, now=now)
    return InferenceSweepResult(swept.requeued, swept.failed, swept.cancelled)
