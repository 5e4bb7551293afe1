"""Issue 10, item 1: a key held by the server is only ever sent to the endpoint it belongs to.

The review's attack: a self-registered researcher started a run with
``base_url=http://[::ffff:127.0.0.1]:18080/v1`` and ``api_key_env=DUMMY_API_KEY``, and their
listener received the worker's key. Now researchers choose a registered endpoint by name
(its key stays on the worker) or give their own endpoint and their own key, which is sealed
while the run can send and erased when it ends."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from endpoints.keys import api_key_unseal
from leaderboard.models import InferenceResponse, InferenceRun, RunStatus
from leaderboard.services import (
    inference_run_cancel,
    inference_run_execute,
    inference_run_resume,
    inference_run_sweep,
)
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import (
    KEY_ENV,
    make_questions,
    registered,
    right_answer,
    start,
)

pytestmark = pytest.mark.django_db

SERVER_KEYS = {"DUMMY_API_KEY": "sk-operator-dummy", KEY_ENV: "sk-operator-inference"}


@pytest.fixture(autouse=True)
def worker_keys(monkeypatch, settings) -> None:
    """The keys the worker holds, and quick retries."""
    for name, value in SERVER_KEYS.items():
        monkeypatch.setenv(name, value)
    settings.INFERENCE_RETRY_BASE_MS = 1
    settings.INFERENCE_REQUEST_TIMEOUT = 5


@pytest.fixture
def researcher():
    return UserFactory(username="mallory", role="researcher")


@pytest.fixture
def api(client: Client, researcher) -> Client:
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {Token.objects.create(user=researcher).key}"
    return client


def execute(run: InferenceRun) -> InferenceRun:
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def no_server_key_in(server: FakeOpenAI) -> bool:
    sent = " ".join(f"{k}: {v}" for headers in server.headers for k, v in headers.items())
    return not any(key in sent for key in SERVER_KEYS.values())


def test_the_reviews_attack_no_longer_gets_the_workers_key(api: Client, settings) -> None:
    make_questions(3)
    registered("http://gpu-host:8000/v1")  # the operator's endpoint exists, key and all
    with FakeOpenAI(right_answer) as listener:
        attack = {
            "model_name": "x",
            "base_url": f"http://[::ffff:127.0.0.1]:{listener.port}/v1",
            "api_key_env": "DUMMY_API_KEY",
            "modality": "text",
            "table_format": "csv",
            "split": "test",
            "weights": "closed",
        }
        named = api.post("/api/inference-runs/create/", attack, content_type="application/json")
        assert named.status_code == 400 and named.json()["field"] == "api_key_env"
        # Every problem at once: the own endpoint's address is refused too.
        assert "base_url" in named.json()["errors"]
        del attack["api_key_env"]
        own = api.post("/api/inference-runs/create/", attack, content_type="application/json")
        assert own.status_code == 400 and own.json()["field"] == "base_url"
        assert "only endpoints an admin registered" in own.json()["detail"]
        assert not InferenceRun.objects.exists()

        # A lab that lets its researchers reach private addresses: the run goes there, with
        # no key at all (they gave none), and never one the worker holds.
        settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
        created = api.post("/api/inference-runs/create/", attack, content_type="application/json")
        assert created.status_code == 201, created.content
        run = execute(InferenceRun.objects.get(pk=created.json()["id"]))
    assert run.status == RunStatus.DONE and len(listener.requests) == 3
    assert listener.authorizations() == ["", "", ""] and no_server_key_in(listener)


def test_an_own_endpoint_at_a_registered_endpoints_url_gets_only_its_own_key(
    researcher, settings
) -> None:
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    make_questions(2)
    with FakeOpenAI(right_answer) as server:
        registered(server.base_url)
        execute(start(researcher, server.base_url, own=True, api_key="sk-mallory-1"))
    assert server.authorizations() == ["Bearer sk-mallory-1"] * 2 and no_server_key_in(server)


def test_a_registered_endpoints_key_goes_to_that_endpoint_and_no_other(
    researcher, monkeypatch
) -> None:
    make_questions(2)
    monkeypatch.setenv("OTHER_API_KEY", "sk-other-endpoint")
    with FakeOpenAI(right_answer) as mine, FakeOpenAI(right_answer) as other:
        registered(other.base_url, name="other", api_key_env="OTHER_API_KEY")
        run = execute(start(researcher, mine.base_url))
    assert run.status == RunStatus.DONE
    assert mine.authorizations() == [f"Bearer {SERVER_KEYS[KEY_ENV]}"] * 2
    assert not other.requests


@pytest.mark.parametrize("through_a_proxy", [False, True])
def test_a_redirect_is_never_followed_with_the_key(
    researcher, monkeypatch, through_a_proxy: bool
) -> None:
    make_questions(3)
    with FakeOpenAI(right_answer) as attacker:
        elsewhere = {"Location": f"{attacker.base_url}/chat/completions"}
        with FakeOpenAI(lambda body: Reply(status=307, headers=elsewhere)) as endpoint:
            url = endpoint.base_url
            if through_a_proxy:
                for name in ("NO_PROXY", "no_proxy"):
                    monkeypatch.delenv(name, raising=False)
                monkeypatch.setenv("HTTP_PROXY", endpoint.base_url.removesuffix("/v1"))
                monkeypatch.setenv("http_proxy", endpoint.base_url.removesuffix("/v1"))
                url = "http://model-host.invalid/v1"
            run = execute(start(researcher, url, concurrency=1))
    assert not attacker.requests
    assert run.status == RunStatus.FAILED and "requests never follow a redirect" in run.error
    assert len(endpoint.requests) == 1  # and nothing more was sent


@pytest.fixture
def own_server():
    """A researcher's own server, which echoes the Authorization header in its errors."""

    def echo(body: dict) -> Reply:
        if "value number 0?" in str(body["messages"]):
            return Reply(status=400, error="you sent Authorization: Bearer sk-own-SECRET-77")
        return right_answer(body)

    with FakeOpenAI(echo) as server:
        yield server


def test_an_own_key_is_sealed_never_shown_and_erased_when_the_run_ends(
    researcher, own_server, settings, client: Client, caplog
) -> None:
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    caplog.set_level(logging.DEBUG)
    make_questions(3)
    run = start(researcher, own_server.base_url, own=True, api_key="sk-own-SECRET-77")
    # At rest: sealed, opened only with the platform's secret.
    assert "sk-own-SECRET-77" not in run.sealed_api_key
    assert api_key_unseal(run.sealed_api_key) == "sk-own-SECRET-77"

    run = execute(run)
    assert run.status == RunStatus.DONE
    assert own_server.authorizations() == ["Bearer sk-own-SECRET-77"] * 3
    # The run has ended: the key is gone, and the database keeps it that way.
    assert run.sealed_api_key == "" and run.api_key_given
    with pytest.raises(IntegrityError), transaction.atomic():
        InferenceRun.objects.filter(pk=run.pk).update(sealed_api_key=run.config["model"])
    # Never shown: not in stored errors, pages, the API, the admin or the logs.
    rejected = InferenceResponse.objects.get(status="rejected")
    assert "sk-own-SECRET-77" not in rejected.error and "Bearer ***" in rejected.error
    client.force_login(researcher)
    pages = [f"/leaderboard/inference/{run.pk}/", f"/api/inference-runs/{run.pk}/"]
    client_admin = Client()
    client_admin.force_login(UserFactory(role="admin", is_superuser=True))
    admin_pages = [
        "/admin/leaderboard/inferencerun/",
        f"/admin/leaderboard/inferencerun/{run.pk}/change/",
        "/admin/leaderboard/inferenceresponse/",
    ]
    for who, url in [(client, u) for u in pages] + [(client_admin, u) for u in admin_pages]:
        response = who.get(url)
        assert response.status_code == 200, url
        assert "sk-own-SECRET-77" not in response.content.decode(), url
    assert not [r for r in caplog.records if "sk-own-SECRET-77" in r.getMessage()]


def test_cancelled_and_failed_runs_lose_their_key(researcher, settings) -> None:
    settings.INFERENCE_MAX_AUTO_RESUMES = 0
    make_questions(1)
    cancelled = start(researcher, "https://own.example/v1", own=True, api_key="sk-a")
    inference_run_cancel(user=researcher, run_id=cancelled.pk)
    # A worker died with the run, and the sweeper gave up on it.
    failed = start(researcher, "https://own.example/v1", own=True, api_key="sk-b")
    long_ago = timezone.now() - timedelta(days=1)
    InferenceRun.objects.filter(pk=failed.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=long_ago
    )
    assert inference_run_sweep().failed == [failed.pk]
    # The endpoint refused the key.
    with FakeOpenAI(lambda body: Reply(status=401, error="bad key")) as server:
        settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
        refused = execute(start(researcher, server.base_url, own=True, api_key="sk-c"))
    assert refused.status == RunStatus.FAILED and "HTTP 401" in refused.error
    for run in InferenceRun.objects.all():
        assert run.status in (RunStatus.CANCELLED, RunStatus.FAILED)
        assert run.sealed_api_key == "" and run.needs_api_key


def test_resuming_takes_the_key_again_and_sends_only_it(researcher, settings) -> None:
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    settings.INFERENCE_MAX_ATTEMPTS = 1
    make_questions(2)
    with FakeOpenAI(right_answer) as server:
        server.queue(Reply(status=503))
        run = execute(start(researcher, server.base_url, own=True, api_key="sk-first"))
        assert run.status == RunStatus.FAILED and run.needs_api_key
        run = execute(
            inference_run_resume(user=researcher, run_id=run.pk, enqueue=False, api_key="sk-2nd")
        )
    assert run.status == RunStatus.DONE and run.sealed_api_key == ""
    assert server.authorizations()[-1] == "Bearer sk-2nd" and no_server_key_in(server)


def test_a_worker_without_the_platforms_secret_cannot_open_the_key(researcher, settings) -> None:
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    make_questions(1)
    with FakeOpenAI(right_answer) as server:
        run = start(researcher, server.base_url, own=True, api_key="sk-own")
        settings.SECRET_KEY = "another-" + settings.SECRET_KEY
        run = execute(run)
    assert run.status == RunStatus.FAILED and "same SECRET_KEY" in run.error
    assert not server.requests and run.sealed_api_key == ""


def test_a_server_key_that_would_break_its_header_stops_the_run_without_showing_it(
    researcher, monkeypatch
) -> None:
    make_questions(1)
    monkeypatch.setenv(KEY_ENV, "sk-operator-77\r\nX-Injected: 1")
    with FakeOpenAI(right_answer) as server:
        run = execute(start(researcher, server.base_url))
    assert run.status == RunStatus.FAILED and "is not a valid key" in run.error
    assert "sk-operator-77" not in run.error and not server.requests
