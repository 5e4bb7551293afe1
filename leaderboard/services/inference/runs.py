"""Inference runs that people start, cancel and resume: the request checked in one pass
(endpoint, key, ranges, the board's metadata, the daily test-split limit, the endpoint's
model list and context length), the run queued for the inference worker, and the key fields
a resumed run needs.

Check before spending: everything that would stop the finished run from becoming a
submission, and that can be known before its first question is sent, is checked here, and
the run is refused with nothing written. Only the answers themselves are judged at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.services import account_check_test_split_access
from dataset.selectors import one_shot_example_ids
from endpoints.keys import api_key_seal
from endpoints.models import Endpoint
from endpoints.selectors import (
    ServedModelCheck,
    chat_target,
    endpoint_for_run,
    own_endpoint_check,
    served_model_check,
)
from endpoints.services import api_key_checked, own_base_url_checked
from hctqa.core.prompts import PROMPT_STYLES, TABLE_FORMATS
from hctqa.core.tracks.prompts import PROMPT_VERSION as TRACK_PROMPT_VERSION
from hctqa.core.wording import counted
from leaderboard import selectors
from leaderboard.jobs import enqueue_run
from leaderboard.models import (
    ACTIVE_RUN_STATUSES,
    QA_TRACK,
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
from leaderboard.permissions import MANAGING_RUN, STARTING_INFERENCE
from leaderboard.services.inference.prompts import (
    prompt_format_fingerprint,
    track_prompt_fingerprint,
)
from leaderboard.services.submissions import (
    TRACK_SPLITS,
    SubmissionInput,
    check_metadata_problems,
    check_stored_submissions_left,
    lock_user,
    take_test_split_slot,
)
from plumbing.commit import platform_commit
from plumbing.errors import ApplicationError, ConflictError, Problems
from tracks import selectors as track_selectors
from tracks.models import TrackItem
from tracks.registry import track

INFERENCE_QUEUE = "inference"
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_TOKENS_RANGE = (1, 8192)
CONCURRENCY_RANGE = (1, 256)


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
    # The task: QA's questions, or a track's items (extraction: region given).
    track: str = QA_TRACK
    mode: str = ""


def run_items(run: InferenceRun | InferenceRunInput) -> QuerySet[TrackItem]:
    """The items a run on a track beside QA asks about."""
    return track_selectors.items_of(track=run.track, split=run.split, mode=run.mode)


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
    qa = data.track == QA_TRACK
    if qa and not problems.on("table_format") and data.table_format not in TABLE_FORMATS:
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
        ("data_scope", "The data scope", DataScope.values if qa else [""]),
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


def submission_input(run: InferenceRun | InferenceRunInput) -> SubmissionInput:
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
        track=run.track,
        mode=run.mode,
    )


def _track_run_checked(data: InferenceRunInput, problems: Problems) -> InferenceRunInput:
    """A run on a track beside QA: its track's prompt, format and modality. Extraction runs
    ask a vision model for the table in its region (the region given: one table an item);
    transformation runs send the table in a QA text format; NL-to-SQL runs the question and
    the schema. Zero-shot, on one split's items of every source."""
    try:
        info = track(data.track)
    except KeyError:
        problems.add(f"There is no track {data.track!r}", field="track")
        return data
    values = dict(data.__dict__, data_scope="", prompt_style="zero_shot")
    if info.vision:
        values.update(modality=Modality.VISION, table_format=TableFormat.IMAGE)
        if data.mode not in ("", "region"):
            problems.add(
                f"An endpoint run on the {info.name} track asks for the one table in a region: "
                "choose the region mode (whole-page systems submit a file)",
                field="mode",
            )
        values["mode"] = "region"
    else:
        values.update(modality=Modality.TEXT, mode="")
        if info.run_formats == ("schema",):
            values["table_format"] = TableFormat.OTHER
        elif not problems.on("table_format") and data.table_format not in info.run_formats:
            problems.add(
                f"A {info.name} run sends the table as one of {', '.join(info.run_formats)}",
                field="table_format",
            )
    if not problems.on("split") and data.split not in TRACK_SPLITS:
        problems.add(f"A {info.name} run is on the test, validation or train split", field="split")
    return InferenceRunInput(**values)


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


def _served_model(
    *, user: Any, endpoint: Endpoint | None, base_url: str, sealed_key: str, data: Any
) -> ServedModelCheck | None:
    """What the endpoint's model list says of the run's model (``data``: an InferenceRunInput
    or an InferenceRun); None when only the worker can ask (a registered endpoint whose key
    is set there, not here, or not valid here). ApplicationError when it does not serve the
    model, or answers with anything but a model list."""
    try:
        target = chat_target(
            user=user,
            endpoint=endpoint,
            base_url=base_url,
            sealed_key=sealed_key,
            model=data.model_name,
            temperature=data.temperature,
            max_tokens=data.max_tokens,
        )
    except ApplicationError:
        if endpoint is None:
            raise
        # A registered endpoint's key is read where the run executes, which says so then.
        return None
    return served_model_check(target)


def check_room_for_answers(max_tokens: int, served: ServedModelCheck | None) -> None:
    """Refuse max tokens that fill the model's whole context: every question would fail."""
    context = served.context_length if served else None
    if context is not None and max_tokens >= context:
        raise ApplicationError(
            f"Max tokens ({max_tokens:,}) leave no room for a prompt in the model's context "
            f"of {context:,} tokens (as the endpoint reports it); ask for fewer",
            field="max_tokens",
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
    STARTING_INFERENCE.check(user)
    problems = problems or Problems()
    with problems.check():
        _check_active_runs_left(user)
    with problems.check():
        # The run ends as a submission: refused now rather than after all its requests.
        check_stored_submissions_left(user)
    if not problems.on("split") and selectors.includes_test_questions(data.split):
        with problems.check():
            account_check_test_split_access(user=user)
    qa = data.track == QA_TRACK
    if not qa:
        data = _track_run_checked(data, problems)
    data, endpoint = _validate(user=user, data=data, problems=problems)
    check_metadata_problems(submission_input(data), problems)
    scope_known = not (problems.on("split") or problems.on("data_scope") or problems.on("track"))
    if qa:
        questions = selectors.benchmark_questions(split=data.split, data_scope=data.data_scope)
        total = questions.count() if scope_known else 0
        if scope_known and not total:
            problems.add(
                f"There are no verified questions on {DataScope(data.data_scope).label.lower()} "
                f"in {_split_words(data.split)} to run on",
                field="split",
            )
    else:
        total = run_items(data).count() if scope_known else 0
        if scope_known and not total:
            problems.add(
                f"The {track(data.track).name} track has no items in the {data.split} split to "
                "run on",
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
    # Last, one request to the endpoint: it serves the model, with room for the answers.
    served = None
    if not any(problems.on(f) for f in ("endpoint", "base_url", "api_key", "model_name")):
        with problems.check():
            served = _served_model(
                user=user,
                endpoint=endpoint,
                base_url=data.base_url,
                sealed_key=api_key_seal(data.api_key) if data.api_key else "",
                data=data,
            )
        if not problems.on("max_tokens"):
            with problems.check():
                check_room_for_answers(data.max_tokens, served)
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
        "track": data.track,
        "mode": data.mode,
        **({} if qa else {"prompt_version": TRACK_PROMPT_VERSION}),
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
        )
        if qa
        else track_prompt_fingerprint(
            track_slug=data.track, table_format=data.table_format, system_role=data.system_role
        ),
        "platform_commit": platform_commit(),
        "max_attempts": settings.INFERENCE_MAX_ATTEMPTS,
        "request_timeout_seconds": settings.INFERENCE_REQUEST_TIMEOUT,
        # From the endpoint's model list (None: it does not say, or only the worker can
        # ask); the worker reads it again before its first question.
        "context_length": served.context_length if served else None,
        # Prompts over it are not answered: scored as empty answers, and counted.
        "over_context": "scored as unanswered",
    }
    with transaction.atomic():
        counted = selectors.includes_test_questions(data.split)
        if counted:
            take_test_split_slot(user)
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
            enqueue_run(run.pk)
    return run


@transaction.atomic
def inference_run_cancel(*, user: Any, run_id: int) -> InferenceRun:
    """Stop a run. A queued one (or one whose worker is gone) stops at once; a running one
    stops within a second, keeping the answers already saved, so it can be resumed."""
    run = InferenceRun.objects.select_for_update().get(pk=run_id)
    MANAGING_RUN.check(user, run)
    now = timezone.now()
    worker_gone = run.is_silent(settings.INFERENCE_STALE_AFTER_SECONDS, now=now)
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
    MANAGING_RUN.check(user, run)
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
    # Questions that failed, that the endpoint refused, or that were over the model's
    # context, are sent again (the endpoint may have been fixed, or serve a longer context
    # now); a continuation or an automatic resume after a lost worker does not resend them
    # (they have had their tries).
    InferenceResponse.objects.filter(
        run=run,
        status__in=[ResponseStatus.FAILED, ResponseStatus.REJECTED, ResponseStatus.TOO_LONG],
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
        enqueue_run(run.pk)
    run.refresh_from_db()
    return run
