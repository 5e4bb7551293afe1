"""``manage.py run_inference``: in the foreground, queued, cancelled, resumed, and resumed
after the process was killed with SIGKILL halfway through."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from dataset.models import Question
from leaderboard.models import InferenceResponse, InferenceRun, RunStatus, Status
from tests.conftest import REPO, worker_env
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import (
    KEY_ENV,
    asked,
    make_questions,
    registered,
    right_answer,
)

pytestmark = pytest.mark.django_db

NEW_RUN = ["--user", "ada", "--model", "fake-7b", "--table-format", "csv", "--parameters", "7"]


@pytest.fixture(autouse=True)
def setup(monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    UserFactory(username="ada", role="researcher")


def run_command(*args: str, stdin: str | None = None, monkeypatch=None) -> str:
    out = io.StringIO()
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    call_command("run_inference", *args, stdout=out)
    return out.getvalue()


def on(base_url: str) -> list[str]:
    """The options that choose the endpoint an admin registered at ``base_url``."""
    return ["--endpoint", registered(base_url).name]


def test_a_run_in_the_foreground_ends_as_a_scored_submission() -> None:
    make_questions(6, split="validation")
    with FakeOpenAI(right_answer) as server:
        out = run_command(*NEW_RUN, *on(server.base_url), "--split", "validation")
    run = InferenceRun.objects.get()
    assert f"Run {run.pk}: fake-7b at {run.endpoint.name}" in out
    assert f"Run {run.pk} is done: 6 answered (0 from the cache)" in out
    assert server.authorizations() == ["Bearer sk-test"] * 6
    assert "6/6 settled" in out  # the progress line
    assert "scored: recall 1.000" in out
    assert run.submission.status == Status.SCORED


def test_a_run_on_a_few_test_questions_shows_no_figure() -> None:
    make_questions(6)
    with FakeOpenAI(right_answer) as server:
        out = run_command(*NEW_RUN, *on(server.base_url))
    assert "scored; its overall figures are withheld: they would reveal fewer than 11" in out
    assert "recall" not in out


def test_enqueue_leaves_the_run_to_the_worker_and_cancel_stops_it(
    django_capture_on_commit_callbacks,
) -> None:
    make_questions(1)
    with django_capture_on_commit_callbacks() as queued:
        out = run_command(*NEW_RUN, *on("http://gpu-host:8000/v1"), "--enqueue")
    run = InferenceRun.objects.get()
    assert f"Run {run.pk} is queued" in out and len(queued) == 1
    assert "is cancelled" in run_command("--cancel", str(run.pk))
    assert InferenceRun.objects.get().status == RunStatus.CANCELLED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "m"], "A new run needs --user, --endpoint (or --base-url)"),
        ([*NEW_RUN, "--endpoint", "nope"], "There is no endpoint 'nope' that you may use"),
        ([*NEW_RUN, "--base-url", "http://127.0.0.1:8/v1"], "only endpoints an admin registered"),
        (
            [*NEW_RUN, "--base-url", "http://h/v1", "--concurrency", "0"],
            "--concurrency: Requests in flight should be between",
        ),
        (["--resume", "999"], "There is no inference run 999"),
        (
            ["--user", "nobody", "--model", "m", "--base-url", "http://h/v1"],
            "There is no user 'nobody'",
        ),
    ],
)
def test_mistakes_get_a_clear_message(args, message) -> None:
    make_questions(1)
    with pytest.raises(CommandError, match=re.escape(message)):
        run_command(*args)


def test_a_finished_run_cannot_be_resumed() -> None:
    make_questions(1)
    with FakeOpenAI(right_answer) as server:
        run_command(*NEW_RUN, *on(server.base_url))
    with pytest.raises(CommandError, match="its answers are a submission already"):
        run_command("--resume", str(InferenceRun.objects.get().pk))


def test_a_failed_run_says_how_to_resume(monkeypatch) -> None:
    make_questions(1)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(CommandError, match=r"is not set .* \(--resume \d+\)"):
        run_command(*NEW_RUN, *on("http://h/v1"))


def test_an_own_endpoints_key_comes_from_standard_input_and_again_to_resume(
    monkeypatch, settings
) -> None:
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True  # the test server is on loopback
    settings.INFERENCE_MAX_ATTEMPTS = 1
    make_questions(2)
    with FakeOpenAI(right_answer) as server:
        server.queue(Reply(status=503))
        with pytest.raises(CommandError, match=r"No answer to 1 question .*\(--resume \d+\)"):
            run_command(
                *NEW_RUN,
                "--base-url",
                server.base_url,
                "--api-key-stdin",
                stdin="sk-ada-own\n",
                monkeypatch=monkeypatch,
            )
        run = InferenceRun.objects.get()
        assert run.sealed_api_key == "" and run.needs_api_key  # erased when it failed
        with pytest.raises(CommandError, match="Give your endpoint's API key again"):
            run_command("--resume", str(run.pk))
        out = run_command(
            "--resume",
            str(run.pk),
            "--api-key-stdin",
            stdin="sk-ada-own\n",
            monkeypatch=monkeypatch,
        )
    assert "is done: 2 answered" in out
    # Only the researcher's key went there; none of the worker's.
    assert set(server.authorizations()) == {"Bearer sk-ada-own"}


@pytest.mark.django_db(transaction=True)
def test_a_killed_run_resumes_without_asking_answered_questions_again(
    tmp_path: Path, settings
) -> None:
    settings.INFERENCE_STALE_AFTER_SECONDS = 1
    make_questions(80)
    concurrency = 4
    with FakeOpenAI(right_answer, latency=0.05) as server:
        # Commits every 100 ms: the whole run takes about a second, the platform's interval,
        # and the kill must come between two commits of the run.
        env = {**worker_env(tmp_path), KEY_ENV: "sk-test", "INFERENCE_SAVE_MS": "100"}
        log = open(tmp_path / "command.log", "w")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "run_inference", *NEW_RUN, *on(server.base_url)]
            + ["--concurrency", str(concurrency)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while InferenceResponse.objects.count() < 25:
                assert proc.poll() is None, (tmp_path / "command.log").read_text()
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
        run = InferenceRun.objects.get()
        assert run.status == RunStatus.RUNNING  # as the killed process left it
        saved = set(InferenceResponse.objects.values_list("question_id", flat=True))
        assert 25 <= len(saved) < 80

        time.sleep(1.1)  # the heartbeat goes stale: the process is gone
        out = run_command("--resume", str(run.pk))

    assert "is done: 80 answered" in out and "scored: recall 1.000" in out
    assert InferenceResponse.objects.count() == 80
    times = Counter(asked(server))
    assert len(times) == 80
    # Answers saved before the kill were never asked for again. What went out twice is what
    # the kill lost: the requests in flight (one per slot) and the answers that had arrived
    # but were not yet committed (the kill comes right after the commit the test saw).
    numbers = Question.objects.filter(pk__in=saved).values_list("text", flat=True)
    assert all(times[t.removeprefix("What is value number ").rstrip("?")] == 1 for t in numbers)
    assert sum(times.values()) - 80 <= 2 * concurrency
