"""Every field a user or a model writes is escaped wherever a page shows it: model names,
organisations, descriptions, table cells, questions, answers, predictions, run errors."""

from __future__ import annotations

import pytest
from django.test import Client

from leaderboard.models import QuestionResult
from tests.factories import (
    InferenceRunFactory,
    QuestionFactory,
    SubmissionFactory,
    TableFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

PAYLOAD = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_no_page_shows_a_field_unescaped(client: Client) -> None:
    owner = UserFactory(username="owner", role="researcher")
    table = TableFactory(
        id="psa--1--1", split="train", canonical_csv=f"Region,Count\n{PAYLOAD},1\nSouth,2\n"
    )
    question = QuestionFactory(table=table, text=f"Why {PAYLOAD}?", gold_answer=f"{{{PAYLOAD}}}")
    submission = SubmissionFactory(
        owner=owner,
        split="train",
        model_name=PAYLOAD,
        organisation=PAYLOAD,
        description=PAYLOAD,
        breakdowns={
            "table_properties": [{"code": "x", "label": PAYLOAD, "recall": 0.5, "n": 50}],
            "query_properties": [],
            "templates": [],
            "min_group": 1,
        },
    )
    QuestionResult.objects.create(
        submission=submission, question=question, prediction=PAYLOAD, recall=0.0, cc=False
    )
    run = InferenceRunFactory(
        created_by=owner,
        model_name=PAYLOAD,
        description=PAYLOAD,
        error=PAYLOAD,
        config={"model": PAYLOAD},
    )
    pages = [
        "/leaderboard/",
        f"/leaderboard/submissions/{submission.pk}/",
        "/leaderboard/submissions/",
        "/leaderboard/inference/",
        f"/leaderboard/inference/{run.pk}/",
        "/tables/psa--1--1/",
        f"/dataset/?q={PAYLOAD}",
        f"/leaderboard/?q={PAYLOAD}",
    ]
    client.force_login(owner)
    shown = 0
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert PAYLOAD not in text and "<img src=x" not in text, url
        shown += ESCAPED in text
    assert shown >= 6  # the payload is on the pages, as text
    admin = Client()
    admin.force_login(UserFactory(role="admin", is_superuser=True))
    for url in (
        f"/admin/leaderboard/submission/{submission.pk}/change/",
        "/admin/leaderboard/submission/",
        f"/admin/dataset/question/{question.pk}/change/",
    ):
        text = admin.get(url).content.decode()
        assert PAYLOAD not in text and "<img src=x" not in text, url
