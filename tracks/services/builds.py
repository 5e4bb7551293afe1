"""Builds of the tracks' items as background work: queued, claimed by one worker, building
with progress and a heartbeat, then done with their counts or failed with the reason. A
build whose worker went away is failed by the sweeper; the next one keeps every table drawn
already (``items.extraction_synthetic_built``)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from hctqa import heartbeat
from hctqa.errors import ApplicationError
from tracks import selectors
from tracks.models import BuildStatus, ItemBuild
from tracks.services.items import BuildCounts, Report, items_build


def item_build_start(*, user: Any | None, enqueue: bool = True) -> ItemBuild:
    """Record a queued build (``enqueue``: for the worker). One at a time: refused while
    another is queued or building. ``user`` None: the server's operator (the command)."""
    if user is not None and not selectors.can_build(user):
        raise PermissionDenied("Only admins build the tracks' items")
    item_builds_sweep()
    running = selectors.active_build()
    if running is not None:
        raise ApplicationError(
            f"The items are being built already ({running.progress}%, {running.stage or 'queued'})"
        )
    try:
        with transaction.atomic():
            build = ItemBuild.objects.create(
                created_by=user if user is not None and user.is_authenticated else None,
                queued_at=timezone.now(),
            )
    except IntegrityError:
        raise ApplicationError("The items are being built already") from None
    if enqueue:
        from tracks.tasks import build_track_items

        transaction.on_commit(lambda: build_track_items.delay(build.pk))
    return build


def _stale_before() -> Any:
    return timezone.now() - timedelta(seconds=settings.TRACK_BUILD_STALE_SECONDS)


def item_build_run(
    *, build_id: int, report: Report | None = None, tracks: Collection[str] | None = None
) -> BuildCounts | None:
    """Build the items of a queued build (``tracks``: only theirs). Safe to run twice: only
    the run that claims it works, and only while it holds it. None when there was nothing
    to claim."""
    now = timezone.now()
    claimed = ItemBuild.objects.filter(pk=build_id, status=BuildStatus.QUEUED).update(
        status=BuildStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        stage="Starting",
    )
    if not claimed:
        return None
    mine = ItemBuild.objects.filter(pk=build_id, status=BuildStatus.RUNNING)

    def progress(percent: int, stage: str) -> None:
        mine.update(progress=min(percent, 100), stage=stage[:200], heartbeat_at=timezone.now())
        if report:
            report(percent, stage)

    def beat() -> int:
        return mine.update(heartbeat_at=timezone.now())

    try:
        with heartbeat.beating(beat, f"track-item-build-{build_id}"):
            counts = items_build(report=progress, tracks=tracks)
    except Exception as exc:
        mine.update(
            status=BuildStatus.FAILED,
            active=None,
            finished_at=timezone.now(),
            error=f"The build failed: {exc}"[:2000],
        )
        raise ApplicationError(f"The build failed: {exc}") from exc
    mine.update(
        status=BuildStatus.DONE,
        active=None,
        progress=100,
        counts=counts.as_dict(),
        finished_at=timezone.now(),
    )
    return counts


def item_builds_sweep() -> list[int]:
    """Fail the builds whose worker stopped (no heartbeat, or queued and never taken, for
    TRACK_BUILD_STALE_SECONDS)."""
    cutoff = _stale_before()
    stale = Q(status=BuildStatus.RUNNING, heartbeat_at__lt=cutoff) | Q(
        status=BuildStatus.QUEUED, queued_at__lt=cutoff
    )
    failed = []
    for pk in ItemBuild.objects.filter(stale).values_list("pk", flat=True):
        if ItemBuild.objects.filter(stale, pk=pk).update(
            status=BuildStatus.FAILED,
            active=None,
            finished_at=timezone.now(),
            error="The build stopped: its worker went away. Build again: tables drawn already "
            "are kept.",
        ):
            failed.append(pk)
    return failed
