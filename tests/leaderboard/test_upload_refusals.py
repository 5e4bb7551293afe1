"""Hostile upload files are refused cleanly on the form and the API alike: a clear 400 that
names the problem, and nothing stored (no submission, no file, no slot of the daily limit)."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import Client

from leaderboard.models import DailyLimitEntry, Submission
from tests.leaderboard.conftest import upload

pytestmark = pytest.mark.django_db

GOOD = b'{"question_id": "pak--1--1--M0", "response": "a"}\n'
BOMB = gzip.compress(b" " * 3_000_000)  # 3 MB of spaces in 3 KB, past a 1 MB limit


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (gzip.compress(GOOD)[:-6], "The gzip file is truncated"),
        (BOMB, "limit once unzipped"),
        (b'{"question_id": "pak--1--1--M0", "response": "caf\xe9"}', "not UTF-8 text"),
        (GOOD + GOOD, "1 duplicate question id,"),
        (b'{"id": "zzz--9--9--M0", "response": "a"}', "1 unknown question id,"),
    ],
    ids=["empty", "truncated-gzip", "gzip-bomb", "bad-utf8", "duplicate-ids", "unknown-ids"],
)
def test_a_hostile_file_is_refused_on_the_form_and_the_api(
    client: Client,
    dataset,
    researcher,
    form_data,
    settings,
    monkeypatch,
    content: bytes,
    message: str,
) -> None:
    settings.SUBMISSION_MAX_BYTES = 1_000_000
    written: list[str] = []
    storage = Submission._meta.get_field("predictions").storage
    monkeypatch.setattr(storage, "save", lambda name, *a, **k: written.append(name) or name)
    client.force_login(researcher)
    form = client.post("/leaderboard/submit/", {**form_data(), "predictions": upload(content)})
    assert form.status_code == 400 and message in form.content.decode()
    api = client.post("/api/submissions/create/", {**form_data(), "predictions": upload(content)})
    assert api.status_code == 400
    assert message in json.dumps(api.json(), ensure_ascii=False)
    assert not Submission.objects.exists() and not DailyLimitEntry.objects.exists()
    assert written == []
