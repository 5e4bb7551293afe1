"""Model-generated questions: a run asks an OpenAI-compatible chat model for question/answer
pairs on each chosen table. A table's pairs are saved together with their two verification
slots, or not at all; a table whose replies stay malformed is reported, never half-saved."""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotation import permissions as rules
from annotation.jobs import GENERATION_RUN, enqueue_generation
from annotation.models import GenerationItem, GenerationRun
from annotation.services import runs
from annotation.services.verification import verification_slots_open
from dataset.models import Question, QuestionOrigin, QuestionStatus, Split, Table
from dataset.selectors import table_png
from dataset.services import NewQuestion, questions_add
from endpoints.client import ChatClient, ChatRequest, RetryPolicy
from endpoints.selectors import chat_target, endpoint_for_run
from hctqa.core.generation import (
    GeneratedPair,
    GenerationOutputError,
    generation_messages,
    parse_generation,
)
from hctqa.core.prompts import image_data_url
from hctqa.core.render import to_html
from hctqa.core.tables import parse_table
from hctqa.core.wording import counted
from plumbing import jobs
from plumbing.errors import ApplicationError, ConflictError
from plumbing.jobs import RunStatus

MAX_TABLES_PER_RUN = 2000
_OUTPUT_KEPT = 4000
# Tries per request on 429s, 5xx and timeouts; a malformed reply is asked again on top, up
# to GENERATION_MAX_ATTEMPTS.
HTTP_ATTEMPTS = 3

logger = logging.getLogger(__name__)


def generation_run_create(
    *,
    user: Any,
    endpoint: str,
    model: str,
    table_ids: list[str],
    use_images: bool = False,
    questions_per_table: int = 8,
) -> GenerationRun:
    """Queue a run over the given tables, on a registered endpoint (by name). Its key is
    read on the worker when the run starts."""
    rules.GENERATING.check(user)
    model = model.strip()
    if not model:
        raise ApplicationError("Name the model", field="model")
    chosen = endpoint_for_run(user=user, name=endpoint, model_name=model)
    if not 1 <= questions_per_table <= 20:
        raise ApplicationError("Between 1 and 20 questions per table", field="questions_per_table")
    wanted = list(dict.fromkeys(t.strip() for t in table_ids if t.strip()))
    if not wanted:
        raise ApplicationError("Choose at least one table", field="table_ids")
    if len(wanted) > MAX_TABLES_PER_RUN:
        raise ApplicationError(
            f"At most {MAX_TABLES_PER_RUN} tables per run, not {len(wanted)}", field="table_ids"
        )
    found = set(Table.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    missing = [t for t in wanted if t not in found]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ApplicationError(f"No such table: {shown}", field="table_ids")
    held_out = test_split_refusal(table_ids=wanted)
    if held_out:
        raise ApplicationError(held_out, field="table_ids")
    example_tables = list(_examples().order_by().values_list("table_id", flat=True).distinct()[:2])
    if not example_tables or (len(example_tables) == 1 and example_tables[0] in found):
        raise ApplicationError(
            "The model is shown a worked example, a verified human-written question from the "
            "training split on another table, and there is none: import the release or write "
            "questions in the query tool first",
            field="table_ids",
        )
    request = {
        "endpoint": chosen.pk,
        "model": model,
        "use_images": use_images,
        "questions_per_table": questions_per_table,
        "tables": sorted(wanted),
    }
    digest = runs.fingerprint(request)
    with runs.refusing_duplicates(GenerationRun, digest, "generation run"), transaction.atomic():
        run = GenerationRun.objects.create(
            created_by=user,
            endpoint=chosen,
            base_url=chosen.base_url,
            model=model,
            use_images=use_images,
            questions_per_table=questions_per_table,
            tables_total=len(wanted),
            fingerprint=digest,
        )
        GenerationItem.objects.bulk_create([GenerationItem(run=run, table_id=t) for t in wanted])
        transaction.on_commit(lambda: enqueue_generation(run.pk))
    return run


def test_split_refusal(*, table_ids: list[str]) -> str | None:
    """Why these tables may not be sent for generation, or None. Test-split tables are
    refused unless GENERATION_ALLOW_TEST_SPLIT is on: a model's proposed answer to a held-out
    question, once verified, is test gold."""
    if settings.GENERATION_ALLOW_TEST_SPLIT:
        return None
    held_out = sorted(
        Table.objects.filter(pk__in=table_ids, split=Split.TEST).values_list("pk", flat=True)
    )
    if not held_out:
        return None
    shown = ", ".join(held_out[:5]) + (" …" if len(held_out) > 5 else "")
    return (
        f"{len(held_out)} of the tables {'is' if len(held_out) == 1 else 'are'} in the test "
        f"split ({shown}): generation refuses them, so that no proposed answer to a held-out "
        "question reaches annotators (GENERATION_ALLOW_TEST_SPLIT lets admins generate and "
        "verify them)"
    )


def _run_for_update(run_id: int) -> GenerationRun:
    run = GenerationRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise ApplicationError(f"No generation run {run_id}")
    return run


@transaction.atomic
def generation_run_cancel(*, user: Any, run_id: int) -> GenerationRun:
    """Stop a run before its next table; tables already done stay saved."""
    rules.GENERATING.check(user)
    run = _run_for_update(run_id)
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
        raise ConflictError(f"This run is already {run.status}", current={"status": run.status})
    run.status = RunStatus.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    return run


def generation_run_resume(*, user: Any, run_id: int) -> GenerationRun:
    """Send a run back to the worker: after it was cancelled, failed or its worker died, or
    to retry the tables that got no valid reply; refused while an identical run is queued
    or running."""
    rules.GENERATING.check(user)
    asked = GenerationRun.objects.filter(pk=run_id).values_list("fingerprint", flat=True)
    with runs.refusing_duplicates(GenerationRun, asked.first() or "", "generation run"):
        return _resume(run_id)


@transaction.atomic
def _resume(run_id: int) -> GenerationRun:
    run = _run_for_update(run_id)
    if not run.is_resumable:
        why = (
            "This run is done: every table has its questions"
            if run.status == RunStatus.DONE
            else "This run is still in progress"
        )
        raise ConflictError(why, current={"status": run.status})
    retried = run.items.filter(status="failed").update(status="pending", error="")
    run.tables_failed -= retried
    run.status = RunStatus.QUEUED
    run.error = ""
    run.finished_at = None
    run.save()
    transaction.on_commit(lambda: enqueue_generation(run.pk))
    return run


def _image_data_url(table: Table) -> str | None:
    # The same PNG bytes the prompt export and inference runs send (a JPEG scan converted).
    png = table_png(table)
    return image_data_url(png) if png is not None else None


def _examples() -> QuerySet[Question]:
    return Question.objects.filter(
        origin=QuestionOrigin.HUMAN,
        status=QuestionStatus.VERIFIED,
        table__split=Split.TRAIN,
        in_gold_pool=False,  # private: never sent out
    )


def _worked_example(table: Table) -> tuple[str, str] | None:
    """A verified human-written question on another table, from the training split so no
    held-out gold answer is ever sent to a model provider."""
    examples = _examples().exclude(table=table)
    count = examples.count()
    if not count:
        return None
    # Stable per table, and different tables see different examples.
    offset = sum(table.pk.encode()) % count
    example = examples.order_by("pk").values_list("text", "gold_answer")[offset]
    return example[0], example[1]


def _save_pairs(item: GenerationItem, pairs: list[GeneratedPair], output: str) -> int:
    with transaction.atomic():
        table = Table.objects.select_for_update().get(pk=item.table_id)  # serialises numbering
        locked = GenerationItem.objects.select_for_update().get(pk=item.pk)
        if locked.status != "pending":
            return 0  # a retried task already saved this table
        questions = questions_add(
            table=table,
            kind="A",
            questions=[
                NewQuestion(
                    text=pair.question,
                    gold_answer=pair.answer,
                    origin=QuestionOrigin.MODEL,
                    status=QuestionStatus.UNVERIFIED,
                )
                for pair in pairs
            ],
        )
        verification_slots_open(questions=questions)
        GenerationItem.objects.filter(pk=item.pk).update(
            status="done", questions_created=len(questions), error="", last_output=output
        )
        GenerationRun.objects.filter(pk=item.run_id).update(
            tables_done=F("tables_done") + 1,
            questions_created=F("questions_created") + len(questions),
            heartbeat_at=timezone.now(),
        )
    return len(questions)


def _fail_item(item: GenerationItem, error: str, output: str) -> None:
    with transaction.atomic():
        updated = GenerationItem.objects.filter(pk=item.pk, status="pending").update(
            status="failed", error=error, last_output=output
        )
        if updated:
            GenerationRun.objects.filter(pk=item.run_id).update(
                tables_failed=F("tables_failed") + 1, heartbeat_at=timezone.now()
            )


class _EndpointRefused(Exception):
    """A reply that every other table would get too (wrong key, URL or model; a forbidden
    address; a redirect): the run stops, its tables stay pending for a resume."""


def _generate_for(client: ChatClient, run: GenerationRun, item: GenerationItem) -> None:
    # Checked again here: the setting may have been turned off since the run was started.
    refusal = test_split_refusal(table_ids=[item.table_id])
    if refusal is not None:
        _fail_item(item, refusal, "")
        return
    example = _worked_example(item.table)
    if example is None:  # the examples were removed after the run was started
        _fail_item(item, "No worked example on another table to show the model", "")
        return
    messages = generation_messages(
        table_html=to_html(parse_table(item.table.canonical_csv)),
        image_data_url=_image_data_url(item.table) if run.use_images else None,
        example=example,
        n=run.questions_per_table,
    )
    error, output = "", ""
    for attempt in range(1, settings.GENERATION_MAX_ATTEMPTS + 1):
        GenerationItem.objects.filter(pk=item.pk).update(attempts=attempt)
        GenerationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
        result = client.complete(ChatRequest(item.table_id, messages))
        if result is None:  # stopped
            return
        if result.outcome == "fatal":
            raise _EndpointRefused(result.error)
        if result.outcome != "answered":
            error = f"the endpoint failed: {result.error}"
            continue
        text = result.content
        output = text[:_OUTPUT_KEPT]  # kept for reading a failure; the whole reply is parsed
        try:
            pairs = parse_generation(text, n=run.questions_per_table)
        except GenerationOutputError as exc:
            error = str(exc)
            if result.finish_reason == "length":
                error += " (the reply hit the token limit)"
            continue
        _save_pairs(item, pairs, output)
        return
    _fail_item(
        item,
        f"No valid reply after {counted(settings.GENERATION_MAX_ATTEMPTS, 'attempt')}: {error}",
        output,
    )


def _stop(run_id: int, status: str, error: str = "") -> str:
    """End a running run (one cancelled meanwhile stays cancelled); returns its status."""
    GenerationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=status, error=error, finished_at=timezone.now()
    )
    return GenerationRun.objects.values_list("status", flat=True).get(pk=run_id)


def _key_fix(endpoint: Any) -> str:
    """What an admin does about a key that is not set. Generation runs are read by admins only,
    so unlike an inference run's error this one may name the variable."""
    variable = endpoint.api_key_env
    if not variable or os.environ.get(variable, "").strip():
        return ""
    return (
        f". To fix it: set {variable} in the environment of the Celery worker that runs "
        "generation (scripts/run starts it; restart it after setting the variable), then press "
        "Resume on this page"
    )


def generation_run_execute(*, run_id: int) -> str:
    """Work through the run's pending tables. Safe to call again: finished tables are
    skipped, and a cancelled run stops before its next table."""
    started = jobs.claim(GENERATION_RUN, run_id)
    run = GenerationRun.objects.select_related("endpoint", "created_by").get(pk=run_id)
    if not started:
        return run.status
    try:
        # A slow endpoint keeps the claim; a dead worker's run is taken over once silent.
        with jobs.heartbeat(GENERATION_RUN, run_id, started):
            return _work_through(run)
    except DatabaseError:
        # Transient: back to the queue for the task's retry, which claims it again.
        jobs.hand_back(GENERATION_RUN, run_id, started)
        raise


def _work_through(run: GenerationRun) -> str:
    run_id = run.pk
    try:
        target = chat_target(
            user=run.created_by,
            endpoint=run.endpoint,
            base_url=run.base_url,
            sealed_key="",
            model=run.model,
            temperature=settings.GENERATION_TEMPERATURE,
            max_tokens=settings.GENERATION_MAX_TOKENS,
        )
    except ApplicationError as exc:
        return _stop(run_id, RunStatus.FAILED, exc.message + _key_fix(run.endpoint))
    if target.base_url != run.base_url:
        GenerationRun.objects.filter(pk=run_id).update(base_url=target.base_url)
    policy = RetryPolicy(
        max_attempts=HTTP_ATTEMPTS,
        base_seconds=settings.INFERENCE_RETRY_BASE_MS / 1000,
        max_seconds=settings.INFERENCE_RETRY_MAX_SECONDS,
        timeout_seconds=settings.GENERATION_REQUEST_TIMEOUT,
    )
    with ChatClient(target, policy=policy) as client:
        for item in run.items.filter(status="pending").select_related("table").order_by("pk"):
            if GenerationRun.objects.filter(pk=run_id, status=RunStatus.CANCELLED).exists():
                return RunStatus.CANCELLED
            try:
                _generate_for(client, run, item)
            except _EndpointRefused as exc:
                return _stop(
                    run_id,
                    RunStatus.FAILED,
                    f"The endpoint refused the run: {exc}. Check the endpoint and the model, "
                    "then resume the run",
                )
            except Exception as exc:  # noqa: BLE001 - one table's surprise must not stall the run
                logger.exception("generation run %s: table %s failed", run_id, item.table_id)
                _fail_item(item, f"Internal error: {exc.__class__.__name__}: {exc}", "")
    running = GenerationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    # Through every table: failed when none got a valid reply (partly failed, shown so, when
    # some did not), done otherwise.
    running.filter(tables_done=0, tables_failed__gt=0).update(
        status=RunStatus.FAILED,
        error="No table got a valid reply: see why for each below, then retry them",
        finished_at=timezone.now(),
    )
    running.update(status=RunStatus.DONE, finished_at=timezone.now())
    return GenerationRun.objects.values_list("status", flat=True).get(pk=run_id)


DEMO_PER_TABLE = 3


def _off_by_one(answer: str) -> str:
    """The answer with its first number changed: a wrong proposal for a verifier to catch."""
    match = re.search(r"\d+", answer)
    if match is None:
        return "No" if answer == "Yes" else "Yes" if answer == "No" else answer
    return answer[: match.start()] + str(int(match.group()) + 1) + answer[match.end() :]


@transaction.atomic
def demo_generated_questions_ensure(*, table_ids: list[str]) -> int:
    """Questions on the demo tables as a model might have proposed them, waiting for
    verification, so a fresh platform has something to verify. Every second one carries a
    wrong answer. Returns how many were added (0 when they exist already)."""
    made: list[Question] = []
    sources = (
        Question.objects.filter(table_id__in=table_ids, origin=QuestionOrigin.SYNTHETIC)
        .order_by("table_id", "pk")
        .values_list("table_id", "text", "gold_answer")
    )
    per_table: dict[str, int] = {}
    for table_id, text, answer in sources:
        k = per_table.get(table_id, 0)
        if k == DEMO_PER_TABLE:
            continue
        per_table[table_id] = k + 1
        made.append(
            Question(
                id=f"{table_id}--A{k}",
                table_id=table_id,
                text=text,
                gold_answer=answer if k % 2 == 0 else _off_by_one(answer),
                origin=QuestionOrigin.MODEL,
                status=QuestionStatus.UNVERIFIED,
            )
        )
    existing = set(
        Question.objects.filter(pk__in=[q.pk for q in made]).values_list("pk", flat=True)
    )
    new = [q for q in made if q.pk not in existing]
    Question.objects.bulk_create(new)
    verification_slots_open(questions=new)
    return len(new)
