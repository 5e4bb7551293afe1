"""Issue 32, item 4: the logs say what happened in one line, and nothing when nothing did. A
request with a bad Host header wrote a 15-line traceback to the web server's log; the sweeps
worker wrote two lines for each sweep of an idle site (125 KB in 27 minutes)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from celery.app.trace import LOG_RECEIVED, LOG_SUCCESS
from celery.utils.saferepr import saferepr
from django.test import Client

from plumbing.tasks import sweep_jobs


@pytest.fixture
def log() -> Iterator[io.StringIO]:
    """What the configured console handler writes (settings.LOGGING), its filters included."""
    (handler,) = [h for h in logging.getLogger().handlers if h.get_name() == "console"]
    out = io.StringIO()
    previous = handler.setStream(out)
    try:
        yield out
    finally:
        handler.setStream(previous)


def test_a_bad_host_header_is_one_line(client: Client, log: io.StringIO) -> None:
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    lines = log.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert "Invalid HTTP_HOST header: 'evil.example'" in lines[0]
    assert "Traceback" not in log.getvalue()


def celery_lines(task, result) -> None:
    """The two lines Celery's worker logs for a task: received, then succeeded."""
    context = {"id": "0f", "name": task.name, "args": "()", "kwargs": "{}", "eta": None}
    logging.getLogger("celery.worker.strategy").info(LOG_RECEIVED, context)
    done = {**context, "return_value": saferepr(result), "runtime": 0.01}
    logging.getLogger("celery.app.trace").info(LOG_SUCCESS, done)


@pytest.mark.django_db
def test_a_sweep_that_found_nothing_logs_nothing(log: io.StringIO) -> None:
    for task in (sweep_jobs,):
        celery_lines(task, task())  # an idle site: nothing to requeue, fail or expire
        logging.getLogger("celery.beat").info(
            "Scheduler: Sending due task %s (%s)", "sweep", task.name
        )
    assert log.getvalue() == ""


def test_a_sweep_that_did_something_logs_one_line(log: io.StringIO) -> None:
    scoring = {"requeued": [42], "failed": [], "cancelled": []}
    celery_lines(sweep_jobs, {"submission-scoring": scoring, "kept-uploads-expired": 0})
    celery_lines(sweep_jobs, {"candidate-scores-resent": 3})
    lines = log.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert "sweep_jobs" in lines[0] and "[42]" in lines[0]
    assert "sweep_jobs" in lines[1] and "succeeded" in lines[1]


def test_other_tasks_keep_their_lines(log: io.StringIO) -> None:
    from leaderboard.tasks import score_submission

    celery_lines(score_submission, "scored")
    assert len(log.getvalue().splitlines()) == 2
