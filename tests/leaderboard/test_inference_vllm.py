"""Inference runs against a real vLLM server (issue 31): vLLM's CPU build serving a tiny Llama
with random weights, on the benchmark's real test questions. One server for the test
session, started once (a minute or two): every test that needs it is in this module, so it
is stopped as soon as they are done, not at the end of the whole suite. The vision run
starts a tiny BLIP-2 of its own.

Marked ``vllm``: ``-m "not vllm"`` leaves them out. Without the vLLM virtualenv
(``.venv-vllm``) they are skipped, saying how to install it, except with
HCTQA_VLLM_TESTS=1 (CI), where its absence fails them.

The tiny model's context is CONTEXT tokens: about 30% of the real test prompts are longer,
so every run here meets the server's own refusals."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from dataset.models import Table
from dataset.services import release_import
from hctqa.core.tracks.prompts import ReplyError, read_csv_reply, read_html_reply, read_sql_reply
from leaderboard import selectors
from leaderboard.models import (
    DailyLimitEntry,
    InferenceResponse,
    InferenceRun,
    ResponseStatus,
    RunStatus,
    Score,
    Status,
)
from leaderboard.services import InferenceRunInput, inference_run_create, inference_run_execute
from leaderboard.services.inference import inference_run_resume
from tests.core.scoring_reference import literal_evaluate_text, literal_vision_recall
from tests.factories import UserFactory
from tests.leaderboard.inference_helpers import KEY_ENV, quick_inference, registered
from tests.tracks.conftest import pick_tables
from tests.vllm_server import (
    CONTEXT_REFUSAL,
    VllmServer,
    VllmServerError,
    corpus_from_prompts,
    vllm_python,
    write_model,
)
from tracks.models import TrackItem
from tracks.services.items import items_build

pytestmark = [pytest.mark.vllm, pytest.mark.django_db]

CONTEXT = 1024  # tokens of the tiny model's context
MODEL = "tiny-llama"
MAX_TOKENS = 8
# Tables of the release outside the official test split, made the validation split here:
# the runs that need fewer questions than the whole test split ask these.
VALIDATION_TABLES = 12


def _vllm() -> Path:
    python = vllm_python()
    if python is None:
        message = (
            "the vLLM virtualenv .venv-vllm is not installed (HCTQA_VLLM_TESTS=1 scripts/test "
            "installs it, or set HCTQA_VLLM_PYTHON)"
        )
        if os.environ.get("HCTQA_VLLM_TESTS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.fixture(scope="session")
def vllm_folder(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """The tokenizer's training text: real prompts of the release."""
    folder = tmp_path_factory.mktemp("vllm")
    corpus_from_prompts(data_dir / "hctqa-real" / "prompts.jsonl.gz", folder / "corpus.txt")
    return folder


def _serve(folder: Path, kind: str, name: str, max_model_len: int) -> VllmServer:
    python = _vllm()
    try:
        model = write_model(python, folder / name, folder / "corpus.txt", kind=kind)
        server = VllmServer(
            model, name=name, max_model_len=max_model_len, log_path=folder / f"{name}.log"
        )
        return server.start()
    except VllmServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def vllm(vllm_folder: Path) -> Iterator[VllmServer]:
    """The tiny Llama, served once (see the module's docstring)."""
    server = _serve(vllm_folder, "text", MODEL, CONTEXT)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def real_questions(django_db_setup, django_db_blocker, release_tables: list, data_dir: Path):
    """The official test split's 188 real tables (test), and VALIDATION_TABLES other real
    tables (validation), imported once for the module (committed)."""
    lines = (data_dir / "hctqa-real" / "official-test-tables.csv").read_text().split()
    test_ids = {line.split(",")[0] for line in lines[1:]}
    others = sorted((t for t in release_tables if t.id not in test_ids), key=lambda t: t.id)
    step = len(others) // VALIDATION_TABLES
    chosen = [replace(t, split="test") for t in release_tables if t.id in test_ids] + [
        replace(t, split="validation") for t in others[::step][:VALIDATION_TABLES]
    ]
    with django_db_blocker.unblock():
        release_import(tables=chosen)
    yield
    with django_db_blocker.unblock():
        Table.objects.all().delete()


@pytest.fixture
def researcher(real_questions, settings, monkeypatch):  # type: ignore[no-untyped-def]
    quick_inference(settings, monkeypatch)
    return UserFactory(username="ada", role="researcher")


def run_command(*args: str) -> str:
    out = io.StringIO()
    call_command("run_inference", *args, stdout=out)
    return out.getvalue()


def new_run(user, server: VllmServer, *extra: str, split: str = "validation") -> str:  # type: ignore[no-untyped-def]
    """``run_inference`` for a new run on ``server`` (an endpoint an admin registered) of
    ``split``'s questions; ``extra`` options after the defaults override them."""
    return run_command(
        "--user",
        user.username,
        "--model",
        server.name,
        "--endpoint",
        registered(server.base_url).name,
        "--split",
        split,
        "--parameters",
        "0.01",
        "--max-tokens",
        str(MAX_TOKENS),
        "--concurrency",
        "8",
        *extra,
    )


def run_input(endpoint_name: str, **fields: object) -> InferenceRunInput:
    """A text run on the validation tables, ``fields`` over these defaults."""
    defaults = {
        "model_name": MODEL,
        "endpoint": endpoint_name,
        "modality": "text",
        "table_format": "paper",
        "split": "validation",
        "data_scope": "real",
        "weights": "open",
        "parameters_billions": Decimal("0.01"),
        "max_tokens": MAX_TOKENS,
    }
    return InferenceRunInput(**{**defaults, **fields})


def predictions_of(run: InferenceRun) -> dict[str, str]:
    rows = InferenceResponse.objects.filter(run=run).values_list("question_id", "response")
    return dict(rows)


def test_a_text_run_on_the_real_test_questions_is_scored_as_the_reference_scores_it(
    vllm: VllmServer, researcher
) -> None:
    asked_before = vllm.chat_requests()
    output = new_run(researcher, vllm, split="test")
    run = InferenceRun.objects.get()
    questions = selectors.benchmark_questions(split="test", data_scope="real")
    total = questions.count()
    assert run.status == RunStatus.DONE, run.error
    # Every question asked once; those over the context refused by the server itself.
    assert vllm.chat_requests() - asked_before == total == run.total
    assert run.failed == 0 and run.answered + run.too_long == total
    assert 0.1 * total < run.too_long < 0.6 * total, run.too_long
    over = InferenceResponse.objects.filter(run=run, status=ResponseStatus.TOO_LONG)
    assert over.count() == run.too_long
    assert all(CONTEXT_REFUSAL.search(e) for e in over.values_list("error", flat=True))
    assert run.config["context_length"] == CONTEXT and run.context_length == CONTEXT
    assert f"Context length {CONTEXT:,} tokens" in output
    assert f"{run.too_long} over the model's context length" in output
    # A random-weights model says something for every prompt it read.
    answered = InferenceResponse.objects.filter(run=run, status=ResponseStatus.ANSWERED)
    assert answered.exclude(response="").count() > 0.9 * answered.count()

    # The submission: every question, the ones over the context as empty answers, scored
    # exactly as the reference scorer scores the same answers.
    submission = run.submission
    assert submission.status == Status.SCORED
    assert submission.too_long_prompts == run.too_long
    answers = predictions_of(run)
    assert {answers[q] for q in over.values_list("question_id", flat=True)} == {""}
    gold = selectors.gold_answers(split="test", data_scope="real")
    for rules in ("2025-05", "2025-10"):
        score = Score.objects.get(submission=submission, rules=rules)
        expected = literal_evaluate_text(gold, answers, rules)
        assert score.excluded == expected["excluded"]
        for metric in ("precision", "recall", "f1", "cc"):
            assert getattr(score, metric) == pytest.approx(expected["overall"][metric], abs=1e-9)
    assert f"{run.too_long:,} prompts over the model's context length of {CONTEXT:,}" in (
        submission.description
    )

    # The count on the run's page, the submission's page and its board row.
    client = Client()
    client.force_login(researcher)
    page = client.get(run.get_absolute_url()).content.decode()
    assert f"{CONTEXT:,} tokens, as the endpoint reports it" in page
    assert f"{run.too_long:,} over the context length" in page
    page = client.get(submission.get_absolute_url()).content.decode()
    assert f"{run.too_long:,} questions had a prompt longer than the model" in page
    board = client.get("/leaderboard/?split=test").content.decode()
    assert f"{run.too_long:,} over the context</span>" in board


def test_the_cache_answers_a_second_run_and_only_prompts_over_the_context_go_again(
    vllm: VllmServer, researcher
) -> None:
    new_run(researcher, vllm)
    first = InferenceRun.objects.get()
    assert first.status == RunStatus.DONE and first.answered and first.too_long
    asked = vllm.chat_requests()
    new_run(researcher, vllm)
    second = InferenceRun.objects.exclude(pk=first.pk).get()
    assert second.status == RunStatus.DONE, second.error
    assert second.cached == second.answered == first.answered
    # Refusals are never cached: the server may serve a longer context next time.
    assert vllm.chat_requests() - asked == second.too_long == first.too_long
    assert predictions_of(second) == predictions_of(first)


def test_the_server_killed_mid_run_loses_nothing_and_the_run_resumes(
    vllm: VllmServer, researcher, settings
) -> None:
    # One request in flight and a commit (with its progress report) every 20 ms: on a quiet
    # machine the tiny model and the server's refusals of long prompts settle so fast that a
    # whole run fits in one second, the platform's interval, and the first report, the one
    # that kills, would be the last (CI saw the run done).
    settings.INFERENCE_SAVE_MS = 20
    run = inference_run_create(
        user=researcher,
        data=run_input(registered(vllm.base_url).name, concurrency=1, use_cache=False),
        enqueue=False,
    )
    killed_after: list[int] = []

    def kill_midway(progress) -> None:  # type: ignore[no-untyped-def]
        settled = progress.answered + progress.too_long
        if not killed_after and settled >= 10:
            vllm.kill()
            killed_after.append(settled)

    outcome = None
    try:
        outcome = inference_run_execute(run_id=run.pk, on_progress=kill_midway)
    finally:
        if outcome != RunStatus.FAILED and killed_after:
            vllm.start()  # this test fails below: the tests after it keep their server
    assert outcome == RunStatus.FAILED
    run.refresh_from_db()
    assert killed_after and run.error.startswith("The endpoint is unreachable")
    kept = dict(
        InferenceResponse.objects.filter(run=run, status=ResponseStatus.ANSWERED).values_list(
            "question_id", "created_at"
        )
    )
    assert len(kept) >= killed_after[0] - run.too_long > 0
    assert len(kept) + run.too_long < run.total

    vllm.start()  # the same port: the run's endpoint is where it was
    inference_run_resume(user=researcher, run_id=run.pk, enqueue=False)
    assert inference_run_execute(run_id=run.pk) == RunStatus.DONE
    run.refresh_from_db()
    assert run.answered + run.too_long == run.total and run.failed == 0
    # The answers saved before the crash were kept, not asked again.
    assert vllm.chat_requests() == run.total - len(kept)
    again = dict(
        InferenceResponse.objects.filter(run=run, question_id__in=kept).values_list(
            "question_id", "created_at"
        )
    )
    assert again == kept


def test_a_model_the_server_does_not_serve_is_refused_before_anything_is_written(
    vllm: VllmServer, researcher
) -> None:
    asked = vllm.chat_requests()
    with pytest.raises(CommandError) as refused:
        new_run(researcher, vllm, "--model", "Llama-3.1-8B-Instruct", split="test")
    assert "does not serve a model named 'Llama-3.1-8B-Instruct'; it serves tiny-llama" in str(
        refused.value
    )
    assert not InferenceRun.objects.exists() and not DailyLimitEntry.objects.exists()
    assert vllm.chat_requests() == asked


def test_a_model_gone_by_the_time_the_worker_starts_fails_the_run_before_any_question(
    vllm: VllmServer, researcher, monkeypatch
) -> None:
    # The endpoint's key is on the worker only: the web server cannot ask the endpoint, so
    # the worker asks before its first question.
    monkeypatch.delenv(KEY_ENV)
    run = inference_run_create(
        user=researcher,
        data=run_input(registered(vllm.base_url).name, model_name="tiny-llama-v2"),
        enqueue=False,
    )
    assert run.context_length is None
    monkeypatch.setenv(KEY_ENV, "sk-worker")
    asked = vllm.chat_requests()
    assert inference_run_execute(run_id=run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.error.startswith(
        "Nothing was sent: The endpoint does not serve a model named 'tiny-llama-v2'"
    )
    assert vllm.chat_requests() == asked and not InferenceResponse.objects.exists()


def test_what_would_fail_the_submission_is_refused_before_the_first_request(
    vllm: VllmServer, researcher
) -> None:
    asked = vllm.chat_requests()
    # The parameter count is stored to the hundredth: 0.001 would end as 0, refused by the
    # submission after every answer was in.
    with pytest.raises(CommandError) as refused:
        new_run(researcher, vllm, "--parameters", "0.001", split="test")
    assert "--parameters: The parameter count is in billions with at most two" in str(refused.value)
    # Answers that cannot fit the context beside any prompt.
    with pytest.raises(CommandError) as refused:
        new_run(researcher, vllm, "--max-tokens", str(CONTEXT), split="test")
    assert f"leave no room for a prompt in the model's context of {CONTEXT:,} tokens" in str(
        refused.value
    )
    assert not InferenceRun.objects.exists() and not DailyLimitEntry.objects.exists()
    assert vllm.chat_requests() == asked


def test_a_vision_run_against_a_tiny_vision_language_model(
    vllm_folder: Path, researcher, synthetic_tables: list, tmp_path: Path, settings
) -> None:
    """A tiny BLIP-2 (OPT language model): the vision-language architecture this vLLM CPU
    build serves without torchvision. Qwen2-VL, LLaVA and PaliGemma need torchvision to
    start, and the registry's torchvision is built for CUDA torch (docs/development.md).
    Then, on the same server, an extraction-track run: each region item sent once as a PNG
    with the track's prompt, every reply kept; the empty replies hold no table, so the run
    fails saying so."""
    server = _serve(vllm_folder, "vision", "tiny-blip2", 2048)
    try:
        asked = server.chat_requests()
        new_run(researcher, server, "--modality", "vision")
        run = InferenceRun.objects.get()
        assert run.status == RunStatus.DONE, run.error
        assert run.table_format == "image" and run.too_long == 0
        assert run.answered == run.total == server.chat_requests() - asked
        answers = predictions_of(run)
        gold = selectors.gold_answers(split="validation", data_scope="real")
        recall = sum(literal_vision_recall(gold[q], answers[q]) for q in gold) / len(gold)
        assert run.submission.status == Status.SCORED
        assert run.submission.score_for().recall == pytest.approx(recall, abs=1e-9)

        settings.TRACK_FILES_ROOT = tmp_path / "track-files"
        release_import(tables=pick_tables(synthetic_tables, per_split=2))
        items_build(tracks=["extraction"])
        items = set(
            TrackItem.objects.filter(
                track="extraction", mode="region", split="validation"
            ).values_list("pk", flat=True)
        )
        assert items
        asked = server.chat_requests()
        extraction = inference_run_create(
            user=researcher,
            data=run_input(
                registered(server.base_url).name,
                model_name=server.name,
                modality="vision",
                table_format="image",
                track="extraction",
                mode="region",
                data_scope="",
            ),
            enqueue=False,
        )
        inference_run_execute(run_id=extraction.pk)
        extraction.refresh_from_db()
        replies = InferenceResponse.objects.filter(run=extraction)
        assert set(replies.values_list("item_id", flat=True)) == items
        assert server.chat_requests() - asked == extraction.answered == len(items)
        for reply in replies.values_list("response", flat=True):
            with pytest.raises(ReplyError):
                read_html_reply(reply)
        assert extraction.status == RunStatus.FAILED
        assert extraction.error.startswith("No reply held what the prompt asked for")
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("track", "table_format", "read_reply"),
    [("sql", "csv", read_sql_reply), ("transformation", "markdown", read_csv_reply)],
)
def test_a_run_on_another_track_asks_each_item_once_and_fails_on_replies_it_cannot_read(
    vllm: VllmServer,
    researcher,
    synthetic_tables: list,
    tmp_path: Path,
    settings,
    track: str,
    table_format: str,
    read_reply,
) -> None:
    """The tracks' prompts through the real server (issue 28's endpoint runs): each
    validation item of the track is sent once with the track's versioned prompt and its
    reply kept. Random weights answer nothing a strict reader takes for SQL or CSV, and a
    run whose every reply is unreadable fails saying so, rather than scoring a row of
    zeros onto the board."""
    settings.TRACK_FILES_ROOT = tmp_path / "track-files"
    release_import(tables=pick_tables(synthetic_tables, per_split=2))
    items_build(tracks=[track])
    items = set(
        TrackItem.objects.filter(track=track, split="validation").values_list("pk", flat=True)
    )
    assert items
    asked = vllm.chat_requests()
    run = inference_run_create(
        user=researcher,
        data=run_input(
            registered(vllm.base_url).name, track=track, table_format=table_format, data_scope=""
        ),
        enqueue=False,
    )
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    replies = InferenceResponse.objects.filter(run=run)
    assert set(replies.values_list("item_id", flat=True)) == items
    answered = replies.filter(status=ResponseStatus.ANSWERED)
    assert vllm.chat_requests() - asked == answered.count() == run.answered
    assert run.total == len(items) == run.answered + run.too_long
    for reply in answered.values_list("response", flat=True):
        with pytest.raises(ReplyError):
            read_reply(reply)
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("No reply held what the prompt asked for")
    assert run.submission is None
