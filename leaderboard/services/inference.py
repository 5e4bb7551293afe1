"""Inference runs: the benchmark's questions sent to an OpenAI-compatible endpoint, and the
answers turned into a scored submission.

- **Nothing is lost.** Each answer is saved within a few milliseconds of arriving (a commit
  every ``FLUSH_SECONDS``). Running again sends only the questions with no saved reply, so a
  run whose worker was killed resumes where it stopped.
- **One executor per run.** Starting claims the run with a conditional UPDATE and a lease
  token; every save and heartbeat checks the token, so two workers never work on one run.
- **Cache.** A reply is kept under SHA-256(model, endpoint, prompt hash, decoding
  parameters, credential); the same request under the same credential in any later run is
  answered from it, not sent. The credential is a registered endpoint with its key (shared
  by the people who may use it) or a person with their own key (theirs alone), keys as a
  keyed hash (``endpoints.keys.credential_digest``).
- **Daily limit.** A run on test questions (split test or all) takes one of its owner's
  daily test-split submissions when it is started, like an upload; cancelled and failed
  runs keep it used. Resuming a run, and the submission it produces, take no other.
- **Keys.** A run on a registered endpoint sends that endpoint's key, read on the worker;
  a run on the researcher's own endpoint sends only the key they gave, sealed in the run
  while it may still send. Every write that ends a run erases it in the same update (a
  check constraint refuses one that does not); resuming asks for it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Question, Table
from annotation.selectors import one_shot_example_ids, table_png
from endpoints.client import ChatPool, ChatRequest, ChatResult, RetryPolicy
from endpoints.keys import api_key_seal
from endpoints.models import Endpoint
from endpoints.selectors import chat_target, endpoint_for_run, own_endpoint_check
from endpoints.services import api_key_checked, own_base_url_checked
from hctqa.accounts.services import account_check_test_split_access
from hctqa.commit import platform_commit
from hctqa.core.prompts import (
    PROMPT_STYLES,
    TABLE_FORMATS,
    PromptError,
    PromptTable,
    WorkedExample,
    denonsense,
    nonsense_for,
    prompt_messages,
    prompt_sha256,
)
from hctqa.core.wording import counted
from hctqa.errors import ApplicationError, ConflictError, Problems
from leaderboard import selectors
from leaderboard.models import (
    ACTIVE_RUN_STATUSES,
    CachedResponse,
    DailyLimitEntry,
    DataScope,
    EvalSplit,
    InferenceResponse,
    InferenceRun,
    Modality,
    ResponseStatus,
    RunStatus,
    TableFormat,
    Visibility,
    Weights,
)
from leaderboard.services.submissions import (
    SubmissionInput,
    _check_metadata,
    _take_test_split_slot,
    check_stored_submissions_left,
    lock_user,
    submission_create_from_predictions,
)

logger = logging.getLogger(__name__)

INFERENCE_QUEUE = "inference"
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_TOKENS_RANGE = (1, 8192)
CONCURRENCY_RANGE = (1, 256)

# Saved answers are committed at least this often: a kill loses at most this much work.
FLUSH_SECONDS = 0.05
FLUSH_ROWS = 500
CHECK_SECONDS = 0.5  # how often cancel requests and the lease are read
HEARTBEAT_SECONDS = 5.0
CHUNK = 64  # questions prepared (prompt, cache look-up) at a time
PAUSE_DRAIN_SECONDS = 10.0  # how long a pausing run waits for the requests in flight


@dataclass(frozen=True)
class InferenceRunInput:
    """A new run. ``endpoint`` names a registered endpoint; or ``base_url`` is the
    researcher's own, with ``api_key`` if it needs one."""

    model_name: str
    modality: str
    table_format: str
    split: str
    data_scope: str
    weights: str
    endpoint: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    prompt_style: str = "zero_shot"
    system_role: bool = True
    temperature: float = 0.0
    max_tokens: int = 128
    concurrency: int = 8
    use_cache: bool = True
    organisation: str = ""
    parameters_billions: Decimal | None = None
    visibility: str = Visibility.PUBLIC
    description: str = ""


@dataclass(frozen=True)
class Progress:
    total: int
    answered: int
    cached: int
    failed: int
    sent: int
    elapsed: float


ProgressCallback = Callable[[Progress], None]


def _enqueue(run_id: int) -> None:
    from leaderboard.tasks import run_inference

    transaction.on_commit(lambda: run_inference.delay(run_id))


# --- Reproducibility -----------------------------------------------------------------------


_SAMPLE_TABLE = PromptTable("Region,2019,__\n__,Male,Female\nNorth,1,2\n", source="psa")
_SAMPLE_EXAMPLE = WorkedExample("How many in the North?", "{3}", _SAMPLE_TABLE)


def prompt_format_fingerprint(*, table_format: str, prompt_style: str, system_role: bool) -> str:
    """The hash of a fixed sample prompt in this format and style: it changes exactly when the
    prompt templates do, so a run records which version of the prompts it used."""
    messages = prompt_messages(
        question="Which region has 2 women?",
        table=_SAMPLE_TABLE,
        table_format=table_format,
        prompt_style=prompt_style,
        example=_SAMPLE_EXAMPLE if prompt_style == "one_shot" else None,
        system_role=system_role,
    )
    return prompt_sha256(messages)


def cache_key(
    *,
    model: str,
    base_url: str,
    prompt_hash: str,
    temperature: float,
    max_tokens: int,
    scope: str,
) -> str:
    """``scope``: whose credential the answer is made under (``ChatTarget.cache_scope``)."""
    if not scope:
        raise ValueError("A cached answer belongs to a credential")
    payload = {
        "v": 2,
        "model": model,
        "base_url": base_url.rstrip("/"),
        "prompt": prompt_hash,
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
        "scope": scope,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


# --- Creating, cancelling, resuming --------------------------------------------------------


def _endpoint_chosen(
    *, user: Any, data: InferenceRunInput, model_name: str, problems: Problems
) -> tuple[Endpoint | None, str, str]:
    """The registered endpoint the run names (None for the researcher's own), with the base
    URL and key the run sends to; what is wrong goes into ``problems``."""
    if problems.on("endpoint"):
        return None, "", ""
    if data.endpoint.strip():
        if data.base_url.strip() or data.api_key.strip():
            problems.add(
                "Choose a registered endpoint or give your own endpoint's base URL, not both "
                "(a registered endpoint has its own key)",
                field="base_url",
            )
        with problems.check():
            # Which models it serves is checked when the model's name could be read.
            endpoint = endpoint_for_run(
                user=user, name=data.endpoint, model_name=model_name or None
            )
            return endpoint, endpoint.base_url, ""
        return None, "", ""
    if not data.base_url.strip():
        problems.add(
            "Choose a registered endpoint, or give your own endpoint's base URL",
            field="endpoint",
        )
        return None, "", ""
    base_url = api_key = ""
    with problems.check():
        base_url = own_base_url_checked(data.base_url)
        own_endpoint_check(base_url)
    if data.api_key.strip():
        with problems.check():
            api_key = api_key_checked(data.api_key)
    return None, base_url, api_key


# The ranges of a run's numbers, with the names the form gives them.
_RANGES = (
    ("temperature", "The temperature", TEMPERATURE_RANGE),
    ("max_tokens", "Max tokens", MAX_TOKENS_RANGE),
    ("concurrency", "Requests in flight", CONCURRENCY_RANGE),
)


def _validate(
    *, user: Any, data: InferenceRunInput, problems: Problems
) -> tuple[InferenceRunInput, Endpoint | None]:
    """The request with its endpoint resolved, every problem into ``problems`` (fields that
    have one already are not checked again)."""
    model_name = data.model_name.strip()
    if not problems.on("model_name") and (not model_name or len(model_name) > 200):
        problems.add("Give the model's name as the endpoint knows it", field="model_name")
        model_name = ""
    endpoint, base_url, api_key = _endpoint_chosen(
        user=user, data=data, model_name=model_name, problems=problems
    )
    if not problems.on("table_format") and data.table_format not in TABLE_FORMATS:
        problems.add(
            f"The table format should be one of {', '.join(TABLE_FORMATS)}", field="table_format"
        )
    if not problems.on("prompt_style") and data.prompt_style not in PROMPT_STYLES:
        problems.add(
            f"The prompt style should be one of {', '.join(PROMPT_STYLES)}", field="prompt_style"
        )
    for name, label, (low, high) in _RANGES:
        if not problems.on(name) and not low <= getattr(data, name) <= high:
            problems.add(f"{label} should be between {low} and {high}", field=name)
    for name, label, choices in (
        ("modality", "The modality", Modality.values),
        ("split", "The split", EvalSplit.values),
        ("data_scope", "The data scope", DataScope.values),
        ("weights", "Weights", Weights.values),
        ("visibility", "Visibility", Visibility.values),
    ):
        if not problems.on(name) and getattr(data, name) not in choices:
            problems.add(f"{label} should be one of {', '.join(choices)}", field=name)
    checked = InferenceRunInput(
        **{
            **data.__dict__,
            "model_name": model_name,
            "endpoint": endpoint.name if endpoint else "",
            "base_url": base_url,
            "api_key": api_key,
        }
    )
    return checked, endpoint


def _submission_input(run: InferenceRun | InferenceRunInput) -> SubmissionInput:
    return SubmissionInput(
        model_name=run.model_name,
        weights=run.weights,
        modality=run.modality,
        table_format=run.table_format,
        split=run.split,
        data_scope=run.data_scope,
        organisation=run.organisation,
        parameters_billions=run.parameters_billions,
        prompt_style=run.prompt_style,
        description=run.description,
        visibility=run.visibility,
    )


def _check_active_runs_left(user: Any, *, besides: int | None = None) -> None:
    """Refuse another queued run when the user has INFERENCE_MAX_ACTIVE_RUNS queued or
    running already (``besides``: a run being resumed, which is not another)."""
    limit = settings.INFERENCE_MAX_ACTIVE_RUNS
    if not limit or user.has_perm("leaderboard.change_inferencerun"):
        return
    active = InferenceRun.objects.filter(created_by=user, status__in=ACTIVE_RUN_STATUSES)
    if active.exclude(pk=besides).count() >= limit:
        raise ApplicationError(
            f"You have {counted(limit, 'inference run')} queued or running, the most one "
            "person may have at once (the worker takes one run at a time); wait for one to "
            "end, or cancel one"
        )


def _split_words(split: str) -> str:
    return "any split" if split == EvalSplit.ALL else f"the {split} split"


def inference_run_create(
    *,
    user: Any,
    data: InferenceRunInput,
    enqueue: bool = True,
    problems: Problems | None = None,
) -> InferenceRun:
    """Check the request and queue the run for the inference worker (``enqueue=False``: the
    caller executes it, as the command does in the foreground).

    Everything is checked in one pass and every problem raised at once
    (``ApplicationError.problems``). ``problems``: what the caller found wrong reading the
    request (a form's field errors); the fields they name are not checked again.

    A registered endpoint's key is read where the run executes, and a missing one fails the
    run with a message saying so. A researcher's own key is sealed in the run until it ends.
    """
    if not user.has_perm("leaderboard.add_inferencerun"):
        raise PermissionDenied("Only researchers and admins can start inference runs")
    problems = problems or Problems()
    with problems.check():
        _check_active_runs_left(user)
    with problems.check():
        # The run ends as a submission: refused now rather than after all its requests.
        check_stored_submissions_left(user)
    if not problems.on("split") and selectors.includes_test_questions(data.split):
        with problems.check():
            account_check_test_split_access(user=user)
    data, endpoint = _validate(user=user, data=data, problems=problems)
    _check_metadata(_submission_input(data), problems)
    scope_known = not (problems.on("split") or problems.on("data_scope"))
    questions = selectors.benchmark_questions(split=data.split, data_scope=data.data_scope)
    total = questions.count() if scope_known else 0
    if scope_known and not total:
        problems.add(
            f"There are no verified questions on {DataScope(data.data_scope).label.lower()} in "
            f"{_split_words(data.split)} to run on",
            field="split",
        )
    examples: list[str] = []
    if data.prompt_style == "one_shot" and not problems.on("data_scope"):
        # The prompt export's own rule, so a run sends exactly the exported prompts.
        examples = one_shot_example_ids(data_scope=data.data_scope)
        if not examples:
            problems.add(
                "One-shot prompts need worked examples: verified training-split questions of "
                "this data scope on two different tables",
                field="prompt_style",
            )
    problems.raise_if_any()
    config = {
        "model": data.model_name,
        # Where it ran: a registered endpoint by name (its URL and key are the admin's), or
        # the researcher's own URL.
        "registered_endpoint": endpoint.name if endpoint else None,
        "base_url": None if endpoint else data.base_url,
        "modality": data.modality,
        "table_format": data.table_format,
        "prompt_style": data.prompt_style,
        "system_role": data.system_role,
        "example_question_ids": examples,
        "split": data.split,
        "data_scope": data.data_scope,
        "temperature": data.temperature,
        "max_tokens": data.max_tokens,
        "concurrency": data.concurrency,
        "use_cache": data.use_cache,
        "endpoint": "POST {base_url}/chat/completions, one choice, no streaming",
        "prompt_format_sha256": prompt_format_fingerprint(
            table_format=data.table_format,
            prompt_style=data.prompt_style,
            system_role=data.system_role,
        ),
        "platform_commit": platform_commit(),
        "max_attempts": settings.INFERENCE_MAX_ATTEMPTS,
        "request_timeout_seconds": settings.INFERENCE_REQUEST_TIMEOUT,
    }
    with transaction.atomic():
        counted = selectors.includes_test_questions(data.split)
        if counted:
            _take_test_split_slot(user)
        else:
            lock_user(user)
        _check_active_runs_left(user)  # again, under the lock: two requests at once
        check_stored_submissions_left(user)
        fields = {k: v for k, v in data.__dict__.items() if k not in ("endpoint", "api_key")}
        run = InferenceRun.objects.create(
            created_by=user,
            **fields,
            total=total,
            endpoint=endpoint,
            sealed_api_key=api_key_seal(data.api_key) if data.api_key else "",
            api_key_given=bool(data.api_key),
            config=config,
            queued_at=timezone.now(),
        )
        if counted:
            DailyLimitEntry.objects.create(user=user, inference_run=run)
        if enqueue:
            _enqueue(run.pk)
    return run


def _require_manager(user: Any, run: InferenceRun) -> None:
    if not selectors.can_manage_run(user=user, run=run):
        raise PermissionDenied("Only the person who started a run, or an admin, can change it")


def _stale_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.INFERENCE_STALE_AFTER_SECONDS)


@transaction.atomic
def inference_run_cancel(*, user: Any, run_id: int) -> InferenceRun:
    """Stop a run. A queued one (or one whose worker is gone) stops at once; a running one
    stops within a second, keeping the answers already saved, so it can be resumed."""
    run = InferenceRun.objects.select_for_update().get(pk=run_id)
    _require_manager(user, run)
    now = timezone.now()
    worker_gone = run.heartbeat_at is None or run.heartbeat_at < _stale_before(now)
    if run.status == RunStatus.QUEUED or (run.status == RunStatus.RUNNING and worker_gone):
        run.status = RunStatus.CANCELLED
        run.lease = ""
        run.finished_at = now
        run.cancel_requested = False
        run.sealed_api_key = ""  # the run has ended: its key goes
        run.save(
            update_fields=["status", "lease", "finished_at", "cancel_requested", "sealed_api_key"]
        )
    elif run.status == RunStatus.RUNNING:
        run.cancel_requested = True
        run.save(update_fields=["cancel_requested"])
    else:
        raise ConflictError(f"This run is already {run.status}", current={"status": run.status})
    return run


def _key_for_resume(run: InferenceRun, api_key: str) -> dict[str, Any]:
    """The key fields a resumed run gets: a researcher's own key was erased when the run
    ended, so it is asked for again."""
    if run.endpoint_id is not None:
        if api_key.strip():
            raise ApplicationError(
                "A registered endpoint has its own key; give none", field="api_key"
            )
        # Deactivated, or the owner's access or the model list changed since: say so now.
        endpoint_for_run(user=run.created_by, name=run.endpoint.name, model_name=run.model_name)
        return {}
    if api_key.strip():
        return {"sealed_api_key": api_key_seal(api_key_checked(api_key)), "api_key_given": True}
    if run.needs_api_key:
        raise ApplicationError(
            "Give your endpoint's API key again: it was erased when the run stopped",
            field="api_key",
        )
    return {}


@transaction.atomic
def inference_run_resume(
    *, user: Any, run_id: int, enqueue: bool = True, api_key: str = ""
) -> InferenceRun:
    """Queue a stopped run again: failed, cancelled, or running or queued with no sign of a
    worker for a while. Answers already saved are kept; questions that failed are retried.
    A run on the researcher's own endpoint with a key needs ``api_key`` again once it ended."""
    run = InferenceRun.objects.select_for_update().get(pk=run_id)
    _require_manager(user, run)
    if selectors.includes_test_questions(run.split):
        # Approval withdrawn since the run started: it may not carry on.
        account_check_test_split_access(user=run.created_by)
    now = timezone.now()
    # In the foreground (the command), a queued run may be taken from the queue's hands.
    resumable = run.is_resumable or (run.status == RunStatus.QUEUED and not enqueue)
    if not resumable:
        reason = {
            RunStatus.DONE: "This run is done: its answers are a submission already",
            RunStatus.RUNNING: "This run is running; cancel it first, or wait",
            RunStatus.QUEUED: "This run is waiting for the inference worker already",
        }[RunStatus(run.status)]
        raise ConflictError(reason, current={"status": run.status})
    key_fields = _key_for_resume(run, api_key)
    lock_user(run.created_by)
    _check_active_runs_left(run.created_by, besides=run.pk)
    if run.submission_id is None:
        check_stored_submissions_left(run.created_by, besides_run=run.pk)
    # Questions that failed, or that the endpoint refused, are sent again (the endpoint may
    # have been fixed); a continuation or an automatic resume after a lost worker does not
    # resend them (they have had their tries).
    InferenceResponse.objects.filter(
        run=run, status__in=[ResponseStatus.FAILED, ResponseStatus.REJECTED]
    ).delete()
    InferenceRun.objects.filter(pk=run.pk).update(
        status=RunStatus.QUEUED,
        cancel_requested=False,
        error="",
        lease="",
        attempts=0,
        finished_at=None,
        queued_at=now,
        **key_fields,
    )
    if enqueue:
        _enqueue(run.pk)
    run.refresh_from_db()
    return run


@dataclass(frozen=True)
class InferenceSweepResult:
    requeued: list[int]
    failed: list[int]
    cancelled: list[int]


def inference_run_sweep(*, now: datetime | None = None) -> InferenceSweepResult:
    """Runs whose worker died (running, heartbeat stale): queued again, failed after
    INFERENCE_MAX_AUTO_RESUMES tries, or cancelled if a cancel was waiting. Conditional
    updates: two sweepers cannot both act on one run."""
    now = now or timezone.now()
    stale = Q(status=RunStatus.RUNNING, heartbeat_at__lt=_stale_before(now))
    result = InferenceSweepResult([], [], [])
    # Queued so long that its message was probably lost (the broker restarted, retries ran
    # out): send another. A duplicate is harmless, since only one executor can claim a run.
    forgotten = InferenceRun.objects.filter(
        status=RunStatus.QUEUED,
        queued_at__lt=now - timedelta(seconds=settings.INFERENCE_QUEUED_RESEND_SECONDS),
    )
    for pk in forgotten.values_list("pk", flat=True):
        with transaction.atomic():
            if forgotten.filter(pk=pk).update(queued_at=now):
                result.requeued.append(pk)
                _enqueue(pk)
    for pk, attempts, cancel in InferenceRun.objects.filter(stale).values_list(
        "pk", "attempts", "cancel_requested"
    ):
        still = InferenceRun.objects.filter(stale, pk=pk)
        if cancel:
            if still.update(
                status=RunStatus.CANCELLED, lease="", finished_at=now, sealed_api_key=""
            ):
                result.cancelled.append(pk)
        elif attempts >= settings.INFERENCE_MAX_AUTO_RESUMES:
            if still.update(
                status=RunStatus.FAILED,
                lease="",
                finished_at=now,
                sealed_api_key="",
                error=f"The worker stopped {counted(attempts, 'time')} during this run; resume "
                "it to try again",
            ):
                result.failed.append(pk)
        else:
            with transaction.atomic():
                if still.update(status=RunStatus.QUEUED, lease="", queued_at=now):
                    result.requeued.append(pk)
                    _enqueue(pk)
    return result


# --- Executing -----------------------------------------------------------------------------


class _LeaseLost(Exception):
    """Another executor took the run (after this one looked dead): stop without writing."""


def _claim(run_id: int) -> str | None:
    """Take the run if it is queued, or running with a dead worker. Returns the lease."""
    lease = uuid.uuid4().hex
    now = timezone.now()
    claimed = InferenceRun.objects.filter(
        Q(status=RunStatus.QUEUED)
        | Q(status=RunStatus.RUNNING, heartbeat_at__lt=_stale_before(now)),
        pk=run_id,
        cancel_requested=False,
    ).update(
        status=RunStatus.RUNNING,
        lease=lease,
        heartbeat_at=now,
        started_at=Coalesce(F("started_at"), now),
        attempts=F("attempts") + 1,
        error="",
    )
    return lease if claimed else None


def inference_run_execute(
    *,
    run_id: int,
    time_budget: float | None = None,
    on_progress: ProgressCallback | None = None,
) -> str:
    """Send the run's unanswered questions and save each reply; when all are in, turn the
    answers into a scored submission. Safe to call any number of times.

    ``time_budget`` (seconds): stop sending after this long, let the requests in flight
    finish, and queue the run again to continue (Celery tasks stay within their time
    limits). Returns what happened, for the task log and the command.
    """
    lease = _claim(run_id)
    if lease is None:
        status = InferenceRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        return f"not started: the run is {status or 'gone'}"
    execution = _Execution(run_id, lease, time_budget=time_budget, on_progress=on_progress)
    try:
        return execution.execute()
    except _LeaseLost:
        return "stopped: another worker took the run over"
    except DatabaseError:
        # Transient: hand the run back to the queue for the task's retry (or the sweeper).
        InferenceRun.objects.filter(pk=run_id, lease=lease).update(
            status=RunStatus.QUEUED, lease="", queued_at=timezone.now()
        )
        raise
    except SoftTimeLimitExceeded:
        # The task's time ran out before its slice did (a short CELERY_TASK_SOFT_TIME_LIMIT):
        # keep what arrived and go on in a new task, as at the end of a slice.
        execution.salvage()
        execution.finish(RunStatus.QUEUED, queued_at=timezone.now())
        _enqueue(run_id)
        return "paused"
    except KeyboardInterrupt:
        execution.salvage()
        execution.finish(
            RunStatus.FAILED, "Interrupted from the command line; resume the run to continue"
        )
        raise
    except Exception:
        logger.exception("inference run %s failed", run_id)
        execution.salvage()
        execution.finish(
            RunStatus.FAILED,
            "The run stopped because of an internal error (see the worker's log); resume it "
            "to continue",
        )
        return RunStatus.FAILED


@dataclass
class _Prepared:
    question_id: str
    messages: list[dict[str, Any]] | None
    prompt_hash: str
    key: str
    error: str = ""


class _ImageUnreadable(Exception):
    """A table's own image that the executing worker cannot read: drawing the table instead
    would send other prompts than the export shows, so the run stops."""


class _Prompts:
    """Builds each question's messages; tables are read a chunk at a time and the last few
    are kept, since a table's questions come together."""

    KEEP = 64

    def __init__(self, run: InferenceRun) -> None:
        self.run = run
        self._tables: OrderedDict[str, PromptTable] = OrderedDict()
        self._examples = self._load_examples(run.config.get("example_question_ids") or [])

    def _prompt_table(self, table: Table) -> PromptTable:
        image = None
        if self.run.table_format == TableFormat.IMAGE:
            image = table_png(table)
            if image is None and table.image:
                raise _ImageUnreadable(
                    f"The image of table {table.pk} ({table.image.name}) cannot be read where "
                    "the run executes: give the inference worker the same MEDIA_ROOT as the "
                    "web server, then resume the run"
                )
        return PromptTable(canonical_csv=table.canonical_csv, image_png=image, source=table.source)

    def _load_examples(self, ids: list[str]) -> list[tuple[str, WorkedExample]]:
        if self.run.prompt_style != "one_shot":
            return []
        by_id = {
            q.pk: q
            for q in Question.objects.filter(pk__in=ids)
            .select_related("table")
            .only("id", "text", "gold_answer", "table")
        }
        missing = [qid for qid in ids if qid not in by_id]
        if missing or not ids:
            raise PromptError(
                f"The worked example {', '.join(missing) or '(none)'} is gone; start a new run"
            )
        return [
            (
                by_id[qid].table_id,
                WorkedExample(
                    question=by_id[qid].text,
                    answer=by_id[qid].gold_answer,
                    table=self._prompt_table(by_id[qid].table),
                ),
            )
            for qid in ids
        ]

    def load(self, table_ids: set[str]) -> None:
        wanted = [t for t in table_ids if t not in self._tables]
        if wanted:
            fields = ["id", "canonical_csv", "source", "image"]
            for table in Table.objects.filter(pk__in=wanted).only(*fields):
                self._tables[table.pk] = self._prompt_table(table)
        for t in table_ids:
            self._tables.move_to_end(t)
        while len(self._tables) > max(self.KEEP, len(table_ids)):
            self._tables.popitem(last=False)

    def messages(self, text: str, table_id: str) -> list[dict[str, Any]]:
        example = None
        if self._examples:
            # Never the question's own table as its example.
            example = next((ex for t, ex in self._examples if t != table_id), self._examples[-1][1])
        return prompt_messages(
            question=text,
            table=self._tables[table_id],
            table_format=self.run.table_format,
            prompt_style=self.run.prompt_style,
            example=example,
            system_role=self.run.system_role,
        )


class _Execution:
    def __init__(
        self,
        run_id: int,
        lease: str,
        *,
        time_budget: float | None,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.run_id = run_id
        self.lease = lease
        self.run: InferenceRun
        self.time_budget = time_budget
        self.on_progress = on_progress
        self.started = time.monotonic()
        self.buffer: list[InferenceResponse] = []
        self.cache_rows: list[CachedResponse] = []
        self.prepared: dict[str, _Prepared] = {}
        self.delta = {"answered": 0, "cached": 0, "failed": 0}
        self.counts = {"total": 0, "answered": 0, "cached": 0, "failed": 0}
        self.sent = 0
        self.fatal = ""

    # --- bookkeeping

    def _mine(self) -> Any:
        return InferenceRun.objects.filter(pk=self.run_id, lease=self.lease)

    def finish(self, status: str, error: str = "", **fields: Any) -> str:
        """Leave the run in ``status``, if it is still ours; returns the status. A run that
        ends (done, failed, cancelled) loses its researcher's key in the same update."""
        if status not in ACTIVE_RUN_STATUSES:
            fields["sealed_api_key"] = ""
        self._mine().update(
            status=status,
            error=error,
            lease="",
            cancel_requested=False,
            finished_at=None if status == RunStatus.QUEUED else timezone.now(),
            heartbeat_at=timezone.now(),
            **fields,
        )
        return status

    def salvage(self) -> None:
        """Save what has arrived before giving up on the run, if the database lets us."""
        if not self.buffer:
            return
        try:
            self.flush(report=False)
        except Exception:
            logger.exception("inference run %s: answers could not be saved", self.run_id)

    def _report(self) -> None:
        if self.on_progress:
            self.on_progress(
                Progress(sent=self.sent, elapsed=time.monotonic() - self.started, **self.counts)
            )

    def flush(self, *, report: bool = True) -> None:
        """Commit the answers received so far with the counters and a heartbeat."""
        with transaction.atomic():
            updated = self._mine().update(
                heartbeat_at=timezone.now(),
                answered=F("answered") + self.delta["answered"],
                cached=F("cached") + self.delta["cached"],
                failed=F("failed") + self.delta["failed"],
            )
            if not updated:
                raise _LeaseLost
            if self.buffer:
                InferenceResponse.objects.bulk_create(self.buffer)
            if self.cache_rows:
                CachedResponse.objects.bulk_create(self.cache_rows, ignore_conflicts=True)
        for k, v in self.delta.items():
            self.counts[k] += v
            self.delta[k] = 0
        self.buffer.clear()
        self.cache_rows.clear()
        if report:
            self._report()

    def _keep(self, item: _Prepared, result: ChatResult, *, cached: bool = False) -> None:
        """Buffer one question's outcome for the next commit (and the cache, if answered)."""
        status = {
            "answered": ResponseStatus.ANSWERED,
            "rejected": ResponseStatus.REJECTED,
        }.get(result.outcome, ResponseStatus.FAILED)
        answered = status == ResponseStatus.ANSWERED
        self.buffer.append(
            InferenceResponse(
                run_id=self.run_id,
                question_id=item.question_id,
                status=status,
                response=result.content,
                finish_reason=result.finish_reason,
                error="" if answered else result.error,
                prompt_sha256=item.prompt_hash,
                from_cache=cached,
                attempts=0 if cached else result.attempts,
                latency_ms=None if cached else result.latency_ms,
            )
        )
        if not answered:
            self.delta["failed"] += 1
            return
        self.delta["answered"] += 1
        self.delta["cached"] += cached
        if not cached:
            self.cache_rows.append(
                CachedResponse(
                    key=item.key,
                    endpoint_id=self.run.endpoint_id,
                    owner_id=None if self.run.endpoint_id else self.run.created_by_id,
                    model_name=self.run.model_name,
                    base_url=self.run.base_url,
                    prompt_sha256=item.prompt_hash,
                    response=result.content,
                    finish_reason=result.finish_reason,
                )
            )

    # --- the work

    def _start(self) -> list[tuple[str, str, str]]:
        """Counters from what is saved; the questions still to send, by table."""
        run = self.run
        questions = selectors.benchmark_questions(split=run.split, data_scope=run.data_scope)
        saved = InferenceResponse.objects.filter(run=run, question__in=questions)
        answered = saved.filter(status=ResponseStatus.ANSWERED)
        counts = {
            "total": questions.count(),
            "answered": answered.count(),
            "cached": answered.filter(from_cache=True).count(),
            "failed": saved.exclude(status=ResponseStatus.ANSWERED).count(),
        }
        if not self._mine().update(**counts, heartbeat_at=timezone.now()):
            raise _LeaseLost
        self.counts = counts
        self._report()
        done = InferenceResponse.objects.filter(run=run).values("question_id")
        return list(
            questions.exclude(pk__in=done)
            .order_by("table_id", "id")
            .values_list("id", "text", "table_id")
        )

    def _prepare(
        self, prompts: _Prompts, chunk: list[tuple[str, str, str]], scope: str
    ) -> list[_Prepared]:
        prompts.load({table_id for _, _, table_id in chunk})
        run = self.run
        out = []
        for qid, text, table_id in chunk:
            try:
                messages = prompts.messages(text, table_id)
            except PromptError as exc:
                out.append(_Prepared(qid, None, "", "", error=f"The prompt cannot be built: {exc}"))
                continue
            digest = prompt_sha256(messages)
            key = cache_key(
                model=run.model_name,
                base_url=run.base_url,
                prompt_hash=digest,
                temperature=run.temperature,
                max_tokens=run.max_tokens,
                scope=scope,
            )
            out.append(_Prepared(qid, messages, digest, key))
        return out

    def _chunks(self, pending: list[tuple[str, str, str]]) -> Iterator[list[tuple[str, str, str]]]:
        for start in range(0, len(pending), CHUNK):
            yield pending[start : start + CHUNK]

    def execute(self) -> str:
        self.run = InferenceRun.objects.select_related("endpoint", "created_by").get(pk=self.run_id)
        run = self.run
        if run.needs_api_key:
            return self.finish(
                RunStatus.FAILED,
                "Your endpoint's key was erased when the run stopped; resume it with the key",
            )
        try:
            target = chat_target(
                user=run.created_by,
                endpoint=run.endpoint,
                base_url=run.base_url,
                sealed_key=run.sealed_api_key,
                model=run.model_name,
                temperature=run.temperature,
                max_tokens=run.max_tokens,
            )
        except ApplicationError as exc:
            return self.finish(RunStatus.FAILED, exc.message)
        if target.base_url != run.base_url:
            # An admin moved the registered endpoint: the requests, and the cache, go there.
            run.base_url = target.base_url
            self._mine().update(base_url=target.base_url)
        pending = self._start()
        try:
            prompts = _Prompts(run)
        except (PromptError, _ImageUnreadable) as exc:
            return self.finish(RunStatus.FAILED, str(exc))
        policy = RetryPolicy(
            max_attempts=max(1, settings.INFERENCE_MAX_ATTEMPTS),
            base_seconds=settings.INFERENCE_RETRY_BASE_MS / 1000,
            max_seconds=settings.INFERENCE_RETRY_MAX_SECONDS,
            timeout_seconds=settings.INFERENCE_REQUEST_TIMEOUT,
        )
        try:
            with ChatPool(target, concurrency=run.concurrency, policy=policy) as pool:
                try:
                    outcome = self._loop(pool, prompts, pending)
                except BaseException:
                    # Interrupted (Ctrl-C, the task's time limit, a table's image): the
                    # answers that have arrived are kept, not asked again on resume.
                    self._drain(pool)
                    raise
        except _ImageUnreadable as exc:
            self.salvage()
            return self.finish(RunStatus.FAILED, str(exc))
        if self.buffer or any(self.delta.values()):
            self.flush()
        if outcome == "fatal":
            if self.fatal.startswith("Could not reach"):
                return self.finish(
                    RunStatus.FAILED,
                    f"The endpoint is unreachable: {self.fatal}. Check that the server is up "
                    "and the base URL, then resume the run",
                )
            return self.finish(
                RunStatus.FAILED,
                f"The endpoint refused the run: {self.fatal}. Check the endpoint, the model "
                "name and the key, then resume the run",
            )
        if outcome == "cancelled":
            return self.finish(RunStatus.CANCELLED)
        if outcome == "paused":
            self.finish(RunStatus.QUEUED, queued_at=timezone.now(), attempts=0)
            _enqueue(self.run_id)
            return "paused"
        return self._complete()

    def _loop(self, pool: ChatPool, prompts: _Prompts, pending: list[tuple[str, str, str]]) -> str:
        run = self.run
        chunks = self._chunks(pending)
        window = 2 * run.concurrency + CHUNK  # prepared ahead of the requests in flight
        outstanding = 0
        exhausted = not pending
        stopping = ""
        drain_deadline = 0.0
        last_flush = last_check = last_beat = time.monotonic()
        while True:
            while not stopping and not exhausted and outstanding < window:
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                prepared = self._prepare(prompts, chunk, pool.client.target.cache_scope)
                hits = self._cache_hits(prepared)
                for item in prepared:
                    if item.messages is None:
                        refused = ChatResult(
                            key=item.question_id, outcome="rejected", error=item.error, attempts=0
                        )
                        self._keep(item, refused)
                    elif item.key in hits:
                        content, finish_reason = hits[item.key]
                        self._keep(
                            item,
                            ChatResult(
                                key=item.question_id,
                                outcome="answered",
                                content=content,
                                finish_reason=finish_reason,
                            ),
                            cached=True,
                        )
                    else:
                        self.prepared[item.question_id] = item
                        pool.submit(ChatRequest(item.question_id, item.messages))
                        outstanding += 1
                        self.sent += 1
            if outstanding == 0 and (exhausted or stopping):
                # Every question settled as the time budget ran out: that is the end, not a pause.
                return "complete" if exhausted else stopping
            result = pool.get(timeout=0.02) if outstanding else None
            while result is not None:
                outstanding -= 1
                if result.outcome == "fatal":
                    self.fatal = result.error
                    self._drain(pool)
                    return "fatal"
                self._keep(self.prepared.pop(result.key), result)
                result = pool.get(timeout=0)
            now = time.monotonic()
            if len(self.buffer) >= FLUSH_ROWS or (
                self.buffer and now - last_flush >= FLUSH_SECONDS
            ):
                self.flush()
                last_flush = last_beat = now
            if now - last_check >= CHECK_SECONDS:
                last_check = now
                current = self._mine().values_list("cancel_requested", flat=True).first()
                if current is None:
                    raise _LeaseLost
                if current:
                    self._drain(pool)
                    return "cancelled"
                if now - last_beat >= HEARTBEAT_SECONDS:
                    self.flush()
                    last_flush = last_beat = now
            if (
                not stopping
                and self.time_budget is not None
                and now - self.started >= self.time_budget
            ):
                stopping = "paused"
                drain_deadline = now + PAUSE_DRAIN_SECONDS
            if stopping and now >= drain_deadline:
                return stopping  # requests still in flight are sent again on resume

    def _drain(self, pool: ChatPool) -> None:
        """Keep the answers that arrived while the run was deciding to stop."""
        while (result := pool.get(timeout=0)) is not None:
            if result.outcome != "fatal":
                self._keep(self.prepared.pop(result.key), result)

    def _cache_hits(self, prepared: list[_Prepared]) -> dict[str, tuple[str, str]]:
        if not self.run.use_cache:
            return {}
        keys = [p.key for p in prepared if p.messages is not None]
        rows = CachedResponse.objects.filter(key__in=keys).values_list(
            "key", "response", "finish_reason"
        )
        return {key: (response, reason) for key, response, reason in rows}

    @transaction.atomic
    def _complete(self) -> str:
        run = InferenceRun.objects.select_for_update().filter(pk=self.run_id, lease=self.lease)
        run = run.first()
        if run is None:
            raise _LeaseLost
        failed = InferenceResponse.objects.filter(run=run, status=ResponseStatus.FAILED)
        if failed.exists():
            last = failed.order_by("-created_at", "-id").first()
            return self.finish(
                RunStatus.FAILED,
                f"No answer to {counted(failed.count(), 'question')} "
                f"({last.error if last else ''}); "
                "resume the run to send them again",
            )
        questions = selectors.benchmark_questions(split=run.split, data_scope=run.data_scope)
        rejected = InferenceResponse.objects.filter(
            run=run, status=ResponseStatus.REJECTED, question__in=questions
        )
        refused, asked_total = rejected.count(), questions.count()
        if refused and refused * 100 > settings.INFERENCE_MAX_REJECTED_PERCENT * asked_total:
            example = rejected.order_by("question_id").first()
            return self.finish(
                RunStatus.FAILED,
                f"The endpoint refused {refused:,} of {counted(asked_total, 'prompt')} "
                f"({example.error if example else ''}): check the model's modality and context "
                "length, then resume the run to send them again",
            )
        answers = InferenceResponse.objects.filter(
            run=run, status=ResponseStatus.ANSWERED, question__in=questions
        )
        rows = list(answers.values_list("question_id", "response", "question__table_id"))
        sent = sorted(
            InferenceResponse.objects.filter(run=run, question__in=questions).values_list(
                "question_id", "prompt_sha256", "from_cache"
            )
        )
        if not rows:
            rejected = InferenceResponse.objects.filter(run=run).exclude(error="").first()
            return self.finish(
                RunStatus.FAILED,
                "No question was answered"
                + (f"; the endpoint said: {rejected.error}" if rejected else ""),
            )
        predictions = _predictions(run, rows)
        # A prompt the endpoint refused (over the context length, say) is the system's
        # answer too: submitted as the empty answer, so the run answers every question, as
        # a submission scored against test gold answers must (the 2025-10 rules count it).
        for qid in rejected.values_list("question_id", flat=True):
            predictions.setdefault(qid, "")
        asked = sorted(questions.values_list("id", flat=True))
        config = {
            **run.config,
            "questions": len(asked),
            "questions_sha256": hashlib.sha256("\n".join(asked).encode()).hexdigest(),
            "answered": len(rows),
            # What was asked, exactly: one line per question, its id and its prompt's SHA-256.
            "prompts_sha256": hashlib.sha256(
                "\n".join(f"{qid} {digest}" for qid, digest, _ in sent).encode()
            ).hexdigest(),
            "answered_from_cache": sum(1 for *_, cached in sent if cached),
            "completed_at": timezone.now().isoformat(),
        }
        data = _submission_input(run)
        data = SubmissionInput(
            **{**data.__dict__, "description": _description(run, config)},
        )
        entry = DailyLimitEntry.objects.filter(inference_run=run).first()
        try:
            submission = submission_create_from_predictions(
                owner=run.created_by, data=data, predictions=predictions, limit_entry=entry
            )
        except (ApplicationError, PermissionDenied) as exc:
            message = exc.message if isinstance(exc, ApplicationError) else str(exc)
            return self.finish(RunStatus.FAILED, f"The answers could not be submitted: {message}")
        return self.finish(RunStatus.DONE, submission=submission, config=config)


def _predictions(run: InferenceRun, rows: list[tuple[str, str, str]]) -> dict[str, str]:
    """The answers to score. Answers in nonsense tokens are mapped back to the table's words."""
    if run.table_format != TableFormat.NONSENSICAL_CSV:
        return {qid: response for qid, response, _ in rows}
    tables = dict(
        Table.objects.filter(pk__in={t for _, _, t in rows}).values_list("id", "canonical_csv")
    )
    reverse: dict[str, dict[str, str]] = {}
    out = {}
    for qid, response, table_id in rows:
        if table_id not in reverse:
            reverse[table_id] = nonsense_for("", tables[table_id])[2]
        out[qid] = denonsense(response, reverse[table_id])
    return out


def _description(run: InferenceRun, config: dict[str, Any]) -> str:
    """The submission's description: the researcher's note, then how the answers were made."""
    parts = [
        f"Answers produced on the platform by inference run {run.pk}: {run.model_name}",
        f"{run.get_table_format_display()} tables",
        run.get_prompt_style_display().lower(),
        "system role" if run.system_role else "no system role",
        f"temperature {run.temperature:g}",
        f"max tokens {run.max_tokens}",
        f"prompt format {config['prompt_format_sha256'][:12]}",
    ]
    if config.get("platform_commit"):
        parts.append(f"platform commit {config['platform_commit'][:12]}")
    recipe = ", ".join(parts) + "."
    return f"{run.description.strip()}\n\n{recipe}" if run.description.strip() else recipe
