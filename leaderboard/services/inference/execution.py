"""Executing a run: claiming it under a lease, checking the endpoint still serves the model
(before the first question), sending its unanswered questions through a pool of requests in
flight, saving each reply as it arrives, answering from the cache, and turning the answers
into a scored submission.

A prompt longer than the model's context is not truncated: the endpoint refuses it, and it is
scored as the empty answer and counted (``too_long``), as the benchmark's own scripts did
(they served each model with a fixed context and scored what it could not read as
unanswered). Truncating would send other prompts than the export shows, and the scores of
the questions answered would no longer be the reference's."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.utils import timezone

from dataset.models import Table
from endpoints.client import ChatPool, ChatRequest, ChatResult, RetryPolicy
from endpoints.selectors import chat_target, served_model_check
from hctqa.core.prompts import PromptError, denonsense, nonsense_for, prompt_sha256
from hctqa.core.tracks.prompts import ReplyError
from hctqa.core.wording import counted
from leaderboard import selectors
from leaderboard.jobs import INFERENCE_RUN, enqueue_run
from leaderboard.models import (
    ACTIVE_RUN_STATUSES,
    CachedResponse,
    DailyLimitEntry,
    InferenceResponse,
    InferenceRun,
    ResponseStatus,
    RunStatus,
    TableFormat,
)
from leaderboard.services.inference.prompts import (
    ImageUnreadable,
    RunPrompts,
    TrackRunPrompts,
    cache_key,
)
from leaderboard.services.inference.runs import (
    check_room_for_answers,
    run_items,
    submission_input,
)
from leaderboard.services.notices import inference_run_failed_notify
from leaderboard.services.submissions import SubmissionInput, submission_create_from_predictions
from plumbing import jobs
from plumbing.errors import ApplicationError
from tracks.registry import read_reply, track

logger = logging.getLogger(__name__)

# Answers are committed at least every INFERENCE_SAVE_MS (a setting) or this many rows.
FLUSH_ROWS = 500
CHECK_SECONDS = 0.5  # how often cancel requests and the lease are read
HEARTBEAT_SECONDS = 5.0
CHUNK = 64  # questions prepared (prompt, cache look-up) at a time
PAUSE_DRAIN_SECONDS = 10.0  # how long a pausing run waits for the requests in flight


@dataclass(frozen=True)
class Progress:
    total: int
    answered: int
    cached: int
    failed: int
    sent: int
    elapsed: float
    too_long: int = 0


ProgressCallback = Callable[[Progress], None]


class _LeaseLost(Exception):
    """Another executor took the run (after this one looked dead): stop without writing."""


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
    # Queued, or running with a dead worker; never one whose cancel is waiting.
    lease = jobs.claim(INFERENCE_RUN, run_id, only=Q(cancel_requested=False))
    if lease is None:
        status = InferenceRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        return f"not started: the run is {status or 'gone'}"
    execution = _Execution(run_id, lease, time_budget=time_budget, on_progress=on_progress)
    try:
        # The loop beats with each commit of answers; this covers the checks before it.
        with jobs.heartbeat(INFERENCE_RUN, run_id, lease):
            return execution.execute()
    except _LeaseLost:
        return "stopped: another worker took the run over"
    except DatabaseError:
        # Transient: hand the run back to the queue for the task's retry (or the sweeper).
        jobs.mine(INFERENCE_RUN, run_id, lease).update(
            status=RunStatus.QUEUED, lease="", queued_at=timezone.now()
        )
        raise
    except SoftTimeLimitExceeded:
        # The task's time ran out before its slice did (a short CELERY_TASK_SOFT_TIME_LIMIT):
        # keep what arrived and go on in a new task, as at the end of a slice.
        execution.salvage()
        execution.finish(RunStatus.QUEUED, queued_at=timezone.now())
        enqueue_run(run_id)
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
    # The question's id, or (a track's run) the item's primary key.
    subject: str
    messages: list[dict[str, Any]] | None
    prompt_hash: str
    key: str
    error: str = ""


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
        self.delta = {"answered": 0, "cached": 0, "failed": 0, "too_long": 0}
        self.counts = {"total": 0, "answered": 0, "cached": 0, "failed": 0, "too_long": 0}
        self.sent = 0
        self.fatal = ""

    # --- bookkeeping

    def _mine(self) -> Any:
        return jobs.mine(INFERENCE_RUN, self.run_id, self.lease)

    def finish(self, status: str, error: str = "", **fields: Any) -> str:
        """Leave the run in ``status``, if it is still ours; returns the status. A run that
        ends (done, failed, cancelled) loses its researcher's key in the same update."""
        if status not in ACTIVE_RUN_STATUSES:
            fields["sealed_api_key"] = ""
        with transaction.atomic():
            moved = self._mine().update(
                status=status,
                error=error,
                lease="",
                cancel_requested=False,
                finished_at=None if status == RunStatus.QUEUED else timezone.now(),
                heartbeat_at=timezone.now(),
                **fields,
            )
            if moved and status == RunStatus.FAILED:
                inference_run_failed_notify(run_id=self.run_id)
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
                too_long=F("too_long") + self.delta["too_long"],
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
            "too_long": ResponseStatus.TOO_LONG,
        }.get(result.outcome, ResponseStatus.FAILED)
        answered = status == ResponseStatus.ANSWERED
        subject = (
            {"question_id": item.subject} if self.run.is_qa else {"item_id": int(item.subject)}
        )
        self.buffer.append(
            InferenceResponse(
                run_id=self.run_id,
                **subject,
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
            self.delta["too_long" if status == ResponseStatus.TOO_LONG else "failed"] += 1
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
        """Counters from what is saved; the questions (a track's items) still to send, by
        table."""
        run = self.run
        if run.is_qa:
            questions = selectors.benchmark_questions(split=run.split, data_scope=run.data_scope)
            saved = InferenceResponse.objects.filter(run=run, question__in=questions)
        else:
            items = run_items(run)
            saved = InferenceResponse.objects.filter(run=run, item__in=items)
        answered = saved.filter(status=ResponseStatus.ANSWERED)
        too_long = saved.filter(status=ResponseStatus.TOO_LONG)
        counts = {
            "total": questions.count() if run.is_qa else items.count(),
            "answered": answered.count(),
            "cached": answered.filter(from_cache=True).count(),
            "failed": saved.exclude(
                status__in=[ResponseStatus.ANSWERED, ResponseStatus.TOO_LONG]
            ).count(),
            "too_long": too_long.count(),
        }
        if not self._mine().update(**counts, heartbeat_at=timezone.now()):
            raise _LeaseLost
        self.counts = counts
        self._report()
        if not run.is_qa:
            done = InferenceResponse.objects.filter(run=run).values("item_id")
            pending = items.exclude(pk__in=done).order_by("item_id")
            return [(str(pk), "", key) for pk, key in pending.values_list("pk", "table_key")]
        done = InferenceResponse.objects.filter(run=run).values("question_id")
        return list(
            questions.exclude(pk__in=done)
            .order_by("table_id", "id")
            .values_list("id", "text", "table_id")
        )

    def _prepare(
        self,
        prompts: RunPrompts | TrackRunPrompts,
        chunk: list[tuple[str, str, str]],
        scope: str,
    ) -> list[_Prepared]:
        run = self.run
        out = []
        for prompt in prompts.messages_for(chunk):
            messages = prompt.messages
            if messages is None:
                out.append(_Prepared(prompt.key, None, "", "", error=prompt.error))
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
            out.append(_Prepared(prompt.key, messages, digest, key))
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
        try:
            # Before the first question: the model may have gone since the run was queued,
            # or the server restarted with another context length.
            served = served_model_check(target)
            check_room_for_answers(run.max_tokens, served)
        except ApplicationError as exc:
            return self.finish(
                RunStatus.FAILED,
                f"Nothing was sent: {exc.message}. Fix the endpoint, then resume the run",
            )
        if served.listed and served.context_length != run.context_length:
            run.config = {**run.config, "context_length": served.context_length}
            self._mine().update(config=run.config)
        if target.base_url != run.base_url:
            # An admin moved the registered endpoint: the requests, and the cache, go there.
            run.base_url = target.base_url
            self._mine().update(base_url=target.base_url)
        pending = self._start()
        try:
            prompts = RunPrompts(run) if run.is_qa else TrackRunPrompts(run)
        except (PromptError, ImageUnreadable) as exc:
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
        except ImageUnreadable as exc:
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
            enqueue_run(self.run_id)
            return "paused"
        return self._complete()

    def _loop(
        self, pool: ChatPool, prompts: RunPrompts, pending: list[tuple[str, str, str]]
    ) -> str:
        run = self.run
        chunks = self._chunks(pending)
        window = 2 * run.concurrency + CHUNK  # prepared ahead of the requests in flight
        outstanding = 0
        exhausted = not pending
        stopping = ""
        drain_deadline = 0.0
        save_every = settings.INFERENCE_SAVE_MS / 1000
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
                            key=item.subject, outcome="rejected", error=item.error, attempts=0
                        )
                        self._keep(item, refused)
                    elif item.key in hits:
                        content, finish_reason = hits[item.key]
                        self._keep(
                            item,
                            ChatResult(
                                key=item.subject,
                                outcome="answered",
                                content=content,
                                finish_reason=finish_reason,
                            ),
                            cached=True,
                        )
                    else:
                        self.prepared[item.subject] = item
                        pool.submit(ChatRequest(item.subject, item.messages))
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
            if len(self.buffer) >= FLUSH_ROWS or (self.buffer and now - last_flush >= save_every):
                self.flush()
                # From the commit's end: a slow commit leaves the interval between commits whole.
                last_flush = last_beat = time.monotonic()
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
                    last_flush = last_beat = time.monotonic()
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
        run = self._mine().select_for_update().first()
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
        if not run.is_qa:
            return _track_complete(self, run)
        questions = selectors.benchmark_questions(split=run.split, data_scope=run.data_scope)
        rejected = InferenceResponse.objects.filter(
            run=run, status=ResponseStatus.REJECTED, question__in=questions
        )
        refused, asked_total = rejected.count(), questions.count()
        if _refused_too_often(refused, asked_total):
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
        # A prompt the endpoint refused, or that is over the model's context, is the system's
        # answer too: submitted as the empty answer, so the run answers every question, as
        # a submission scored against test gold answers must (the 2025-10 rules count it).
        too_long = InferenceResponse.objects.filter(
            run=run, status=ResponseStatus.TOO_LONG, question__in=questions
        )
        too_long_ids = list(too_long.values_list("question_id", flat=True))
        for qid in [*rejected.values_list("question_id", flat=True), *too_long_ids]:
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
            "over_context_length": len(too_long_ids),
            "completed_at": timezone.now().isoformat(),
        }
        return _submit(self, run, predictions, config, too_long=len(too_long_ids))


def _refused_too_often(refused: int, total: int) -> bool:
    return bool(refused) and refused * 100 > settings.INFERENCE_MAX_REJECTED_PERCENT * total


def _track_complete(execution: _Execution, run: InferenceRun) -> str:
    """A track run's replies read as predictions (``registry.read_reply``: a reply that does
    not hold what was asked is no prediction, as is a prompt the endpoint refused or one over
    the context), then submitted like an upload of them."""
    info = track(run.track)
    items = run_items(run)
    responses = InferenceResponse.objects.filter(run=run, item__in=items)
    refused = responses.filter(status=ResponseStatus.REJECTED)
    total = items.count()
    if _refused_too_often(refused.count(), total):
        example = refused.order_by("item__item_id").first()
        return execution.finish(
            RunStatus.FAILED,
            f"The endpoint refused {refused.count():,} of {counted(total, 'prompt')} "
            f"({example.error if example else ''}): check the model's modality and context "
            "length, then resume the run to send them again",
        )
    predictions: dict[str, Any] = dict.fromkeys(items.values_list("item_id", flat=True))
    unreadable = 0
    answers = responses.filter(status=ResponseStatus.ANSWERED).values_list(
        "item__item_id", "response"
    )
    for item_id, reply in answers.iterator(chunk_size=500):
        try:
            predictions[item_id] = read_reply(info, reply)
        except ReplyError:
            unreadable += 1
    if not any(v is not None for v in predictions.values()):
        return execution.finish(
            RunStatus.FAILED,
            f"No reply held what the prompt asked for ({info.prediction}); check the model",
        )
    too_long = responses.filter(status=ResponseStatus.TOO_LONG).count()
    sent = sorted(responses.values_list("item__item_id", "prompt_sha256", "from_cache"))
    config = {
        **run.config,
        "items": total,
        "items_sha256": hashlib.sha256("\n".join(sorted(predictions)).encode()).hexdigest(),
        "answered": len(sent) - refused.count() - too_long,
        "replies_without_a_prediction": unreadable,
        "prompts_sha256": hashlib.sha256(
            "\n".join(f"{key} {digest}" for key, digest, _ in sent).encode()
        ).hexdigest(),
        "answered_from_cache": sum(1 for *_, cached in sent if cached),
        "over_context_length": too_long,
        "completed_at": timezone.now().isoformat(),
    }
    return _submit(execution, run, predictions, config, too_long=too_long)


def _submit(
    execution: _Execution,
    run: InferenceRun,
    predictions: dict[str, Any],
    config: dict[str, Any],
    *,
    too_long: int,
) -> str:
    """The run's answers as its owner's submission (the run took today's test-split slot
    when it started), and the run done; or failed, saying why they could not be."""
    data = submission_input(run)
    data = SubmissionInput(**{**data.__dict__, "description": _description(run, config)})
    entry = DailyLimitEntry.objects.filter(inference_run=run).first()
    try:
        submission = submission_create_from_predictions(
            owner=run.created_by,
            data=data,
            predictions=predictions,
            limit_entry=entry,
            too_long_prompts=too_long,
        )
    except (ApplicationError, PermissionDenied) as exc:
        message = exc.message if isinstance(exc, ApplicationError) else str(exc)
        return execution.finish(RunStatus.FAILED, f"The answers could not be submitted: {message}")
    return execution.finish(RunStatus.DONE, submission=submission, config=config)


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
    if run.is_qa:
        asked = f"{run.get_table_format_display()} tables"
    else:
        asked = f"the {track(run.track).name} track's prompt"
        if run.table_format not in (TableFormat.OTHER, TableFormat.IMAGE):
            asked += f", {run.get_table_format_display()} tables"
    parts = [
        f"Answers produced on the platform by inference run {run.pk}: {run.model_name}",
        asked,
        run.get_prompt_style_display().lower(),
        "system role" if run.system_role else "no system role",
        f"temperature {run.temperature:g}",
        f"max tokens {run.max_tokens}",
        f"prompt format {config['prompt_format_sha256'][:12]}",
    ]
    if config.get("platform_commit"):
        parts.append(f"platform commit {config['platform_commit'][:12]}")
    recipe = ", ".join(parts) + "."
    if config.get("over_context_length"):
        context = config.get("context_length")
        of = f" of {context:,} tokens" if isinstance(context, int) else ""
        recipe += (
            f" {counted(config['over_context_length'], 'prompt')} over the model's context "
            f"length{of}: not answered, scored as empty answers."
        )
    return f"{run.description.strip()}\n\n{recipe}" if run.description.strip() else recipe
