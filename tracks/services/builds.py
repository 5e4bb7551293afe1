"""Builds of the tracks' items as background work, on the platform's one job lifecycle
(``plumbing.jobs``, kind ``tracks.jobs.TRACK_ITEM_BUILD``): queued, claimed by one worker,
building with progress and a heartbeat, then done with their counts or failed with the
reason. A build whose worker went away is failed by the sweeps worker; the next one keeps
every table drawn already (``items.extraction_synthetic_built``)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from plumbing import jobs
from plumbing.errors import ApplicationError
from tracks import selectors
from tracks.jobs import TRACK_ITEM_BUILD, enqueue_build
from tracks.models import BuildStatus, ItemBuild
from tracks.permissions import BUILDING_ITEMS
from tracks.services.items import BuildCounts, Report, items_build
from tracks.signals import items_built

# Of a build's progress bar: the items up to here, then what follows them (the baselines).
ITEMS_SHARE = 80


def item_build_start(*, user: Any | None, enqueue: bool = True) -> ItemBuild:
    """Record a queued build (``enqueue``: for the worker). One at a time: refused while
    another is queued or building. ``user`` None: the server's operator (the command)."""
    if user is not None:
        BUILDING_ITEMS.check(user)
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
        enqueue_build(build.pk)
    return build


def item_build_run(
    *, build_id: int, report: Report | None = None, tracks: Collection[str] | None = None
) -> BuildCounts | None:
    """Build the items of a queued build (``tracks``: only theirs), then let the boards'
    baselines follow them (``signals.items_built``: the leaderboard makes them again on the
    new test items, queued for scoring). Safe to run twice: only the run that claims it
    works, and only while it holds it. None when there was nothing to claim."""
    attempt = jobs.claim(TRACK_ITEM_BUILD, build_id)
    if attempt is None:
        return None

    def progress(percent: int, stage: str) -> None:
        jobs.beat(
            TRACK_ITEM_BUILD, build_id, attempt, progress=min(percent, 100), stage=stage[:200]
        )
        if report:
            report(percent, stage)

    def after_items(fraction: float, stage: str) -> None:
        progress(ITEMS_SHARE + min(int(fraction * (99 - ITEMS_SHARE)), 99 - ITEMS_SHARE), stage)

    try:
        with jobs.heartbeat(TRACK_ITEM_BUILD, build_id, attempt):
            counts = items_build(
                report=lambda percent, stage: progress(percent * ITEMS_SHARE // 100, stage),
                tracks=tracks,
            )
            built = sorted(tracks) if tracks is not None else None
            answers = items_built.send(sender=ItemBuild, tracks=built, report=after_items)
            counts.baselines = sum(n for _, n in answers if isinstance(n, int))
    except Exception as exc:
        jobs.mine(TRACK_ITEM_BUILD, build_id, attempt).update(
            status=BuildStatus.FAILED,
            active=None,
            finished_at=timezone.now(),
            error=f"The build failed: {exc}"[:2000],
        )
        raise ApplicationError(f"The build failed: {exc}") from exc
    jobs.mine(TRACK_ITEM_BUILD, build_id, attempt).update(
        status=BuildStatus.DONE,
        active=None,
        progress=100,
        counts=counts.as_dict(),
        finished_at=timezone.now(),
    )
    return counts


def item_builds_sweep() -> list[int]:
    """Fail the builds whose worker stopped (no heartbeat, or queued and never taken, for
    TRACK_BUILD_STALE_SECONDS): the sweeps worker does it for every job kind; a new build
    does it first, so one stale build never blocks the next."""
    return jobs.sweep(TRACK_ITEM_BUILD).failed
