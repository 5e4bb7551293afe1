"""The one job lifecycle (plumbing.jobs): claims, heartbeats, the stale test, hand-backs and
the sweep, as every kind of job uses them, and the registry the sweeps worker sweeps."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from plumbing import jobs
from releases.jobs import RELEASE_BUILD
from releases.models import BuildStatus, ReleaseBuild

pytestmark = pytest.mark.django_db


def _build(**fields) -> ReleaseBuild:
    return ReleaseBuild.objects.create(version="1.0", title="One", **fields)


def test_every_kind_registers_itself_and_the_sweeps_take_the_periodic_ones() -> None:
    by_name = {k.name: k for k in jobs.kinds()}
    assert set(by_name) == {
        "submission-scoring",
        "rescore",
        "inference-run",
        "document-extraction",
        "generation-run",
        "synthetic-run",
        "release-build",
        "release-push",
        "track-item-build",
    }
    periodic = {name for name, kind in by_name.items() if kind.periodic}
    assert periodic == {
        "submission-scoring",
        "rescore",
        "inference-run",
        "document-extraction",
        "track-item-build",
    }
    done = jobs.sweep_all()
    assert set(done) == periodic | {"kept-uploads-expired", "candidate-scores-resent"}
    assert done["inference-run"] == {"requeued": [], "failed": [], "cancelled": []}


def test_a_job_is_claimed_once_and_a_silent_one_is_taken_over() -> None:
    build = _build()
    first = jobs.claim(RELEASE_BUILD, build.pk)
    assert first == 1
    assert jobs.claim(RELEASE_BUILD, build.pk) is None  # a second delivery finds it taken
    build.refresh_from_db()
    assert (build.status, build.stage, build.attempts) == (BuildStatus.BUILDING, "Starting", 1)
    assert jobs.mine(RELEASE_BUILD, build.pk, first).exists()
    # Its worker went silent: the next claim takes it over, and the first can write no more.
    silent = timezone.now() - timedelta(seconds=RELEASE_BUILD.stale_after() + 1)
    ReleaseBuild.objects.filter(pk=build.pk).update(heartbeat_at=silent)
    second = jobs.claim(RELEASE_BUILD, build.pk)
    assert second == 2
    assert not jobs.beat(RELEASE_BUILD, build.pk, first)
    assert jobs.beat(RELEASE_BUILD, build.pk, second, progress=40) == 1
    assert ReleaseBuild.objects.get(pk=build.pk).progress == 40


def test_the_stale_test_is_one_rule_in_python_and_in_sql() -> None:
    now = timezone.now()
    long_ago = now - timedelta(seconds=RELEASE_BUILD.stale_after() + 5)
    cases = {
        "beating": (now, long_ago, False),
        "silent": (long_ago, long_ago, True),
        "never beat, started long ago": (None, long_ago, True),
        "never beat, just started": (None, now, False),
        "never beat nor started": (None, None, True),
    }
    build = _build(status=BuildStatus.BUILDING)
    for case, (heartbeat_at, started_at, gone) in cases.items():
        ReleaseBuild.objects.filter(pk=build.pk).update(
            heartbeat_at=heartbeat_at, started_at=started_at
        )
        build.refresh_from_db()
        in_sql = ReleaseBuild.objects.filter(jobs.silent(RELEASE_BUILD, now), pk=build.pk)
        assert in_sql.exists() == gone, case
        assert build.is_silent(RELEASE_BUILD.stale_after(), now=now) == gone, case


def test_the_sweep_queues_again_then_fails_once_the_attempts_are_used(
    django_capture_on_commit_callbacks,
) -> None:
    sent: list[int] = []
    kind = jobs.JobKind(
        name="test-builds",
        model=ReleaseBuild,
        queued=BuildStatus.QUEUED,
        running=BuildStatus.BUILDING,
        failed=BuildStatus.FAILED,
        stale_after=lambda: 60,
        resend_after=lambda: 600,
        sent_field="created_at",
        max_attempts=lambda: 2,
        gave_up=lambda attempts: f"gave up after {attempts}",
        enqueue=sent.append,
        claim_by="attempts",
        fail_fields={"active": None},
    )
    build = _build()
    token = jobs.claim(kind, build.pk)
    assert jobs.sweep(kind).as_dict() == {"requeued": [], "failed": [], "cancelled": []}
    ReleaseBuild.objects.filter(pk=build.pk).update(
        heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.sweep(kind).requeued == [build.pk]
    assert sent == [build.pk]  # sent again once the sweep's transaction committed
    assert not jobs.beat(kind, build.pk, token)  # the dead worker's claim is gone
    jobs.claim(kind, build.pk)
    ReleaseBuild.objects.filter(pk=build.pk).update(
        heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    swept = jobs.sweep(kind)
    assert swept.failed == [build.pk] and swept.requeued == []
    build.refresh_from_db()
    assert (build.status, build.error, build.active) == ("failed", "gave up after 2", None)
    assert build.finished_at is not None


def test_handing_back_counts_no_attempt_and_waits_for_its_time() -> None:
    build = _build()
    attempt = jobs.claim(RELEASE_BUILD, build.pk)
    assert jobs.hand_back(RELEASE_BUILD, build.pk, attempt, stage="Waiting")
    build.refresh_from_db()
    assert (build.status, build.attempts, build.stage) == (BuildStatus.QUEUED, 0, "Waiting")
    assert not jobs.hand_back(RELEASE_BUILD, build.pk, attempt)  # not running: nothing to do


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_beats_from_a_thread_while_the_work_runs() -> None:
    build = _build()
    token = jobs.claim(RELEASE_BUILD, build.pk)
    first = ReleaseBuild.objects.get(pk=build.pk).heartbeat_at
    with jobs.heartbeat(RELEASE_BUILD, build.pk, token, every=0.05):
        time.sleep(0.5)
    later = ReleaseBuild.objects.get(pk=build.pk).heartbeat_at
    assert later > first
