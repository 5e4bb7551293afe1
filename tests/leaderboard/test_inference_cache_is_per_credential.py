"""Issue 23, item 1: the response cache is shared only under the same credential.

The probe's replay: one researcher's own endpoint, with its key, answered 36 questions; two
other researchers pointed runs at the same URL, one with a wrong key and one with none, and
both got all 36 answers from the cache while the endpoint received nothing. A researcher
refused a registered endpoint gave its URL as their own and got 36 answers made with the
server's key."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from endpoints.models import Endpoint
from leaderboard.models import CachedResponse, InferenceResponse, InferenceRun, RunStatus
from leaderboard.services import inference_run_execute
from plumbing.errors import ApplicationError
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI
from tests.leaderboard.inference_helpers import (
    make_questions,
    quick_inference,
    registered,
    right_answer,
    start,
)

pytestmark = pytest.mark.django_db

QUESTIONS = 36


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch) -> None:
    quick_inference(settings, monkeypatch)
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True  # the endpoint is on 127.0.0.1
    settings.INFERENCE_MAX_ACTIVE_RUNS = 0
    make_questions(QUESTIONS)


@pytest.fixture
def server():
    with FakeOpenAI(right_answer) as fake:
        yield fake


def execute(run: InferenceRun) -> InferenceRun:
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    return run


def researcher(name: str):
    return UserFactory(username=name, role="researcher")


def test_an_own_endpoints_answers_go_to_nobody_else(server) -> None:
    ada = researcher("ada")
    first = execute(start(ada, server.base_url, own=True, api_key="sk-ada-own"))
    assert (first.answered, first.cached, len(server.requests)) == (QUESTIONS, 0, QUESTIONS)

    # The replay: a wrong key, then none, at the same URL.
    wrong = execute(start(researcher("bob"), server.base_url, own=True, api_key="sk-guess"))
    none = execute(start(researcher("eve"), server.base_url, own=True))
    for run in (wrong, none):
        assert (run.answered, run.cached) == (QUESTIONS, 0)
    assert len(server.requests) == 3 * QUESTIONS  # each asked the endpoint itself
    assert not InferenceResponse.objects.filter(run__in=[wrong, none], from_cache=True).exists()
    # What the endpoint received from them carried their own key, or none.
    keys = server.authorizations()
    assert set(keys[QUESTIONS : 2 * QUESTIONS]) == {"Bearer sk-guess"}
    assert set(keys[2 * QUESTIONS :]) == {""}


def test_the_same_person_with_the_same_key_is_answered_from_the_cache(server) -> None:
    ada = researcher("ada")
    execute(start(ada, server.base_url, own=True, api_key="sk-ada-own"))
    again = execute(start(ada, server.base_url, own=True, api_key="sk-ada-own"))
    assert (again.cached, len(server.requests)) == (QUESTIONS, QUESTIONS)
    # Another key of hers is another credential; so is another person with her key.
    other_key = execute(start(ada, server.base_url, own=True, api_key="sk-ada-second"))
    assert other_key.cached == 0
    same_key = execute(start(researcher("bob"), server.base_url, own=True, api_key="sk-ada-own"))
    assert same_key.cached == 0
    assert len(server.requests) == 3 * QUESTIONS


def test_the_cache_keeps_no_key_only_a_keyed_hash_of_it(server) -> None:
    execute(start(researcher("ada"), server.base_url, own=True, api_key="sk-ada-own-secret"))
    rows = CachedResponse.objects.all()
    assert rows.count() == QUESTIONS
    stored = " ".join(str(v) for row in rows.values() for v in row.values())
    assert "sk-ada-own-secret" not in stored
    assert {row.owner.username for row in rows} == {"ada"} and not any(r.endpoint for r in rows)


def test_a_registered_endpoint_shares_its_cache_only_with_its_people(server) -> None:
    ada, bob, eve = researcher("ada"), researcher("bob"), researcher("eve")
    open_one = registered(server.base_url)
    execute(start(ada, server.base_url))
    assert execute(start(bob, server.base_url)).cached == QUESTIONS  # both may use it
    assert len(server.requests) == QUESTIONS
    assert {r.endpoint for r in CachedResponse.objects.all()} == {open_one}

    # A second endpoint at the same URL for one group: its cache is its own.
    closed = Endpoint.objects.create(name="gpu-closed", base_url=open_one.base_url)
    closed.users.add(eve)
    run = execute(start(eve, server.base_url, endpoint="gpu-closed"))
    assert run.cached == 0 and len(server.requests) == 2 * QUESTIONS


def test_a_new_key_on_a_registered_endpoint_is_a_new_credential(server, monkeypatch) -> None:
    ada = researcher("ada")
    endpoint = registered(server.base_url)
    execute(start(ada, server.base_url))
    monkeypatch.setenv(endpoint.api_key_env, "sk-rotated")
    assert execute(start(ada, server.base_url)).cached == 0


def test_a_refused_researcher_gets_nothing_made_with_the_servers_key(server) -> None:
    ada, mallory = researcher("ada"), researcher("mallory")
    endpoint = registered(server.base_url)
    Endpoint.objects.filter(pk=endpoint.pk).update(open_to_researchers=False)
    endpoint.users.add(ada)
    execute(start(ada, server.base_url))
    assert set(server.authorizations()) == {"Bearer sk-test"}

    # The replay: its URL as her own endpoint. The registered endpoint has a key, so her
    # own key is what counts there; her run asks the endpoint and gets no cached answer.
    run = execute(start(mallory, server.base_url, own=True, api_key="sk-mallory"))
    assert run.endpoint is None and run.cached == 0
    assert set(server.authorizations()[QUESTIONS:]) == {"Bearer sk-mallory"}


@pytest.mark.parametrize(
    "spelling",
    [
        "{url}",
        "{url}/",
        "{url}//",
        "{scheme}://LOCALHOST:{port}/v1",
        "{scheme}://127.0.0.1:{port}/another/path",
        "{scheme}://[::ffff:127.0.0.1]:{port}/v1",
        "{scheme}://[::1]:{port}/v1",
        "{scheme}://localhost.:{port}/V1/",
    ],
)
def test_a_keyless_registered_endpoint_cannot_be_given_as_ones_own(server, spelling) -> None:
    """An endpoint that answers without a key is kept to its people by its URL alone: given
    as one's own, in any spelling that reaches the same server, it is refused."""
    endpoint = registered(server.base_url, name="gpu-keyless", api_key_env="")
    Endpoint.objects.filter(pk=endpoint.pk).update(open_to_researchers=False)
    scheme, port = server.base_url.split("://")[0], server.port
    url = spelling.format(url=server.base_url, scheme=scheme, port=port)
    with pytest.raises(ApplicationError, match=re.escape("the registered endpoint gpu-keyless")):
        start(researcher("mallory"), url, own=True)
    assert not InferenceRun.objects.exists() and not server.requests


def test_a_keyless_endpoint_registered_after_the_run_started_stops_it(server) -> None:
    run = start(researcher("mallory"), server.base_url, own=True)
    registered(server.base_url, name="gpu-keyless", api_key_env="")
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "gpu-keyless" in run.error
    assert not server.requests


def test_another_server_on_the_same_host_is_not_the_registered_one(server) -> None:
    registered(server.base_url, name="gpu-keyless", api_key_env="")
    with FakeOpenAI(right_answer) as other:
        run = execute(start(researcher("ada"), other.base_url, own=True))
    assert run.answered == QUESTIONS and len(other.requests) == QUESTIONS


@override_settings(SECRET_KEY="another-secret-key-for-this-test-only-0123456789abcdef")
def test_a_new_secret_key_starts_a_new_cache(server) -> None:
    ada = researcher("ada")
    execute(start(ada, server.base_url, own=True, api_key="sk-ada-own"))
    with override_settings(SECRET_KEY="yet-another-secret-key-0123456789abcdef-0123456789"):
        assert execute(start(ada, server.base_url, own=True, api_key="sk-ada-own")).cached == 0
