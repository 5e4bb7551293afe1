"""The tracks' background job (``plumbing.jobs``): building the items from the dataset. It is
never queued again: a build whose worker went away (no heartbeat, or queued and never taken,
for TRACK_BUILD_STALE_SECONDS) is failed by the sweeps worker, and the next build keeps every
table drawn already (``services.items.extraction_synthetic_built``)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from plumbing import jobs
from tracks.models import BuildStatus, ItemBuild


def enqueue_build(build_id: int) -> None:
    from tracks.tasks import build_track_items

    transaction.on_commit(lambda: build_track_items.delay(build_id))


TRACK_ITEM_BUILD = jobs.register(
    jobs.JobKind(
        name="track-item-build",
        model=ItemBuild,
        queued=BuildStatus.QUEUED,
        running=BuildStatus.RUNNING,
        failed=BuildStatus.FAILED,
        stale_after=lambda: settings.TRACK_BUILD_STALE_SECONDS,
        resend_after=lambda: settings.TRACK_BUILD_STALE_SECONDS,
        max_attempts=lambda: 0,
        gave_up=lambda attempts: (
            "The build stopped: its worker went away. Build again: tables drawn already are kept."
        ),
        enqueue=enqueue_build,
        claim_by="attempts",
        takeover=False,
        claim_fields={"stage": "Starting"},
        fail_fields={"active": None},
    )
)
