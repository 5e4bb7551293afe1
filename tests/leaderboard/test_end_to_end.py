"""Both real sample submissions, uploaded through the API, scored by a real worker process and
shown on the board with the reference rules' figures."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from dataset.services import release_import
from leaderboard.models import Status, Submission
from tests.factories import UserFactory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SAMPLES = [
    ("gemma-2-9b-it--text--real.jsonl.gz", "gemma-2-9b-it", "text", "paper", "9", 0.395),
    ("InternVL2-4B--vision--real.jsonl.gz", "InternVL2-4B", "vision", "image", "4", 0.311),
]


def test_samples_go_from_upload_through_a_worker_to_the_board(
    client: Client, data_dir: Path, release_tables: list, celery_worker_process
) -> None:
    release_import(tables=release_tables)
    researcher = UserFactory(role="researcher")
    headers = {"Authorization": f"Token {Token.objects.create(user=researcher).key}"}
    ids = []
    for filename, model, modality, fmt, params, _ in SAMPLES:
        with open(data_dir / "sample-submissions" / filename, "rb") as predictions:
            response = client.post(
                "/api/submissions/create/",
                {
                    "model_name": model,
                    "organisation": "sample",
                    "parameters_billions": params,
                    "weights": "open",
                    "modality": modality,
                    "table_format": fmt,
                    "split": "all",
                    "data_scope": "real",
                    "predictions": predictions,
                },
                headers=headers,
            )
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        states = set(Submission.objects.filter(pk__in=ids).values_list("status", flat=True))
        if states <= {Status.SCORED, Status.FAILED}:
            break
        time.sleep(0.5)
    for pk, (_, model, modality, _, _, recall) in zip(ids, SAMPLES, strict=True):
        submission = Submission.objects.get(pk=pk)
        assert submission.status == Status.SCORED, submission.error
        score = submission.score_for()
        assert round(score.recall, 3) == recall
        assert score.n_questions == 9835 and score.coverage == 1.0
        assert submission.results.count() == 9835
        board = client.get("/leaderboard/" if modality == "text" else "/leaderboard/vision/")
        assert model in [s.submission.model_name for s in board.context["page"].object_list]
    # The text sample under the 2025-10 rules too, in the same pass (SCORING.md's figures).
    text = Submission.objects.get(pk=ids[0]).score_for("2025-10")
    assert (round(text.recall, 3), text.n_questions, text.excluded) == (0.424, 9183, 652)
