"""A run started through the API, executed by a real worker process (inference queue) against
a local OpenAI-compatible server, scored by the same worker (default queue), and shown on the
board."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from leaderboard.models import InferenceRun, RunStatus, Status
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI
from tests.leaderboard.inference_helpers import KEY_ENV, make_questions, registered, right_answer

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def key_on_the_worker(monkeypatch) -> None:
    # Requested before celery_worker_process, which copies this environment.
    monkeypatch.setenv(KEY_ENV, "sk-worker")


def test_a_run_goes_from_the_api_through_the_worker_to_the_board(
    client: Client, key_on_the_worker: None, celery_worker_process
) -> None:
    make_questions(30)
    researcher = UserFactory(role="researcher")
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {Token.objects.create(user=researcher).key}"
    with FakeOpenAI(right_answer, latency=0.02) as server:
        response = client.post(
            "/api/inference-runs/create/",
            {
                "model_name": "fake-e2e-7b",
                "endpoint": registered(server.base_url).name,
                "modality": "text",
                "table_format": "html",
                "split": "test",
                "weights": "open",
                "parameters_billions": "7",
                "organisation": "Lab",
                "concurrency": 8,
            },
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
        pk = response.json()["id"]
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run = InferenceRun.objects.select_related("submission").get(pk=pk)
            finished = run.status in (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED)
            if finished and (run.submission is None or run.submission.is_finished):
                break
            time.sleep(0.2)
    assert run.status == RunStatus.DONE, run.error
    assert run.answered == 30 and len(server.requests) == 30
    # The worker read the endpoint's key from its own environment and sent it there only.
    assert set(server.authorizations()) == {"Bearer sk-worker"}
    assert run.submission.status == Status.SCORED and run.submission.score_for().recall == 1.0
    board = client.get("/leaderboard/?split=test&table_format=html")
    assert [s.submission.model_name for s in board.context["page"].object_list] == ["fake-e2e-7b"]
    detail = client.get(f"/api/inference-runs/{pk}/").json()
    assert detail["status"] == "done" and detail["submission"] == run.submission.pk
