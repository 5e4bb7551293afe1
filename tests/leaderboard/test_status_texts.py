"""Status lines say each thing once: no "Scoring scoring…", no "0 of ? answered" when the
questions are known, and a run's times with the date once when it ran within one day."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from leaderboard.models import InferenceRun, RunStatus
from tests.factories import SubmissionFactory, UserFactory
from tests.leaderboard.inference_helpers import make_questions, start

pytestmark = pytest.mark.django_db


def status_line(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}">(.*?)</p>', html, re.S)
    assert found, element_id
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def test_a_submissions_status_names_its_state_once(client: Client) -> None:
    scored = SubmissionFactory(scored_at=datetime(2026, 11, 23, 14, 16, tzinfo=UTC))
    page = client.get(scored.get_absolute_url()).content.decode()
    assert status_line(page, "submission-status-line") == "Scored · 2026-11-23 14:16 UTC"
    scoring = SubmissionFactory(status="scoring", progress=40, recall=None)
    client.force_login(scoring.owner)
    page = client.get(scoring.get_absolute_url()).content.decode()
    assert status_line(page, "submission-status-line") == "Scoring · 40% done"
    queued = SubmissionFactory(status="queued", progress=0, recall=None, owner=scoring.owner)
    page = client.get(queued.get_absolute_url()).content.decode()
    assert status_line(page, "submission-status-line") == "Queued · waiting for a worker"


def test_a_new_run_knows_how_many_questions_it_asks(client: Client) -> None:
    researcher = UserFactory(role="researcher")
    make_questions(3)
    run = start(researcher, "http://gpu-host:8000/v1")
    assert run.total == 3
    client.force_login(researcher)
    page = client.get(run.get_absolute_url()).content.decode()
    assert status_line(page, "run-counts") == "0 of 3 answered"
    assert "?" not in status_line(page, "run-counts")


@pytest.mark.parametrize(
    ("finished", "shown"),
    [
        (datetime(2026, 11, 23, 14, 20, tzinfo=UTC), "ran 2026-11-23 14:16–14:20 UTC"),
        (
            datetime(2026, 11, 24, 9, 5, tzinfo=UTC),
            "ran 2026-11-23 14:16 to 2026-11-24 09:05 UTC",
        ),
    ],
)
def test_a_runs_times_say_the_date_once_within_a_day(
    client: Client, finished: datetime, shown: str
) -> None:
    researcher = UserFactory(role="researcher")
    make_questions(1)
    run = start(researcher, "http://gpu-host:8000/v1")
    InferenceRun.objects.filter(pk=run.pk).update(
        status=RunStatus.DONE,
        answered=1,
        started_at=datetime(2026, 11, 23, 14, 16, tzinfo=UTC),
        finished_at=finished,
    )
    client.force_login(researcher)
    page = client.get(run.get_absolute_url()).content.decode()
    times = re.search(r'id="run-times">(.*?)</dd>', page, re.S).group(1)
    assert shown in times
    assert status_line(page, "run-status-line") == f"Done · {finished:%Y-%m-%d %H:%M} UTC"


def test_one_missing_answer_is_never_shown_as_100_percent(client: Client) -> None:
    # 9,834 of the 9,835 real questions answered: 99.99%, which one decimal rounds up.
    almost = SubmissionFactory(coverage=9834 / 9835, n_questions=9835)
    page = client.get(almost.get_absolute_url()).content.decode()
    assert "99.9% answered" in page
    assert "100.0% answered" not in page
