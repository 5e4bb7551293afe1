"""A stranger with a researcher account, second review: what one person's endpoint, runs and
submissions may make the workers, the database and the public board do."""

from __future__ import annotations

import io
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import InferenceResponse, InferenceRun, RunStatus, Submission
from leaderboard.services import (
    SubmissionInput,
    inference_run_cancel,
    inference_run_execute,
    inference_run_resume,
    submission_create,
    submission_delete,
)
from plumbing.errors import ApplicationError
from tests.factories import SubmissionFactory, UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import (
    make_questions,
    quick_inference,
    right_answer,
    start,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch) -> None:
    quick_inference(settings, monkeypatch)
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True  # the fake endpoint is on 127.0.0.1


@pytest.fixture
def stranger():
    return UserFactory(username="mallory", role="researcher")


# --- The researcher's own endpoint -----------------------------------------------------


def test_an_endpoint_answering_megabytes_per_question_gets_nothing_stored(
    stranger, settings
) -> None:
    settings.INFERENCE_MAX_ANSWER_CHARS = 1000
    make_questions(4)
    with FakeOpenAI(lambda body: Reply("x" * 500_000)) as server:
        run = start(stranger, server.base_url, own=True)
        inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    stored = InferenceResponse.objects.filter(run=run)
    assert stored.count() == 4
    assert all(len(r.response) == 0 for r in stored)
    assert "500,000 characters long, over the 1,000 kept" in stored.first().error
    # Refused, not retried: one request per question.
    assert len(server.requests) == 4
    assert run.status == RunStatus.FAILED and "refused 4 of 4 prompts" in run.error


def test_an_answer_within_the_limit_is_kept_whole(stranger, settings) -> None:
    settings.INFERENCE_MAX_ANSWER_CHARS = 1000
    make_questions(2)
    with FakeOpenAI(lambda body: Reply("y" * 1000)) as server:
        run = start(stranger, server.base_url, own=True)
        inference_run_execute(run_id=run.pk)
    assert [len(r) for r in InferenceResponse.objects.values_list("response", flat=True)] == [
        1000,
        1000,
    ]


def test_an_endpoint_that_never_finishes_a_reply_stops_the_run_soon(stranger, settings) -> None:
    # Every request times out: without a stop, 40 questions x 6 attempts x the timeout.
    settings.INFERENCE_REQUEST_TIMEOUT = 0.2
    make_questions(40)
    with FakeOpenAI(lambda body: Reply("late", delay=30)) as server:
        run = start(stranger, server.base_url, own=True, concurrency=2)
        began = time.monotonic()
        inference_run_execute(run_id=run.pk)
        took = time.monotonic() - began
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "12 times in a row (No reply within 0.2 s)" in run.error
    assert InferenceResponse.objects.filter(run=run).count() < 10
    assert took < 10


# --- One researcher's share of the inference worker -------------------------------------


def test_a_researcher_may_have_only_a_few_runs_queued_or_running(stranger, settings) -> None:
    settings.INFERENCE_MAX_ACTIVE_RUNS = 2
    make_questions(2)
    start(stranger, "http://127.0.0.1:9/v1", own=True)
    second = start(stranger, "http://127.0.0.1:9/v1", own=True)
    with pytest.raises(ApplicationError, match="2 inference runs queued or running"):
        start(stranger, "http://127.0.0.1:9/v1", own=True)
    assert InferenceRun.objects.filter(created_by=stranger).count() == 2
    # Someone else is not held back by it.
    start(UserFactory(role="researcher"), "http://127.0.0.1:9/v1", own=True)
    # Cancelling one frees its place; resuming it takes the place again.
    inference_run_cancel(user=stranger, run_id=second.pk)
    third = start(stranger, "http://127.0.0.1:9/v1", own=True)
    with pytest.raises(ApplicationError, match="queued or running"):
        inference_run_resume(user=stranger, run_id=second.pk, enqueue=False)
    inference_run_cancel(user=stranger, run_id=third.pk)
    inference_run_resume(user=stranger, run_id=second.pk, enqueue=False)


def test_admins_are_not_held_to_the_run_limit(settings) -> None:
    settings.INFERENCE_MAX_ACTIVE_RUNS = 1
    make_questions(2)
    admin = UserFactory(role="admin")
    for _ in range(3):
        start(admin, "http://127.0.0.1:9/v1", own=True)


def test_the_run_limit_refusal_reaches_the_api(stranger, settings, client) -> None:
    settings.INFERENCE_MAX_ACTIVE_RUNS = 1
    make_questions(2)
    start(stranger, "http://127.0.0.1:9/v1", own=True)
    client.force_login(stranger)
    response = client.post(
        "/api/inference-runs/create/",
        {
            "model_name": "fake-7b",
            "base_url": "http://127.0.0.1:9/v1",
            "modality": "text",
            "table_format": "csv",
            "split": "test",
            "data_scope": "real",
            "weights": "closed",
        },
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "1 inference run queued or running" in response.content.decode()


# --- Names on the public board ----------------------------------------------------------


def _upload() -> SimpleUploadedFile:
    return SimpleUploadedFile("p.jsonl", b"")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("model_name", "GPT-4o\u200b", "U+200B"),  # a zero-width space
        ("model_name", "\u202eo4-TPG", "U+202E"),  # right-to-left override
        ("model_name", "Qwen\u2066 (reported in paper)\u2069", "U+2066"),
        ("model_name", "\ufeffLlama", "U+FEFF"),
        ("model_name", "GPT-4o\x1b[0m", "U+001B"),
        ("model_name", " GPT-4o", "start or end with spaces"),
        ("organisation", "Open\u200dAI", "U+200D"),
        # Line and paragraph separators are line breaks, refused as "\n" is (issue 32).
        ("model_name", "GPT-4o\u2028(reported in paper)", "U+2028"),
        ("organisation", "Open\u2029AI", "U+2029"),
    ],
)
def test_a_name_on_the_board_cannot_hide_characters(stranger, field, value, message) -> None:
    data = {
        "model_name": "m",
        "weights": "closed",
        "modality": "text",
        "table_format": "csv",
        "split": "validation",
        "data_scope": "real",
        field: value,
    }
    with pytest.raises(ApplicationError) as caught:
        submission_create(owner=stranger, data=SubmissionInput(**data), predictions=_upload())
    assert any(p.field == field and message in p.message for p in caught.value.problems), (
        caught.value.by_field
    )
    assert not Submission.objects.filter(owner=stranger).exists()


def test_an_inference_run_is_held_to_the_same_names(stranger) -> None:
    make_questions(2)
    with pytest.raises(ApplicationError) as caught:
        start(stranger, "http://127.0.0.1:9/v1", own=True, model_name="fake\u200b-7b")
    assert "U+200B" in caught.value.by_field["model_name"][0]


def test_ordinary_names_in_any_script_are_fine(stranger, settings) -> None:
    make_questions(1)
    start(stranger, "http://127.0.0.1:9/v1", own=True, organisation="Université Paris-Saclay")
    start(stranger, "http://127.0.0.1:9/v1", own=True, organisation="清华大学 · عربي")


# --- Disk: how many submissions one researcher keeps ------------------------------------


def test_a_researcher_keeps_a_bounded_number_of_submissions(stranger, settings) -> None:
    settings.SUBMISSION_MAX_STORED = 2
    ids = make_questions(1, split="validation")
    SubmissionFactory.create_batch(2, owner=stranger)
    line = f'{{"question_id": "{ids[0]}", "response": "x"}}\n'.encode()
    data = SubmissionInput(
        model_name="m",
        weights="closed",
        modality="text",
        table_format="csv",
        split="validation",
        data_scope="real",
    )
    upload = SimpleUploadedFile("p.jsonl", line)
    with pytest.raises(ApplicationError, match="You keep 2 submissions"):
        submission_create(owner=stranger, data=data, predictions=upload)
    # An inference run, which ends as a submission, is refused at the start too.
    with pytest.raises(ApplicationError, match="You keep 2 submissions"):
        start(stranger, "http://127.0.0.1:9/v1", own=True)
    # Deleting one makes room.
    submission_delete(submission=Submission.objects.filter(owner=stranger).first(), user=stranger)
    upload = SimpleUploadedFile("p.jsonl", io.BytesIO(line).read())
    assert submission_create(owner=stranger, data=data, predictions=upload).pk


def test_the_stored_limit_counts_only_ones_own(stranger, settings) -> None:
    settings.SUBMISSION_MAX_STORED = 1
    SubmissionFactory(owner=UserFactory(role="researcher"))
    make_questions(1)
    with FakeOpenAI(right_answer) as server:
        run = start(stranger, server.base_url, own=True)
        inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE


# --- Worker time: uploads, runs and re-scorings through the pages too -------------------


@pytest.fixture
def uploads_rate(settings):
    from django.core.cache import cache

    cache.clear()
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "uploads": "2/hour"}
    yield
    cache.clear()


def test_the_submit_page_shares_the_upload_rate_with_the_api(stranger, uploads_rate, client):
    client.force_login(stranger)
    assert client.post("/api/submissions/create/", {}).status_code == 400
    assert client.post("/leaderboard/submit/", {}).status_code == 400
    response = client.post("/leaderboard/submit/", {})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "many uploads, runs and re-scorings lately" in response.content.decode()
    assert client.post("/leaderboard/inference/new/", {}).status_code == 429


def test_rescoring_again_and_again_is_limited(stranger, uploads_rate, client) -> None:
    submission = SubmissionFactory(owner=stranger, status="scored")
    client.force_login(stranger)
    url = f"/api/submissions/{submission.pk}/rescore/"
    assert client.post(url).status_code == 202
    Submission.objects.filter(pk=submission.pk).update(status="scored")
    assert client.post(f"/leaderboard/submissions/{submission.pk}/rescore/").status_code == 302
    Submission.objects.filter(pk=submission.pk).update(status="scored", queued_at=None)
    assert client.post(url).status_code == 429
    page = client.post(f"/leaderboard/submissions/{submission.pk}/rescore/", follow=True)
    assert "many uploads, runs and re-scorings lately" in page.content.decode()
    assert Submission.objects.get(pk=submission.pk).status == "scored"


@pytest.mark.parametrize("url", ["/leaderboard/submit/", "/leaderboard/inference/new/"])
def test_an_empty_post_to_a_form_is_refused_not_a_server_error(stranger, client, url) -> None:
    client.force_login(stranger)
    response = client.post(url, {})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()


def test_runs_under_way_count_against_the_stored_submissions(settings, stranger) -> None:
    """Each run ends as a submission: counted only when it ended, three runs started under
    a limit of one gave three stored submissions."""
    settings.SUBMISSION_MAX_STORED = 1
    settings.INFERENCE_MAX_ACTIVE_RUNS = 5
    make_questions(2)
    with FakeOpenAI(right_answer) as server:
        first = start(stranger, server.base_url, own=True)
        with pytest.raises(ApplicationError, match="You keep 1 submission"):
            start(stranger, server.base_url, own=True)
        inference_run_execute(run_id=first.pk)
    assert Submission.objects.filter(owner=stranger).count() == 1
