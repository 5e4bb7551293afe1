"""The inference-run pages (with and without htmx) and the API."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from leaderboard.models import InferenceResponse, InferenceRun, RunStatus, Submission
from leaderboard.services import inference_run_execute, submission_score
from tests.factories import SubmissionFactory, UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import (
    KEY_ENV,
    make_questions,
    registered,
    right_answer,
    start,
)

pytestmark = pytest.mark.django_db

GPU_HOST = "http://gpu-host:8000/v1"
FORM = {
    "model_name": "fake-7b",
    "endpoint": "gpu-host",
    "base_url": "",
    "api_key": "",
    "modality": "text",
    "table_format": "markdown",
    "prompt_style": "zero_shot",
    "system_role": "on",
    "split": "test",
    "data_scope": "real",
    "temperature": "0",
    "max_tokens": "128",
    "concurrency": "8",
    "use_cache": "on",
    "organisation": "Lab",
    "parameters_billions": "7",
    "weights": "open",
    "visibility": "public",
    "description": "",
}


@pytest.fixture
def researcher():
    return UserFactory(username="ada", role="researcher")


@pytest.fixture(autouse=True)
def gpu_host(db):
    """The endpoint an admin registered for researchers (FORM chooses it)."""
    return registered(GPU_HOST, name="gpu-host", description="the lab's vLLM")


@pytest.fixture
def logged_in(client: Client, researcher) -> Client:
    client.force_login(researcher)
    return client


def test_a_researcher_starts_a_run_from_the_form_without_javascript(
    logged_in: Client, researcher
) -> None:
    make_questions(3)
    page = logged_in.get("/leaderboard/inference/new/").content.decode()
    # The registered endpoint by name; never its URL or the variable holding its key.
    assert '<option value="gpu-host" selected>gpu-host: the lab&#x27;s vLLM</option>' in page
    assert GPU_HOST not in page and KEY_ENV not in page and 'name="api_key_env"' not in page
    response = logged_in.post("/leaderboard/inference/new/", FORM)
    run = InferenceRun.objects.get()
    assert (
        response.status_code == 302 and response["Location"] == f"/leaderboard/inference/{run.pk}/"
    )
    assert (run.created_by, run.table_format, run.status) == (researcher, "markdown", "queued")
    assert run.system_role and run.use_cache and run.concurrency == 8
    assert run.endpoint.name == "gpu-host" and run.base_url == GPU_HOST
    detail = logged_in.get(response["Location"]).content.decode()
    assert "waiting for the inference worker" in detail and "Cancel the run" in detail
    # The status line says how the run goes, live; no banner saying "queued" outlives it.
    assert "queued for the inference worker" not in detail
    assert "gpu-host" in detail and GPU_HOST not in detail and KEY_ENV not in detail


def test_a_researcher_starts_a_run_on_their_own_endpoint_with_their_key(
    logged_in: Client, researcher
) -> None:
    make_questions(1)
    own = {**FORM, "endpoint": "", "base_url": "https://own.example/v1", "api_key": "sk-own-1"}
    response = logged_in.post("/leaderboard/inference/new/", own)
    run = InferenceRun.objects.get()
    assert response.status_code == 302 and run.endpoint is None and run.api_key_given
    assert run.base_url == "https://own.example/v1" and "sk-own-1" not in run.sealed_api_key
    detail = logged_in.get(response["Location"]).content.decode()
    assert "https://own.example/v1" in detail and "key held while the run can send" in detail
    assert "sk-own-1" not in detail and run.sealed_api_key not in detail


def test_the_own_endpoint_fields_are_ignored_when_a_registered_one_is_chosen(
    logged_in: Client,
) -> None:
    make_questions(1)
    # Without JavaScript both parts of the form are on the page, as the browser filled them.
    both = {**FORM, "base_url": "https://own.example/v1", "api_key": "sk-own-1"}
    assert logged_in.post("/leaderboard/inference/new/", both).status_code == 302
    run = InferenceRun.objects.get()
    assert run.endpoint.name == "gpu-host" and not run.api_key_given


def test_the_form_shows_what_is_wrong_and_keeps_the_input(logged_in: Client) -> None:
    make_questions(1)
    response = logged_in.post(
        "/leaderboard/inference/new/", {**FORM, "modality": "vision", "concurrency": "8"}
    )
    assert response.status_code == 400
    assert "choose the image format" in response.content.decode()
    assert 'value="fake-7b"' in response.content.decode()
    assert not InferenceRun.objects.exists()


def test_runs_are_for_researchers_and_admins(client: Client) -> None:
    assert client.get("/leaderboard/inference/").status_code == 302  # log in first
    client.force_login(UserFactory(role="annotator"))
    assert client.get("/leaderboard/inference/").status_code == 403
    assert client.get("/leaderboard/inference/new/").status_code == 403
    assert "Inference runs" not in client.get("/").content.decode()
    client.force_login(UserFactory(role="researcher"))
    assert "Inference runs" in client.get("/").content.decode()


def test_a_run_is_seen_only_by_its_owner_and_admins(client: Client, researcher) -> None:
    make_questions(1)
    run = start(researcher, GPU_HOST)
    client.force_login(UserFactory(role="researcher"))
    assert client.get(f"/leaderboard/inference/{run.pk}/").status_code == 404
    assert client.post(f"/leaderboard/inference/{run.pk}/cancel/").status_code == 404
    client.force_login(UserFactory(role="admin"))
    assert client.get(f"/leaderboard/inference/{run.pk}/").status_code == 200
    assert "fake-7b" in client.get("/leaderboard/inference/").content.decode()


def test_the_progress_fragment_polls_while_running_and_refreshes_when_done(
    logged_in: Client, researcher
) -> None:
    make_questions(4)
    run = start(researcher, GPU_HOST)
    InferenceRun.objects.filter(pk=run.pk).update(status="running", total=4, answered=1, cached=1)
    fragment = logged_in.get(
        f"/leaderboard/inference/{run.pk}/?part=progress", HTTP_HX_REQUEST="true"
    )
    html = fragment.content.decode()
    assert "<html" not in html and 'hx-trigger="every 1s"' in html
    assert 'value="25"' in html and "1 of 4 answered (1 from the cache)" in html
    assert "running=1" in html  # the page was drawn while the run ran
    InferenceRun.objects.filter(pk=run.pk).update(status="done")
    done = logged_in.get(
        f"/leaderboard/inference/{run.pk}/?part=progress&running=1", HTTP_HX_REQUEST="true"
    )
    assert done.headers["HX-Refresh"] == "true"  # once: the page has more to show now
    # Drawn again, it follows the board entry until it is scored, then stops asking.
    entry = SubmissionFactory(owner=researcher, status="scoring", recall=None)
    InferenceRun.objects.filter(pk=run.pk).update(submission=entry)
    page = logged_in.get(f"/leaderboard/inference/{run.pk}/").content.decode()
    assert 'hx-trigger="every 1s"' in page and "running=1" not in page
    scoring = logged_in.get(
        f"/leaderboard/inference/{run.pk}/?part=progress", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "(scoring)" in scoring and 'hx-trigger="every 1s"' in scoring
    Submission.objects.filter(pk=entry.pk).update(status="scored")
    scored = logged_in.get(
        f"/leaderboard/inference/{run.pk}/?part=progress", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "(scored)" in scored and "hx-trigger" not in scored


def test_the_list_refreshes_its_rows_while_a_run_is_active(logged_in: Client, researcher) -> None:
    make_questions(1)
    start(researcher, GPU_HOST)
    rows = logged_in.get("/leaderboard/inference/", HTTP_HX_REQUEST="true").content.decode()
    assert rows.startswith('<tbody id="run-rows" hx-get=') and "fake-7b" in rows


def test_cancelling_from_the_page_swaps_in_the_new_state(logged_in: Client, researcher) -> None:
    make_questions(1)
    run = start(researcher, GPU_HOST)
    response = logged_in.post(f"/leaderboard/inference/{run.pk}/cancel/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'id="run-progress"' in html and "Cancelled" in html and "Resume" in html
    assert "hx-trigger" not in html  # no more polling
    # Again, without htmx: the message says why not.
    again = logged_in.post(f"/leaderboard/inference/{run.pk}/cancel/", follow=True)
    assert "This run is already cancelled" in again.content.decode()


def test_resuming_from_the_page_queues_the_run_again(logged_in: Client, researcher) -> None:
    make_questions(1)
    run = start(researcher, GPU_HOST)
    InferenceRun.objects.filter(pk=run.pk).update(status="failed", error="it broke")
    response = logged_in.post(f"/leaderboard/inference/{run.pk}/resume/", follow=True)
    assert "Resumed: the answers already saved are kept." in response.content.decode()
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.error == ""


def test_resuming_an_own_endpoints_run_asks_for_its_key_again(
    logged_in: Client, researcher
) -> None:
    make_questions(1)
    run = start(researcher, "https://own.example/v1", own=True, api_key="sk-own-1")
    logged_in.post(f"/leaderboard/inference/{run.pk}/cancel/")
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.sealed_api_key == ""  # erased
    page = logged_in.get(f"/leaderboard/inference/{run.pk}/").content.decode()
    assert "key erased" in page and 'type="password" name="api_key"' in page
    refused = logged_in.post(f"/leaderboard/inference/{run.pk}/resume/", follow=True)
    assert "Give your endpoint&#x27;s API key again" in refused.content.decode()
    assert InferenceRun.objects.get(pk=run.pk).status == RunStatus.CANCELLED
    logged_in.post(f"/leaderboard/inference/{run.pk}/resume/", {"api_key": "sk-own-2"})
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.sealed_api_key and not run.needs_api_key


def test_the_run_page_lists_questions_without_an_answer(
    logged_in: Client, researcher, monkeypatch, settings
) -> None:
    settings.INFERENCE_MAX_ATTEMPTS = 1
    monkeypatch.setenv(KEY_ENV, "k")
    make_questions(2)
    with FakeOpenAI(lambda body: Reply(status=503, error="warming up")) as server:
        run = start(researcher, server.base_url)
        inference_run_execute(run_id=run.pk)
    html = logged_in.get(f"/leaderboard/inference/{run.pk}/").content.decode()
    assert "Questions without an answer" in html and "HTTP 503: warming up" in html
    assert "No answer to 2 questions" in html and "Resume" in html


def test_the_submission_page_says_how_the_answers_were_produced(
    client: Client, researcher, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "k")
    make_questions(2)
    with FakeOpenAI(right_answer) as server:
        run = start(researcher, server.base_url)
        inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    submission_score(submission_id=run.submission_id)
    html = client.get(f"/leaderboard/submissions/{run.submission_id}/").content.decode()
    assert "How the answers were produced" in html and "prompt_format_sha256" in html
    assert f"inference run {run.pk}" in html
    # Where the endpoint lives, what it is called and what holds its key stay private.
    assert server.base_url not in html and KEY_ENV not in html
    assert run.endpoint.name not in html


# --- The API -------------------------------------------------------------------------------


@pytest.fixture
def api(client: Client, researcher) -> Client:
    token = Token.objects.create(user=researcher)
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {token.key}"
    return client


def test_the_api_starts_a_run_with_defaults(api: Client) -> None:
    make_questions(2)
    response = api.post(
        "/api/inference-runs/create/",
        {
            "model_name": "fake-7b",
            "endpoint": "gpu-host",
            "split": "test",
            "weights": "closed",
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "queued" and body["endpoint"] == "gpu-host"
    # The form's defaults: a text model, the tables as the paper gives them.
    assert (body["modality"], body["table_format"]) == ("text", "paper")
    # A researcher sees the registered endpoint's name, not where it is or what holds its key.
    assert body["base_url"] is None and KEY_ENV not in response.content.decode()
    assert (body["temperature"], body["max_tokens"], body["concurrency"]) == (0.0, 128, 8)
    assert body["system_role"] and body["use_cache"] and body["data_scope"] == "real"
    assert body["config"]["prompt_format_sha256"] and body["submission"] is None
    assert api.get("/api/inference-runs/").json()["results"][0]["id"] == body["id"]
    assert api.get(f"/api/inference-runs/{body['id']}/").json()["model_name"] == "fake-7b"


def test_the_api_takes_an_own_endpoint_and_never_returns_its_key(api: Client) -> None:
    make_questions(1)
    response = api.post(
        "/api/inference-runs/create/",
        {
            "model_name": "gpt-x",
            "base_url": "https://own.example/v1/",
            "api_key": "sk-own-secret-1",
            "modality": "text",
            "table_format": "paper",
            "split": "test",
            "weights": "closed",
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["endpoint"] is None and body["base_url"] == "https://own.example/v1"
    assert body["api_key_given"] and "api_key" not in body
    run = InferenceRun.objects.get()
    for url in ("/api/inference-runs/", f"/api/inference-runs/{run.pk}/"):
        text = api.get(url).content.decode()
        assert "sk-own-secret-1" not in text and run.sealed_api_key not in text


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"api_key_env": "K_API_KEY"}, "api_key_env"),  # gone: endpoints hold their keys
        ({"endpoint": "", "base_url": "http://h/v1", "api_key": "two words"}, "api_key"),
        ({"temperature": 3}, "temperature"),
        ({"modality": "vision"}, "table_format"),
    ],
)
def test_the_api_says_which_field_is_wrong(api: Client, change, field) -> None:
    make_questions(1)
    data = {
        "model_name": "m",
        "endpoint": "gpu-host",
        "modality": "text",
        "table_format": "csv",
        "split": "test",
        "weights": "closed",
        **change,
    }
    response = api.post("/api/inference-runs/create/", data, content_type="application/json")
    body = response.json()
    assert response.status_code == 400 and (body.get("field") == field or field in body), body
    assert not InferenceRun.objects.exists()


def test_the_api_cancels_and_resumes_with_409_when_it_cannot(api: Client, researcher) -> None:
    make_questions(1)
    run = start(researcher, GPU_HOST)
    cancelled = api.post(f"/api/inference-runs/{run.pk}/cancel/")
    assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelled"
    again = api.post(f"/api/inference-runs/{run.pk}/cancel/")
    assert again.status_code == 409 and again.json()["current"] == {"status": "cancelled"}
    assert api.post(f"/api/inference-runs/{run.pk}/resume/").json()["status"] == "queued"
    busy = api.post(f"/api/inference-runs/{run.pk}/resume/")
    assert busy.status_code == 409 and "waiting for the inference worker" in busy.json()["detail"]


def test_the_api_refuses_people_who_cannot_start_runs(client: Client) -> None:
    make_questions(1)
    annotator = UserFactory(role="annotator")
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {Token.objects.create(user=annotator).key}"
    response = client.post(
        "/api/inference-runs/create/",
        {
            "model_name": "m",
            "endpoint": "gpu-host",
            "modality": "text",
            "table_format": "csv",
            "split": "test",
            "weights": "closed",
        },
        content_type="application/json",
    )
    assert response.status_code == 403
    assert client.get("/api/inference-runs/").json()["count"] == 0
    assert not InferenceResponse.objects.exists()


def test_the_form_reports_every_problem_at_once(logged_in: Client) -> None:
    make_questions(1)
    response = logged_in.post(
        "/leaderboard/inference/new/",
        {
            **FORM,
            "model_name": " ",
            "endpoint": "",
            "base_url": "",
            "temperature": "hot",
            "max_tokens": "0",
            "concurrency": "999",
            "weights": "",
            "modality": "vision",
        },
    )
    page = response.content.decode()
    assert response.status_code == 400
    for message in (
        "Choose a registered endpoint, or give your own endpoint&#x27;s base URL",
        "Enter a number.",  # the temperature, which the form cannot read
        "Max tokens should be between 1 and 8192",
        "Requests in flight should be between 1 and 256",
        "Say whether the model&#x27;s weights are open or closed",
        "choose the image format",
    ):
        assert message in page, message
    assert "Nothing was started" in page and not InferenceRun.objects.exists()


def test_the_api_reports_every_problem_at_once(api: Client) -> None:
    make_questions(1)
    response = api.post(
        "/api/inference-runs/create/",
        {
            "model_name": "fake-7b",
            "endpoint": "nowhere",
            "modality": "text",
            "table_format": "image",
            "split": "test",
            "weights": "open",
            "max_tokens": "many",
            "concurrency": 0,
            "api_key_env": "X_API_KEY",
        },
        content_type="application/json",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {
        "endpoint",
        "table_format",
        "max_tokens",
        "concurrency",
        "parameters_billions",
        "api_key_env",
    }
    assert "cannot read the table as an image" in errors["table_format"][0]
    assert errors["parameters_billions"][0].startswith("Give the parameter count")
    assert all(m[0].isupper() for messages in errors.values() for m in messages)
    assert not InferenceRun.objects.exists()
