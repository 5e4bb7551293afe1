"""Inference runs against a local OpenAI-compatible server that the tests start: retries,
failures, the cache, cancelling, resuming, and the submission a finished run becomes."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import time
from collections import Counter
from datetime import timedelta
from email.utils import format_datetime

import httpx2
import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from django.utils import timezone
from PIL import Image

from dataset.models import Question
from dataset.selectors.prompts import prompt_records
from endpoints.client import RetryPolicy, retry_after_seconds
from endpoints.models import Endpoint
from hctqa.core.prompts import nonsense_mapping
from leaderboard.models import (
    CachedResponse,
    DailyLimitEntry,
    InferenceResponse,
    InferenceRun,
    QuestionResult,
    ResponseStatus,
    RunStatus,
    Status,
)
from leaderboard.services import (
    inference_run_cancel,
    inference_run_execute,
    inference_run_resume,
    inference_run_sweep,
    submission_score,
)
from leaderboard.services.inference.execution import CHUNK
from plumbing.errors import ApplicationError, ConflictError
from tests.factories import SIMPLE_CSV, QuestionFactory, TableFactory, UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import (
    KEY_ENV,
    asked,
    last_user_text,
    make_questions,
    quick_inference,
    registered,
    right_answer,
    start,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch) -> None:
    quick_inference(settings, monkeypatch)
    # Several tests queue a few runs by one researcher without executing them; the limit on
    # that has its own tests (test_hostile_researcher).
    settings.INFERENCE_MAX_ACTIVE_RUNS = 0


@pytest.fixture
def researcher():
    return UserFactory(username="ada", role="researcher")


@pytest.fixture
def server():
    with FakeOpenAI(right_answer) as fake:
        yield fake


def execute(run: InferenceRun, **kwargs) -> InferenceRun:
    inference_run_execute(run_id=run.pk, **kwargs)
    run.refresh_from_db()
    return run


def test_a_run_answers_every_question_and_becomes_a_scored_submission(
    researcher, server, django_capture_on_commit_callbacks
) -> None:
    make_questions(7)
    run = start(researcher, server.base_url, description="Greedy decoding.")
    with django_capture_on_commit_callbacks() as queued:
        run = execute(run)
    assert run.status == RunStatus.DONE, run.error
    assert (run.total, run.answered, run.cached, run.failed, run.progress) == (7, 7, 0, 0, 100)
    assert InferenceResponse.objects.filter(run=run, attempts=1, from_cache=False).count() == 7
    # What was sent: the model, the decoding parameters and the prompt.
    body = server.requests[0]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("fake-7b", 0.0, 128)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Region,2019" in last_user_text(body)  # the table, as plain CSV
    # The submission: queued for scoring on commit, scored like an upload.
    submission = run.submission
    assert len(queued) == 1 and submission.status == Status.QUEUED
    assert submission_score(submission_id=submission.pk) == "scored"
    submission.refresh_from_db()
    score = submission.score_for()
    # Every answer right; seven test questions are too few for a figure to be shown.
    assert score.withheld and score.recall is None and score.coverage == 1.0
    assert QuestionResult.objects.filter(submission=submission, recall=1.0).count() == 7
    assert (submission.model_name, submission.owner, submission.table_format) == (
        "fake-7b",
        researcher,
        "csv",
    )
    assert submission.description.startswith("Greedy decoding.\n\nAnswers produced on the platform")
    # Everything needed to run it again.
    config = run.config
    assert config["questions"] == 7 and len(config["questions_sha256"]) == 64
    assert len(config["prompt_format_sha256"]) == 64 and "platform_commit" in config
    assert config["temperature"] == 0 and config["max_tokens"] == 128
    # The endpoint by name: neither its key nor the variable holding it is on record.
    assert config["registered_endpoint"] == run.endpoint.name and config["base_url"] is None
    assert "sk-test" not in str(config) and KEY_ENV not in str(config)
    # The exact prompts sent, provable from the requests the server saw.
    from hctqa.core.prompts import prompt_sha256

    by_text = dict(Question.objects.values_list("text", "id"))
    seen = sorted(
        (by_text[f"What is value number {n}?"], prompt_sha256(b["messages"]))
        for n, b in zip(asked(server), server.requests, strict=True)
    )
    lines = "\n".join(f"{qid} {digest}" for qid, digest in seen)
    assert config["prompts_sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    assert config["answered_from_cache"] == 0


def test_429_then_500_then_success_saves_one_answer_after_three_attempts(
    researcher, server
) -> None:
    make_questions(1)
    server.queue(Reply(status=429), Reply(status=500))
    run = execute(start(researcher, server.base_url))
    assert run.status == RunStatus.DONE
    response = InferenceResponse.objects.get(run=run)
    assert (response.status, response.attempts, response.response) == ("answered", 3, "gold-0")
    assert len(server.requests) == 3


def test_a_question_is_given_up_after_the_last_attempt_and_sent_again_on_resume(
    researcher, server, settings
) -> None:
    settings.INFERENCE_MAX_ATTEMPTS = 3
    make_questions(2)
    server.queue(*[Reply(status=503, error="overloaded")] * 3)
    run = execute(start(researcher, server.base_url, concurrency=1))
    assert run.status == RunStatus.FAILED and run.submission is None
    assert run.error.startswith("No answer to 1 question (")
    assert "resume the run" in run.error and "HTTP 503: overloaded" in run.error
    failed = InferenceResponse.objects.get(run=run, status=ResponseStatus.FAILED)
    assert failed.attempts == 3 and "No answer after 3 attempts" in failed.error
    sent_before = len(server.requests)

    run = execute(inference_run_resume(user=researcher, run_id=run.pk, enqueue=False))
    assert run.status == RunStatus.DONE and run.failed == 0 and run.answered == 2
    # Only the failed question went out again.
    assert len(server.requests) == sent_before + 1


def test_a_slow_reply_times_out_and_is_retried(researcher, server, settings) -> None:
    settings.INFERENCE_REQUEST_TIMEOUT = 0.3
    make_questions(1)
    server.queue(Reply("too late", delay=1.0))
    run = execute(start(researcher, server.base_url))
    response = InferenceResponse.objects.get(run=run)
    assert (response.response, response.attempts) == ("gold-0", 2)


def test_a_server_that_is_down_counts_as_a_failure_to_retry(researcher, settings) -> None:
    settings.INFERENCE_MAX_ATTEMPTS = 2
    make_questions(1)
    run = execute(start(researcher, "http://127.0.0.1:9/v1"))  # discard port: refused
    assert run.status == RunStatus.FAILED
    assert "Could not reach the endpoint" in InferenceResponse.objects.get(run=run).error


def test_a_host_that_is_down_stops_the_run_instead_of_trying_every_question(
    researcher, settings
) -> None:
    settings.INFERENCE_RETRY_BASE_MS = 1
    make_questions(40)
    run = execute(start(researcher, "http://127.0.0.1:9/v1", concurrency=2))
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("The endpoint is unreachable: Could not reach it 12 times")
    # Stopped early: most questions were never tried, and resuming later tries them.
    assert InferenceResponse.objects.filter(run=run).count() < 10


def test_an_endpoint_behind_a_proxy_is_reached_through_it(researcher, server, monkeypatch) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = server.base_url.removesuffix("/v1")  # the fake server answers as the proxy
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)
    make_questions(2)
    run = execute(start(researcher, "http://model-host.invalid/v1"))
    assert run.status == RunStatus.DONE and len(server.requests) == 2


def test_retry_after_is_read_in_every_form() -> None:
    assert retry_after_seconds(httpx2.Headers({"retry-after": "3"})) == 3
    assert retry_after_seconds(httpx2.Headers({"retry-after-ms": "250"})) == 0.25
    later = format_datetime(timezone.now() + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_seconds(httpx2.Headers({"retry-after": later})) <= 30
    assert retry_after_seconds(httpx2.Headers({"retry-after": "soon"})) is None
    policy = RetryPolicy(base_seconds=1, max_seconds=8)
    assert 2 <= policy.delay(3, None) <= 4  # half of 2**2 fixed, half jitter
    assert 8 <= policy.delay(3, 30) <= 8.9  # Retry-After, capped, plus a little jitter
    assert 4 <= policy.delay(10, None) <= 8


def test_a_request_the_endpoint_rejects_is_submitted_as_an_empty_answer(researcher, server) -> None:
    make_questions(3)
    server.queue(Reply(status=400, error="prompt is longer than the context"))
    run = execute(start(researcher, server.base_url, concurrency=1))
    assert run.status == RunStatus.DONE and (run.answered, run.failed) == (2, 1)
    rejected = InferenceResponse.objects.get(run=run, status=ResponseStatus.REJECTED)
    assert rejected.error == "HTTP 400: prompt is longer than the context"
    assert rejected.attempts == 1  # never retried
    submission_score(submission_id=run.submission_id)
    # The refused prompt is the system's answer: empty, scored 0 under both rules versions,
    # so the run answers every question (as one on the test split must).
    for rules in ("2025-05", "2025-10"):
        score = run.submission.score_for(rules)
        assert (score.coverage, score.n_questions, score.excluded) == (1.0, 3, 0)
    empty = QuestionResult.objects.get(submission=run.submission, question=rejected.question)
    assert (empty.prediction, empty.recall, empty.recall_2025_10) == ("", 0, 0)


def test_a_run_the_endpoint_mostly_refused_stays_off_the_board_until_resumed(
    researcher, server
) -> None:
    make_questions(4)
    server.queue(*[Reply(status=400, error="this model takes no images")] * 3)
    run = execute(start(researcher, server.base_url, concurrency=1))
    assert run.status == RunStatus.FAILED and run.submission is None
    assert run.error.startswith("The endpoint refused 3 of 4 prompts (HTTP 400: this model")
    # Once the endpoint is fixed, resuming sends the refused prompts again.
    run = execute(inference_run_resume(user=researcher, run_id=run.pk, enqueue=False))
    assert run.status == RunStatus.DONE and run.answered == 4


@pytest.mark.parametrize("status", [401, 404])
def test_a_wrong_key_or_model_stops_the_run_at_once(researcher, status) -> None:
    make_questions(20)
    with FakeOpenAI(lambda body: Reply(status=status, error="no such model")) as server:
        run = execute(start(researcher, server.base_url, concurrency=2))
    assert run.status == RunStatus.FAILED
    assert f"The endpoint refused the run: HTTP {status}: no such model" in run.error
    # At most one request per slot: after the first refusal nothing new is sent.
    assert len(server.requests) <= 2 and not InferenceResponse.objects.exists()


def test_a_missing_key_variable_fails_the_run_with_a_clear_error(
    researcher, server, monkeypatch
) -> None:
    make_questions(2)
    run = start(researcher, server.base_url)  # the variable need not exist to start a run
    monkeypatch.delenv(KEY_ENV)
    run = execute(run)
    assert run.status == RunStatus.FAILED
    assert f"The key of endpoint {run.endpoint.name} is not set" in run.error
    assert KEY_ENV not in run.error  # researchers read it; the variable stays the admin's
    assert not server.requests


def test_a_variable_no_longer_allowed_is_not_read_when_the_run_executes(
    researcher, server, settings
) -> None:
    make_questions(1)
    run = start(researcher, server.base_url)
    settings.ENDPOINT_KEY_VARIABLES = ["OPENAI_API_KEY"]
    run = execute(run)
    assert run.status == RunStatus.FAILED and "a variable the platform no longer sends" in run.error
    assert not server.requests


def test_a_second_identical_run_is_answered_from_the_cache(researcher, server) -> None:
    make_questions(5)
    first = execute(start(researcher, server.base_url))
    assert CachedResponse.objects.count() == 5 and len(server.requests) == 5
    second = execute(start(researcher, server.base_url, visibility="private"))
    assert second.status == RunStatus.DONE
    assert (second.answered, second.cached) == (5, 5)
    assert len(server.requests) == 5  # nothing sent
    hits = InferenceResponse.objects.filter(run=second, from_cache=True)
    assert hits.count() == 5 and set(hits.values_list("attempts", flat=True)) == {0}
    assert set(hits.values_list("response", flat=True)) == set(
        InferenceResponse.objects.filter(run=first).values_list("response", flat=True)
    )


@pytest.mark.parametrize(
    "change", [{"temperature": 0.7}, {"max_tokens": 64}, {"model_name": "other-7b"}]
)
def test_other_decoding_parameters_or_models_miss_the_cache(researcher, server, change) -> None:
    make_questions(2)
    execute(start(researcher, server.base_url))
    run = execute(start(researcher, server.base_url, **change))
    assert run.cached == 0 and len(server.requests) == 4


def test_a_run_may_skip_the_cache(researcher, server) -> None:
    make_questions(2)
    execute(start(researcher, server.base_url))
    run = execute(start(researcher, server.base_url, use_cache=False))
    assert run.cached == 0 and len(server.requests) == 4


def test_cancelling_stops_a_running_run_within_a_second(researcher) -> None:
    make_questions(40)
    with FakeOpenAI(right_answer, latency=0.1) as server:
        run = start(researcher, server.base_url, concurrency=2)

        def cancel_after_a_few(progress) -> None:
            if progress.answered >= 4:
                inference_run_cancel(user=researcher, run_id=run.pk)

        began = time.monotonic()
        run = execute(run, on_progress=cancel_after_a_few)
        took = time.monotonic() - began
    assert run.status == RunStatus.CANCELLED and run.submission is None
    assert 4 <= run.answered < 40 and took < 2.5
    assert InferenceResponse.objects.filter(run=run).count() == run.answered
    assert len(server.requests) < 40


def test_answers_are_committed_together_at_most_every_save_interval(researcher, settings) -> None:
    # Each commit costs CPU that the endpoint's server may share: every 50 ms cost a vLLM on
    # the same host a tenth of its throughput. The answers of an interval go in one commit.
    settings.INFERENCE_SAVE_MS = 300
    make_questions(90)
    reports: list[tuple[float, int]] = []
    with FakeOpenAI(right_answer, latency=0.02) as server:
        run = start(researcher, server.base_url, concurrency=2)
        run = execute(run, on_progress=lambda p: reports.append((time.monotonic(), p.answered)))
    assert run.status == RunStatus.DONE and run.answered == 90
    # The first report is the start's, the last the commit after the loop, whenever it ends.
    times = [t for t, _ in reports[:-1]]
    counts = [n for _, n in reports]
    assert len(reports) >= 4 and counts[0] == 0
    assert all(b - a >= 0.3 for a, b in zip(times, times[1:], strict=False))
    # Several answers in each commit of the loop.
    assert all(b - a > 1 for a, b in zip(counts[:-1], counts[1:-1], strict=False))


def test_a_queued_run_is_cancelled_at_once_and_a_finished_one_cannot_be(researcher, server) -> None:
    make_questions(2)
    queued = start(researcher, server.base_url)
    assert inference_run_cancel(user=researcher, run_id=queued.pk).status == RunStatus.CANCELLED
    assert execute(queued).status == RunStatus.CANCELLED and not server.requests
    done = execute(start(researcher, server.base_url))
    with pytest.raises(ConflictError, match="This run is already done"):
        inference_run_cancel(user=researcher, run_id=done.pk)
    with pytest.raises(ConflictError, match="its answers are a submission already"):
        inference_run_resume(user=researcher, run_id=done.pk)


def test_an_interrupted_run_resumes_without_asking_again(researcher, server, settings) -> None:
    # A commit after every answer: with the second between commits the platform keeps, the
    # first report would be the run's last and the interrupt would come after every answer.
    settings.INFERENCE_SAVE_MS = 0
    make_questions(12)
    run = start(researcher, server.base_url, concurrency=1)

    def interrupt(progress) -> None:
        if progress.answered >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        inference_run_execute(run_id=run.pk, on_progress=interrupt)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "Interrupted" in run.error
    saved = set(InferenceResponse.objects.filter(run=run).values_list("question_id", flat=True))
    assert 5 <= len(saved) < 12
    sent_before = len(server.requests)

    run = execute(inference_run_resume(user=researcher, run_id=run.pk, enqueue=False))
    assert run.status == RunStatus.DONE and run.answered == 12
    # No saved answer was asked for again; only the one request in flight at the interrupt
    # (concurrency 1) may have been sent twice.
    assert len(server.requests) - sent_before == 12 - len(saved)
    times = Counter(asked(server))
    assert len(times) == 12 and sum(times.values()) <= 13
    for text in Question.objects.filter(pk__in=saved).values_list("text", flat=True):
        assert times[text.removeprefix("What is value number ").rstrip("?")] == 1


def test_a_run_pauses_at_its_time_budget_and_continues(
    researcher, server, django_capture_on_commit_callbacks
) -> None:
    # More questions than the run prepares ahead of its requests, so some are left.
    n = 2 * CHUNK + 20
    make_questions(n)
    run = start(researcher, server.base_url, concurrency=2)
    with django_capture_on_commit_callbacks() as callbacks:
        assert inference_run_execute(run_id=run.pk, time_budget=0) == "paused"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and len(callbacks) == 1  # its continuation
    assert 0 < run.answered < n
    assert execute(run).status == RunStatus.DONE and run.answered == n
    assert len(server.requests) == n  # nothing asked twice


def test_a_task_time_limit_pauses_the_run_instead_of_failing_it(
    researcher, server, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    from leaderboard.services.inference import execution

    make_questions(3)
    run = start(researcher, server.base_url)

    def out_of_time(self, pool, prompts, pending):
        raise SoftTimeLimitExceeded()

    real_loop = execution._Execution._loop
    monkeypatch.setattr(execution._Execution, "_loop", out_of_time)
    with django_capture_on_commit_callbacks() as callbacks:
        assert inference_run_execute(run_id=run.pk) == "paused"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.error == "" and len(callbacks) == 1
    monkeypatch.setattr(execution._Execution, "_loop", real_loop)
    assert execute(run).status == RunStatus.DONE


def test_a_run_whose_questions_all_settle_as_its_time_runs_out_ends(
    researcher, server, settings, django_capture_on_commit_callbacks
) -> None:
    # A failing endpoint once kept such a run pausing and resending for ever.
    settings.INFERENCE_MAX_ATTEMPTS = 1
    make_questions(3)
    server.queue(*[Reply(status=503, error="down")] * 3)
    run = start(researcher, server.base_url, concurrency=1)
    with django_capture_on_commit_callbacks() as callbacks:
        inference_run_execute(run_id=run.pk, time_budget=0)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and not callbacks
    assert run.error.startswith("No answer to 3 questions")


def test_a_continuation_does_not_resend_questions_that_failed(researcher, server) -> None:
    ids = make_questions(3)
    run = start(researcher, server.base_url)
    InferenceResponse.objects.create(
        run=run,
        question_id=ids[0],
        status=ResponseStatus.FAILED,
        error="HTTP 503: down",
        prompt_sha256="0",
        attempts=6,
    )
    run = execute(run)
    assert sorted(asked(server)) == ["1", "2"]
    assert run.status == RunStatus.FAILED and run.error.startswith("No answer to 1 question (")
    # Resuming by hand is what sends it again.
    run = execute(inference_run_resume(user=researcher, run_id=run.pk, enqueue=False))
    assert run.status == RunStatus.DONE and sorted(asked(server)) == ["0", "1", "2"]


def test_the_sweeper_sends_a_long_queued_run_again(
    researcher, server, settings, django_capture_on_commit_callbacks
) -> None:
    make_questions(1)
    forgotten = start(researcher, server.base_url)
    waiting = start(researcher, server.base_url)
    long_ago = timezone.now() - timedelta(seconds=settings.INFERENCE_QUEUED_RESEND_SECONDS + 5)
    InferenceRun.objects.filter(pk=forgotten.pk).update(queued_at=long_ago)
    with django_capture_on_commit_callbacks() as callbacks:
        result = inference_run_sweep()
    assert result.requeued == [forgotten.pk] and len(callbacks) == 1
    assert InferenceRun.objects.get(pk=waiting.pk).status == RunStatus.QUEUED


def test_inference_runs_are_routed_to_the_inference_queue() -> None:
    from hctqa.celery import app
    from leaderboard.tasks import run_inference

    route = app.amqp.router.route({}, run_inference.name)
    assert route["queue"].name == "inference"


def test_a_run_has_one_executor_at_a_time(researcher, server) -> None:
    make_questions(2)
    run = start(researcher, server.base_url)
    InferenceRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now(), lease="someone-else"
    )
    assert inference_run_execute(run_id=run.pk) == "not started: the run is running"
    assert not server.requests


def test_the_sweeper_resumes_a_run_whose_worker_died(
    researcher, server, settings, django_capture_on_commit_callbacks
) -> None:
    settings.INFERENCE_MAX_AUTO_RESUMES = 2
    make_questions(2)
    dead = timezone.now() - timedelta(seconds=settings.INFERENCE_STALE_AFTER_SECONDS + 5)
    lost = start(researcher, server.base_url)
    given_up = start(researcher, server.base_url)
    to_cancel = start(researcher, server.base_url)
    alive = start(researcher, server.base_url)
    InferenceRun.objects.filter(pk__in=[lost.pk, given_up.pk, to_cancel.pk]).update(
        status=RunStatus.RUNNING, heartbeat_at=dead, attempts=1
    )
    InferenceRun.objects.filter(pk=given_up.pk).update(attempts=2)
    InferenceRun.objects.filter(pk=to_cancel.pk).update(cancel_requested=True)
    InferenceRun.objects.filter(pk=alive.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now()
    )
    with django_capture_on_commit_callbacks() as callbacks:
        result = inference_run_sweep()
    assert (result.requeued, result.failed, result.cancelled) == (
        [lost.pk],
        [given_up.pk],
        [to_cancel.pk],
    )
    assert len(callbacks) == 1
    assert InferenceRun.objects.get(pk=alive.pk).status == RunStatus.RUNNING
    assert "The worker stopped 2 times" in InferenceRun.objects.get(pk=given_up.pk).error
    assert execute(lost).status == RunStatus.DONE


def test_nonsense_answers_are_mapped_back_before_scoring(researcher) -> None:
    table = TableFactory(split="test", canonical_csv=SIMPLE_CSV)
    QuestionFactory(table=table, text="Which region has 22 females?", gold_answer="{South}")
    token = nonsense_mapping([SIMPLE_CSV])["south"]

    def speaks_nonsense(body) -> Reply:
        text = last_user_text(body)
        assert "South" not in text and token in text
        return Reply(token.lower())  # models change the case; still mapped back

    with FakeOpenAI(speaks_nonsense) as server:
        run = execute(start(researcher, server.base_url, table_format="nonsensical_csv"))
    assert InferenceResponse.objects.get(run=run).response == token.lower()
    submission_score(submission_id=run.submission_id)
    result = run.submission.results.get()
    assert result.prediction == "South" and result.cc


def test_one_shot_prompts_carry_a_training_example_from_another_table(researcher, server) -> None:
    # The smallest table's only question has no gold answer: no example, in runs and the
    # export alike.
    QuestionFactory(table=TableFactory(split="train", canonical_csv="a\n1\n"), gold_answer="")
    small = TableFactory(split="train", canonical_csv=SIMPLE_CSV)
    QuestionFactory(table=small, text="Example question?", gold_answer="{42}")
    QuestionFactory(table=TableFactory(split="train"), text="Second example?", gold_answer="{7}")
    make_questions(2)
    run = execute(start(researcher, server.base_url, prompt_style="one_shot", split="all"))
    assert run.status == RunStatus.DONE and len(run.config["example_question_ids"]) == 2
    for body in server.requests:
        messages = body["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
        # The smallest table's question, unless the question is on that very table.
        own = "Example question?" in messages[3]["content"]
        expected = ("Second example?", "{7}") if own else ("Example question?", "{42}")
        assert expected[0] in messages[1]["content"] and messages[2]["content"] == expected[1]
    # Exactly the prompts of the prompt export.
    exported = prompt_records(table_format="csv", split="all", prompt_style="one_shot")
    assert sorted(str(r.prompt) for r in exported) == sorted(
        str(b["messages"]) for b in server.requests
    )


def test_vision_runs_send_the_table_as_an_image(researcher, server) -> None:
    make_questions(1)
    run = execute(
        start(
            researcher, server.base_url, modality="vision", table_format="image", system_role=False
        )
    )
    assert run.status == RunStatus.DONE
    content = server.requests[0]["messages"][0]["content"]
    assert server.requests[0]["messages"][0]["role"] == "user"  # no system role
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_tables_own_image_is_sent_as_png(researcher, server, settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    photo = io.BytesIO()
    Image.new("RGB", (37, 23), "white").save(photo, format="JPEG")
    table = TableFactory(split="test", image=ContentFile(photo.getvalue(), name="scan.jpg"))
    QuestionFactory(table=table)
    execute(start(researcher, server.base_url, modality="vision", table_format="image"))
    url = server.requests[0]["messages"][1]["content"][1]["image_url"]["url"]
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert (sent.format, sent.size) == ("PNG", (37, 23))


def test_a_tables_image_the_worker_cannot_read_stops_the_run(
    researcher, server, settings, tmp_path
) -> None:
    # Drawing the table instead would send other prompts than the export shows.
    settings.MEDIA_ROOT = tmp_path
    photo = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(photo, format="PNG")
    table = TableFactory(split="test", image=ContentFile(photo.getvalue(), name="scan.png"))
    QuestionFactory(table=table)
    (tmp_path / table.image.name).unlink()  # the GPU host has no copy of the media folder
    run = execute(start(researcher, server.base_url, modality="vision", table_format="image"))
    assert run.status == RunStatus.FAILED and not server.requests
    assert f"The image of table {table.pk}" in run.error and "MEDIA_ROOT" in run.error


def test_a_test_split_run_takes_one_daily_slot_for_itself_and_its_submission(
    researcher, server, settings
) -> None:
    settings.SUBMISSION_DAILY_TEST_LIMIT = 2
    make_questions(2)
    run = execute(start(researcher, server.base_url))
    entry = DailyLimitEntry.objects.get()
    assert entry.inference_run == run and entry.submission == run.submission
    start(researcher, server.base_url)
    with pytest.raises(ApplicationError, match="You have made your 2 test-split submissions"):
        start(researcher, server.base_url)
    # Other splits are not limited.
    make_questions(1, split="validation")
    start(researcher, server.base_url, split="validation")


def test_one_endpoint_has_one_spelling_so_the_cache_finds_it(researcher, server) -> None:
    make_questions(1)
    port = server.base_url.split(":")[2].split("/")[0]
    run = start(researcher, f"HTTP://LocalHost:{port}/v1/")
    assert run.base_url == f"http://localhost:{port}/v1"
    assert start(researcher, "https://GPU.example:443/v1").base_url == "https://gpu.example/v1"
    own = start(researcher, "https://Own.example:443/v1/", own=True)
    assert own.base_url == "https://own.example/v1"


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"endpoint": "nope"}, "endpoint", "no endpoint 'nope' that you may use"),
        ({"api_key": "sk-mine"}, "base_url", "not both"),
        ({"own": True, "base_url": ""}, "endpoint", "Choose a registered endpoint"),
        ({"own": True, "base_url": "gpu-host:8000"}, "base_url", "http(s)://host"),
        ({"own": True, "base_url": "http://gpu:99999/v1"}, "base_url", "http(s)://host"),
        ({"own": True, "base_url": "http://[::1/v1"}, "base_url", "http(s)://host"),
        ({"own": True, "base_url": "http://169.254.169.254/v1"}, "base_url", "link-local"),
        ({"own": True, "base_url": "http://[fe80::1]:8000/v1"}, "base_url", "link-local"),
        ({"own": True, "base_url": "http://u:pw@gpu:8000/v1"}, "base_url", "no user name"),
        ({"own": True, "base_url": "http://127.0.0.1:8/v1"}, "base_url", "an admin registered"),
        ({"own": True, "api_key": "sk live"}, "api_key", "printable characters"),
        ({"own": True, "api_key": "sk-1\r\nX-Evil: 1"}, "api_key", "printable characters"),
        ({"parameters_billions": 0}, "parameters_billions", "more than 0"),
        ({"parameters_billions": -7}, "parameters_billions", "more than 0"),
        ({"model_name": "  "}, "model_name", "model's name"),
        ({"table_format": "image"}, "table_format", "cannot read the table as an image"),
        ({"modality": "vision"}, "table_format", "choose the image format"),
        ({"table_format": "other"}, "table_format", "one of paper, csv"),
        ({"prompt_style": "few_shot"}, "prompt_style", "zero_shot, one_shot"),
        ({"temperature": 2.5}, "temperature", "between 0.0 and 2.0"),
        ({"max_tokens": 0}, "max_tokens", "between 1 and 8192"),
        ({"concurrency": 257}, "concurrency", "between 1 and 256"),
        ({"parameters_billions": None}, "parameters_billions", "parameter count"),
        ({"split": "validation"}, "split", "no verified questions on real tables"),
        ({"prompt_style": "one_shot"}, "prompt_style", "need worked examples"),
    ],
)
def test_a_bad_request_is_refused_with_the_reason(researcher, change, field, message) -> None:
    make_questions(1)
    fields = {"base_url": "http://gpu-host:8000/v1", **change}
    with pytest.raises(ApplicationError, match=re.escape(message)) as caught:
        start(researcher, fields.pop("base_url"), **fields)
    assert caught.value.field == field
    assert not InferenceRun.objects.exists() and not DailyLimitEntry.objects.exists()


def test_a_registered_endpoint_serves_only_its_models_and_its_people(researcher, server) -> None:
    make_questions(1)
    endpoint = registered(server.base_url, model_names=["fake-7b"])
    with pytest.raises(ApplicationError, match="serves fake-7b, not other-70b") as caught:
        start(researcher, server.base_url, model_name="other-70b")
    assert caught.value.field == "model_name"
    # Closed to researchers at large: only the people and groups it names.
    Endpoint.objects.filter(pk=endpoint.pk).update(open_to_researchers=False)
    with pytest.raises(ApplicationError, match="that you may use"):
        start(researcher, server.base_url)
    endpoint.users.add(researcher)
    assert start(researcher, server.base_url).endpoint == endpoint
    endpoint.users.clear()
    endpoint.groups.add(Group.objects.get(name="researcher"))
    assert start(researcher, server.base_url).endpoint == endpoint
    # Inactive: nobody starts a run on it, and a run already queued does not send.
    queued = start(researcher, server.base_url)
    Endpoint.objects.filter(pk=endpoint.pk).update(is_active=False)
    with pytest.raises(ApplicationError, match="that you may use"):
        start(researcher, server.base_url)
    assert execute(queued).status == RunStatus.FAILED and not server.requests


def test_only_researchers_and_admins_start_runs_and_only_owners_change_them(server) -> None:
    make_questions(1)
    with pytest.raises(PermissionDenied):
        start(UserFactory(role="annotator"), server.base_url)
    owner = UserFactory(role="researcher")
    run = start(owner, server.base_url)
    with pytest.raises(PermissionDenied):
        inference_run_cancel(user=UserFactory(role="researcher"), run_id=run.pk)
    admin_run = start(UserFactory(role="admin"), server.base_url)
    assert inference_run_cancel(user=UserFactory(role="admin"), run_id=admin_run.pk).status == (
        RunStatus.CANCELLED
    )


def test_an_endpoint_without_a_model_list_is_not_held_to_one(researcher, server, client) -> None:
    """Some servers and proxies answer chat completions but have no ``GET /models`` (the fake
    server answers it 501): the run goes on, and its page says the context is not known."""
    make_questions(3)
    run = start(researcher, server.base_url)
    assert run.config["context_length"] is None and run.context_length is None
    run = execute(run)
    assert run.status == RunStatus.DONE and run.too_long == 0
    client.force_login(researcher)
    page = client.get(run.get_absolute_url()).content.decode()
    assert "not reported by the endpoint · a longer prompt is not answered" in page
