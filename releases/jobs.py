"""Releases' background jobs (``plumbing.jobs``): building a release and pushing an edition to
the Hub. Neither is queued again: one whose worker went away is failed, with what it left
half-written removed, when the next one starts (a queued build waits behind the default
queue's other work, so it is not swept while it waits)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from plumbing import jobs
from releases.models import BuildStatus, PushStatus, ReleaseBuild, ReleasePush


def enqueue_build(build_id: int) -> None:
    from releases.tasks import build_release

    transaction.on_commit(lambda: build_release.delay(build_id))


def enqueue_push(push_id: int) -> None:
    from releases.tasks import push_release

    transaction.on_commit(lambda: push_release.delay(push_id))


def _leftovers_remove(build_id: int) -> None:
    from releases.services import build_leftovers_remove

    build_leftovers_remove(ReleaseBuild.objects.get(pk=build_id))


# No heartbeat for RELEASE_BUILD_STALE_SECONDS (queued ones count from when they were
# queued): failed, and what it left half-written removed.
RELEASE_BUILD = jobs.register(
    jobs.JobKind(
        name="release-build",
        model=ReleaseBuild,
        queued=BuildStatus.QUEUED,
        running=BuildStatus.BUILDING,
        failed=BuildStatus.FAILED,
        stale_after=lambda: settings.RELEASE_BUILD_STALE_SECONDS,
        resend_after=lambda: settings.RELEASE_BUILD_STALE_SECONDS,
        sent_field="created_at",
        max_attempts=lambda: 0,
        gave_up=lambda attempts: "The build stopped: its worker went away; cut the release again",
        enqueue=enqueue_build,
        claim_by="attempts",
        claim_fields={"stage": "Starting", "error": "", "progress": 0},
        fail_fields={"active": None},
        on_failed=_leftovers_remove,
        periodic=False,
    )
)

# A push runs in one task, which the worker stops after CELERY_TASK_TIME_LIMIT: one started
# (or queued) longer ago than that went away with its worker.
RELEASE_PUSH = jobs.register(
    jobs.JobKind(
        name="release-push",
        model=ReleasePush,
        queued=PushStatus.QUEUED,
        running=PushStatus.PUSHING,
        failed=PushStatus.FAILED,
        stale_after=lambda: settings.CELERY_TASK_TIME_LIMIT + 60,
        stale_field="started_at",
        resend_after=lambda: settings.CELERY_TASK_TIME_LIMIT + 60,
        sent_field="created_at",
        max_attempts=lambda: 0,
        gave_up=lambda attempts: "The push stopped: its worker went away; push again",
        enqueue=enqueue_push,
        claim_by="attempts",
        claim_fields={"stage": "Starting", "error": ""},
        periodic=False,
    )
)
