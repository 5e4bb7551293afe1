"""Which queue each task goes to, and the worker each queue gets. Issue 23: five identical
generator runs queued on "default" delayed a recovery sweep by 43 s; the sweeps now have a
queue and a worker of their own, and on Redis each queue hands out a dead worker's message
after its own visibility timeout, never while the task may still be running."""

from __future__ import annotations

import re

from django.conf import settings

from hctqa.celery import app, queue_transport_options
from tests.conftest import REPO

SWEEPS = {
    # Every job kind's recovery sweep (plumbing.jobs): scorings, inference runs, extractions.
    "plumbing.tasks.sweep_jobs",
    "annotation.tasks.release_expired_leases",
    # Queues the emails that are due; the default queue sends them.
    "accounts.tasks.send_waiting_emails",
    # Queues the admins' approval-request digests that are due (at most one an hour each).
    "accounts.tasks.send_approval_digests",
}


# An admin's long jobs, minutes each.
BUILDS = {
    "releases.tasks.build_release",
    "releases.tasks.push_release",
    "annotation.tasks.synthetic_generation",
    "tracks.tasks.build_track_items",
}


def queue_of(task: str) -> str:
    return app.amqp.router.route({}, task)["queue"].name


def test_the_recovery_sweeps_have_a_queue_of_their_own() -> None:
    app.loader.import_default_modules()
    for task in SWEEPS:
        assert queue_of(task) == "sweeps", task
    on_sweeps = {name for name in app.tasks if queue_of(name) == "sweeps"}
    assert on_sweeps == SWEEPS
    # Admin jobs stay off it.
    for task in (*BUILDS, "accounts.tasks.send_email", "leaderboard.tasks.check_question_sets"):
        assert queue_of(task) != "sweeps"
    # Beat sends every sweep often, and a sweep not taken in time is dropped, not piled up.
    scheduled = {e["task"]: e for e in settings.CELERY_BEAT_SCHEDULE.values()}
    assert set(scheduled) >= SWEEPS
    assert scheduled["plumbing.tasks.sweep_jobs"]["schedule"] == settings.SWEEP_EVERY_SECONDS == 10
    for task in SWEEPS:
        assert scheduled[task]["options"]["expires"] == scheduled[task]["schedule"]


def test_emails_never_wait_behind_an_admins_long_build() -> None:
    # A release build, a synthetic family or a track's items take minutes: on the queue that
    # sends emails, a password reset would wait for them.
    app.loader.import_default_modules()
    on_builds = {name for name in app.tasks if queue_of(name) == "builds"}
    assert on_builds == BUILDS
    for task in ("accounts.tasks.send_email", "leaderboard.tasks.check_question_sets"):
        assert queue_of(task) == "default"
    assert "builds" in settings.WORKER_QUEUES


def test_scripts_run_starts_a_supervised_worker_for_every_queue() -> None:
    script = (REPO / "scripts" / "run").read_text()
    (listed,) = re.findall(r"^queues=\(([^)]*)\)$", script, re.MULTILINE)
    assert sorted(listed.split()) == sorted(settings.WORKER_QUEUES)
    assert 'supervise "$queue-worker"' in script
    ci = (REPO / ".ci" / "run").read_text()
    assert "for queue in scoring sweeps; do" in ci


def test_each_queue_has_a_visibility_timeout_longer_than_its_longest_task() -> None:
    timeouts = settings.CELERY_QUEUE_VISIBILITY_SECONDS
    assert set(timeouts) == set(settings.WORKER_QUEUES)
    rescore_limit = settings.RESCORE_SLICE_SECONDS + settings.SUBMISSION_SCORING_TIME_LIMIT + 30
    assert timeouts["scoring"] > rescore_limit
    for queue in ("ingest", "inference", "builds", "default"):
        assert timeouts[queue] > settings.CELERY_TASK_TIME_LIMIT
    scoring = queue_transport_options(["scoring"], {"unacked_restore_interval": 10})
    assert scoring["visibility_timeout"] == timeouts["scoring"]
    assert scoring["unacked_key"] == "unacked:scoring"
    assert scoring["unacked_index_key"] == "unacked:scoring:index"
    assert scoring["unacked_restore_interval"] == 10
    # A worker taking several queues waits as long as the slowest of them.
    both = queue_transport_options("sweeps,scoring", {})
    assert both["unacked_key"] == "unacked:scoring+sweeps"
    assert both["visibility_timeout"] == timeouts["scoring"]
