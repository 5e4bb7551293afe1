"""Writes for submissions: creating and checking them, managing them, the regression, the
paper's rows. Scoring is in ``scoring``, re-scoring after the dataset changed in
``rescoring``."""

from __future__ import annotations

import gzip
import hashlib
import json
import uuid
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import IO, Any

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import ContentFile, File
from django.db import transaction
from django.db.models import Avg, Count
from django.utils import timezone

from accounts.services import account_check_test_split_access, lock_user
from dataset.models import Split
from hctqa.core.hidden_text import hidden_problem
from hctqa.core.predictions import PredictionsError, PredictionsFile, read_predictions
from hctqa.core.reported import ReportedResult
from hctqa.core.scoring import EXCLUDED_PREFIXES, is_excluded
from hctqa.core.stats import regress_on_table_properties
from hctqa.core.tracks.shared import read_submission
from hctqa.core.wording import counted
from leaderboard import selectors
from leaderboard.jobs import enqueue_scoring
from leaderboard.models import (
    ACTIVE_RUN_STATUSES,
    BOARD_SOURCES,
    DEFAULT_RULES,
    QA_TRACK,
    DailyLimitEntry,
    DataScope,
    EvalSplit,
    InferenceRun,
    Kind,
    Modality,
    PropertyRegression,
    QuestionResult,
    Score,
    Status,
    Submission,
    TableFormat,
    Visibility,
    Weights,
)
from leaderboard.permissions import MANAGING_SUBMISSION, SUBMITTING
from plumbing.errors import ApplicationError, Problems
from tracks import selectors as track_selectors
from tracks.registry import TrackInfo, track
from tracks.services.scoring import check_covers_items, check_matches_items

# The splits a track beside QA is scored on: one at a time (its board ranks the test split).
TRACK_SPLITS = (EvalSplit.TEST, EvalSplit.VALIDATION, EvalSplit.TRAIN)


@dataclass(frozen=True)
class SubmissionInput:
    model_name: str
    weights: str
    modality: str
    table_format: str
    split: str
    data_scope: str
    organisation: str = ""
    parameters_billions: Decimal | None = None
    prompt_style: str = "zero_shot"
    paper_url: str = ""
    code_url: str = ""
    description: str = ""
    visibility: str = Visibility.PUBLIC
    # The task (tracks.registry): QA, or a track beside it with its mode (extraction).
    track: str = QA_TRACK
    mode: str = ""


# Changes to the ranked submissions can come in floods (a visibility toggled in a loop, with
# no rate limit on the page): one regression waiting in the queue answers all of them, since
# the task clears this mark before it reads. A worker that died with it set frees it by then.
REGRESSION_PENDING_KEY = "leaderboard:regression-pending"
REGRESSION_PENDING_SECONDS = 600


def enqueue_regression() -> None:
    transaction.on_commit(_queue_regression_once)


def _queue_regression_once() -> None:
    from leaderboard.tasks import refresh_property_regression

    if not cache.add(REGRESSION_PENDING_KEY, True, timeout=REGRESSION_PENDING_SECONDS):
        return  # one is waiting; it has not read yet, so it will see this change too
    try:
        refresh_property_regression.delay()
    except Exception:
        cache.delete(REGRESSION_PENDING_KEY)
        raise


# The code of a problem with the uploaded file itself (not with how it fits the form's
# choices): such a file is not kept for the next try.
BROKEN_FILE = "file"


def _check_size(upload: File) -> None:
    limit = settings.SUBMISSION_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        raise ApplicationError(
            f"The file is {upload.size / 1024 / 1024:.1f} MB, over the "
            f"{limit / 1024 / 1024:.1f} MB limit",
            field="predictions",
            code=BROKEN_FILE,
        )


def _read(source: bytes | IO[bytes], *, max_answer_chars: int | None) -> PredictionsFile:
    """The predictions, read as a stream in bounded memory; unknown ids are refused."""
    if not isinstance(source, bytes):
        source.seek(0)
    try:
        return read_predictions(
            source,
            max_bytes=settings.SUBMISSION_MAX_BYTES,
            max_answer_chars=max_answer_chars,
            known_ids=selectors.known_question_ids(),
        )
    except PredictionsError as exc:
        # Several problems are listed one by one; a single one is the message itself.
        details = exc.problems if len(exc.problems) > 1 else None
        raise ApplicationError(
            str(exc), field="predictions", details=details, code=BROKEN_FILE
        ) from None


def _split_phrase(split: str, data_scope: str) -> str:
    tables = DataScope(data_scope).label.lower() if data_scope in DataScope.values else "tables"
    if split == EvalSplit.ALL:
        return f"the verified questions on {tables}"
    return f"the verified questions of the {split} split on {tables}"


def check_matches_split(
    answers: Collection[str],
    *,
    split: str,
    data_scope: str,
    gold_ids: Collection[str] | None = None,
) -> None:
    """Refuse a file that answers none of the questions it would be scored on (``gold_ids``,
    read from the database when not given), saying where its ids are instead (a test-split
    file uploaded as validation, say)."""
    if gold_ids is None:
        ids = selectors.benchmark_questions(split=split, data_scope=data_scope).values_list(
            "id", flat=True
        )
        matches = any(qid in answers for qid in ids.iterator(chunk_size=5000))
    else:
        matches = any(qid in gold_ids for qid in answers)
    if not answers or matches:
        return
    places = selectors.question_places(question_ids=answers)
    described = []
    for (where, scope, verified), n in sorted(places.items(), key=lambda kv: -kv[1]):
        kind = "" if verified else "unverified "
        described.append(f"{n:,} in the {where} split ({kind}{scope or 'other'} tables)")
    where = f"for {_split_phrase(split, data_scope)}; its ids are {', '.join(described)}"
    if len(answers) == 1:
        message = f"The one prediction is not {where}"
    else:
        message = f"None of the {counted(len(answers), 'prediction')} is {where}"
    raise PredictionsError(f"{message}. Choose the split and tables the file answers.")


# How many missing question ids a refusal names.
MISSING_EXAMPLES = 5


def check_answers_every_test_question(
    answers: Collection[str], test_ids: Collection[str], *, stored: bool = False
) -> None:
    """Refuse a file scored against test gold answers (``test_ids``: the test-split questions
    it would be scored on) that leaves any of them unanswered. Scored as empty answers, the
    missing ones would let a file of a few guesses learn their scores (one right answer in
    858 gives recall 1/858). ``stored``: a file uploaded earlier, scored again after the test
    questions changed."""
    missing = sorted(q for q in test_ids if q not in answers)
    if not missing:
        return
    total = len(test_ids)
    examples = ", ".join(missing[:MISSING_EXAMPLES]) + (", …" if len(missing) > 5 else "")
    if stored:
        raise PredictionsError(
            f"The test-split questions changed since this file was uploaded, and it does not "
            f"answer {len(missing):,} of the {counted(total, 'question')} it is now scored on "
            f"(e.g. {examples}). "
            "A submission scored against test gold answers must answer every one: submit "
            "answers to the current test split."
        )
    raise PredictionsError(
        f"The file does not answer {len(missing):,} of the "
        f"{counted(total, 'test-split question')} it would be scored on (e.g. {examples}). "
        "A submission scored against test gold answers must answer every one of them (JSON "
        "null for no answer); missing answers are not scored as empty."
    )


def check_most_test_answers_count(
    answers: Mapping[str, str | None],
    test_ids: Collection[str],
    modality: str,
    *,
    stored: bool = False,
) -> None:
    """Refuse a text file scored against test gold answers (``test_ids``) whose answers to
    them the 2025-10 rules mostly leave out of the averages: the few left would be figures
    on a guess or two (991 "No answer" lines and one guess scored that guess alone). Vision
    answers have the 2025-05 rules only, which leave nothing out. ``stored``: a file
    uploaded earlier, scored again."""
    if modality == Modality.VISION or not test_ids:
        return
    left_out = sum(1 for q in test_ids if is_excluded(answers.get(q), rules="2025-10"))
    total = len(test_ids)
    allowed = total // 2
    if left_out <= allowed:
        return
    prefixes = " or ".join(f'"{p}"' for p in EXCLUDED_PREFIXES)
    when = " (uploaded before this rule, or before the test split changed)" if stored else ""
    raise PredictionsError(
        f"The file{when} leaves {left_out:,} of its {total:,} test-split answers out of the "
        f"2025-10 rules' averages (JSON null, or an answer starting with {prefixes}). A "
        f"submission scored against test gold answers may leave out at most half "
        f"({allowed:,}): figures on the few answers left would give away whether single "
        "guesses match the hidden gold. Give the model's real answers to the questions."
    )


def _check_fits(read: PredictionsFile, *, split: str, data_scope: str, modality: str) -> None:
    """The file answers questions of the chosen split and tables, and every test question
    it would be scored on, mostly with answers the rules count."""
    try:
        check_matches_split(read.answers, split=split, data_scope=data_scope)
        if selectors.includes_test_questions(split):
            test_ids = selectors.test_questions_scored(split=split, data_scope=data_scope)
            check_answers_every_test_question(read.answers, test_ids)
            check_most_test_answers_count(read.answers, test_ids, modality)
    except PredictionsError as exc:
        raise ApplicationError(str(exc), field="predictions") from None


def _validated(
    source: bytes | IO[bytes],
    *,
    split: str,
    data_scope: str,
    modality: str,
    max_answer_chars: int | None,
) -> PredictionsFile:
    read = _read(source, max_answer_chars=max_answer_chars)
    _check_fits(read, split=split, data_scope=data_scope, modality=modality)
    return read


def _check_file(problems: Problems, upload: File | None, data: SubmissionInput) -> None:
    """The file's own problems (size, format, ids, answers), then, if the split and data
    scope (a track's mode) are readable, whether it fits them: all into ``problems``."""
    if problems.on("predictions"):
        return
    if upload is None:
        problems.add("Choose the predictions file", field="predictions")
        return
    with problems.check():
        _check_size(upload)
        if data.track != QA_TRACK:
            if not problems.on("track"):
                fits = not any(problems.on(f) for f in ("split", "mode"))
                _check_track_file(upload, data, fits=fits)
            return
        read = _read(upload, max_answer_chars=settings.SUBMISSION_MAX_ANSWER_CHARS)
        if not (problems.on("split") or problems.on("data_scope")):
            _check_fits(read, split=data.split, data_scope=data.data_scope, modality=data.modality)


def _read_track_file(source: bytes | IO[bytes], info: TrackInfo) -> dict[str, Any]:
    """A track's submission file, read as a stream in bounded memory (unknown ids refused)."""
    if not isinstance(source, bytes):
        source.seek(0)
    try:
        return read_submission(
            source,
            track=info.slug,  # type: ignore[arg-type]
            known_ids=track_selectors.item_ids(track=info.slug),
            max_bytes=settings.TRACK_SUBMISSION_MAX_BYTES,
        )
    except PredictionsError as exc:
        details = exc.problems if len(exc.problems) > 1 else None
        raise ApplicationError(
            str(exc), field="predictions", details=details, code=BROKEN_FILE
        ) from None


def check_fits_track(predictions: Mapping[str, Any], data: SubmissionInput) -> None:
    """The file predicts items of the chosen split (and mode), and, scored against hidden
    gold, names every test item and predicts at least half of them."""
    info = track(data.track)
    rows = track_selectors.items_of(track=info.slug, split=data.split, mode=data.mode)
    split_ids = set(rows.values_list("item_id", flat=True))
    hidden = set(rows.filter(split=EvalSplit.TEST).values_list("item_id", flat=True))
    try:
        if not split_ids:
            raise PredictionsError(
                f"The {info.name} track has no items in the {data.split} split to score on"
            )
        check_matches_items(
            predictions, info=info, split=data.split, mode=data.mode, item_ids=split_ids
        )
        check_covers_items(predictions, hidden)
    except PredictionsError as exc:
        raise ApplicationError(str(exc), field="predictions") from None


def _check_track_file(source: File | bytes, data: SubmissionInput, *, fits: bool) -> None:
    predictions = _read_track_file(source, track(data.track))
    if fits:
        check_fits_track(predictions, data)


# The parameter count is stored to the hundredth of a billion (DecimalField, 2 places).
PARAMETERS_STEP = Decimal("0.01")


def _more_decimals_than_stored(value: Decimal | int | float) -> bool:
    exact = Decimal(str(value))
    return exact != exact.quantize(PARAMETERS_STEP)


# Names shown to everyone on the board, one line each.
_SHOWN_NAMES = (("model_name", "The model's name"), ("organisation", "The organisation"))


def _check_shown_name(label: str, value: str) -> str | None:
    """What is wrong with a name the board shows, if anything. Control and format characters
    (zero-width spaces and joiners, right-to-left overrides, the BOM) are invisible or
    reorder the text around them: a row could look like another or like the paper's."""
    if value != value.strip():
        return f"{label} should not start or end with spaces"
    return hidden_problem(label, value)


def check_metadata_problems(data: SubmissionInput, problems: Problems) -> None:
    """The model's metadata, each problem into ``problems``; fields that already have one
    (a form could not read them) are not checked again."""
    for name, label in _SHOWN_NAMES:
        if not problems.on(name) and (wrong := _check_shown_name(label, getattr(data, name))):
            problems.add(wrong, field=name)
    unread = {
        f for f in ("parameters_billions", "weights", "modality", "table_format") if problems.on(f)
    }
    parameters = data.parameters_billions
    if "parameters_billions" not in unread:
        if parameters is not None and not (0 < parameters < 1_000_000):
            problems.add(
                "The parameter count is in billions, more than 0 (blank when unknown)",
                field="parameters_billions",
            )
        elif parameters is not None and _more_decimals_than_stored(parameters):
            # Stored to the hundredth: 0.001 would be kept as 0, which no row may have.
            problems.add(
                "The parameter count is in billions with at most two decimals, at least 0.01 "
                "(e.g. 0.5 for 500 million)",
                field="parameters_billions",
            )
        elif (
            data.weights == Weights.OPEN
            and parameters is None
            and "weights" not in unread
            and data.track == QA_TRACK
        ):
            problems.add(
                "Give the parameter count of an open-weights model (leave it blank only for "
                "closed weights)",
                field="parameters_billions",
            )
    if {"modality", "table_format"} & unread or data.track != QA_TRACK:
        return
    if data.modality == Modality.VISION and data.table_format not in (
        TableFormat.IMAGE,
        TableFormat.OTHER,
    ):
        problems.add(
            "A vision submission reads the table as an image: choose the image format",
            field="table_format",
        )
    if data.modality == Modality.TEXT and data.table_format == TableFormat.IMAGE:
        problems.add("A text submission cannot read the table as an image", field="table_format")


def _check_track(data: SubmissionInput, problems: Problems) -> None:
    """The track, its mode and split: a track beside QA is scored on one split's items of
    every source (no data scope), of one mode where it has modes."""
    if problems.on("track"):
        return
    try:
        info = track(data.track)
    except KeyError:
        problems.add(f"There is no track {data.track!r}", field="track")
        return
    if info.is_qa:
        if data.mode:
            problems.add("QA submissions have no mode", field="mode")
        return
    if data.data_scope:
        problems.add(
            f"A {info.name} submission is scored on the track's items of every source: give "
            "no data scope",
            field="data_scope",
        )
    modes = [m for m, _ in info.modes]
    if not problems.on("mode") and (data.mode not in modes if modes else data.mode):
        problems.add(
            f"The {info.name} track's modes are {', '.join(modes)}"
            if modes
            else f"The {info.name} track has no modes",
            field="mode",
        )
    if not problems.on("split") and data.split not in TRACK_SPLITS:
        problems.add(
            f"A {info.name} submission is for the test, validation or train split",
            field="split",
        )


def check_metadata(data: SubmissionInput) -> None:
    """Raise every problem with the track, its mode and split, and the model's metadata at
    once."""
    problems = Problems()
    _check_track(data, problems)
    check_metadata_problems(data, problems)
    problems.raise_if_any()


def _check_test_split_slot_left(user: Any) -> None:
    """Refuse when today's test-split submissions are used up."""
    limit = settings.SUBMISSION_DAILY_TEST_LIMIT
    if selectors.test_split_submissions_today(user=user) >= limit:
        raise ApplicationError(
            f"You have made your {counted(limit, 'test-split submission')} for today (failed and "
            "deleted ones count); the limit resets at 00:00 UTC",
            field="split",
        )


def take_test_split_slot(user: Any) -> None:
    """Count one test-split submission against today's limit, or refuse."""
    lock_user(user)
    _check_test_split_slot_left(user)


def check_stored_submissions_left(user: Any, *, besides_run: int | None = None) -> None:
    """Refuse another submission when the user keeps SUBMISSION_MAX_STORED already: each
    keeps its predictions file on disk. Runs queued or running count as the submissions
    they will end as, so starting runs cannot go past the limit."""
    limit = settings.SUBMISSION_MAX_STORED
    if not limit or user.has_perm("leaderboard.change_submission"):
        return
    stored = Submission.objects.filter(owner=user, kind=Kind.SUBMISSION).count()
    coming = (
        InferenceRun.objects.filter(
            created_by=user, status__in=ACTIVE_RUN_STATUSES, submission__isnull=True
        )
        .exclude(pk=besides_run)
        .count()
    )
    if stored + coming >= limit:
        raise ApplicationError(
            f"You keep {counted(limit, 'submission')}, the most one person may; delete ones "
            "you no longer need (My submissions) to make room"
        )


def submission_create(
    *,
    owner: Any,
    data: SubmissionInput,
    predictions: File | None,
    problems: Problems | None = None,
    daily_limit: bool = True,
) -> Submission:
    """Check everything in one pass (test-split access and today's limit, the metadata, the
    file's own problems and whether it fits the split), then store the upload and queue
    scoring. Every problem is raised at once (``ApplicationError.problems``; a broken file's
    have the code ``BROKEN_FILE``), and nothing is stored when there is any.

    ``problems``: what the caller found wrong reading the request (a form's field errors);
    the fields they name are not checked again. The file is read before the transaction
    opens: the limit's lock (a write lock on SQLite) is held only to store.
    ``daily_limit=False``: not counted against today's test-split limit (the demo loader's
    rows, which the platform makes, not the researcher).
    """
    SUBMITTING.check(owner)
    problems = problems or Problems()
    on_test = not problems.on("split") and selectors.includes_test_questions(data.split)
    if on_test:
        with problems.check():
            account_check_test_split_access(user=owner)
    counted = on_test and daily_limit
    if counted and not problems.on("split"):
        with problems.check():
            _check_test_split_slot_left(owner)
    with problems.check():
        check_stored_submissions_left(owner)
    _check_track(data, problems)
    check_metadata_problems(data, problems)
    _check_file(problems, predictions, data)
    problems.raise_if_any()
    assert predictions is not None  # a missing file is a problem above
    with transaction.atomic():
        if counted:
            take_test_split_slot(owner)
        else:
            lock_user(owner)
        check_stored_submissions_left(owner)
        submission = _store(owner=owner, data=data, content=predictions)
        if counted:
            DailyLimitEntry.objects.create(user=owner, submission=submission)
    return submission


def predictions_file(predictions: Mapping[str, Any], *, qa: bool) -> bytes:
    """Predictions made on the platform as a gzipped predictions file, in the upload's own
    format (QA: question_id and response; a track: id and prediction)."""
    # ASCII with escapes: a reply may hold a lone surrogate, which UTF-8 cannot carry but a
    # JSON escape can (the reader then sees the same string the endpoint sent).
    lines = "\n".join(
        json.dumps(
            {"question_id": key, "response": value} if qa else {"id": key, "prediction": value}
        )
        for key, value in sorted(predictions.items())
    )
    return gzip.compress(lines.encode("utf-8"), mtime=0)


@transaction.atomic
def submission_create_from_predictions(
    *,
    owner: Any,
    data: SubmissionInput,
    predictions: dict[str, str],
    limit_entry: DailyLimitEntry | None = None,
    too_long_prompts: int = 0,
) -> Submission:
    """Store answers produced on the platform (by an inference run) as a submission and queue
    its scoring. They are kept as a predictions file like an upload, so the submission can
    be scored again. ``limit_entry``: the run already took today's test-split slot when it
    was started; without one, a test-split submission takes a slot now.
    ``too_long_prompts``: how many of the answers are empty because the prompt was over the
    model's context length (shown with the submission and its board row)."""
    SUBMITTING.check(owner)
    check_metadata(data)
    qa = data.track == QA_TRACK
    raw = predictions_file(predictions, qa=qa)
    if qa:
        # The run's own answers: bounded by its max_tokens, not by the upload limit.
        _validated(
            raw,
            split=data.split,
            data_scope=data.data_scope,
            modality=data.modality,
            max_answer_chars=None,
        )
    else:
        _check_track_file(raw, data, fits=True)
    counted = limit_entry is None and selectors.includes_test_questions(data.split)
    if counted:
        account_check_test_split_access(user=owner)
        take_test_split_slot(owner)
    submission = _store(
        owner=owner, data=data, content=ContentFile(raw), too_long_prompts=too_long_prompts
    )
    if counted:
        DailyLimitEntry.objects.create(user=owner, submission=submission)
    elif limit_entry is not None:
        DailyLimitEntry.objects.filter(pk=limit_entry.pk).update(submission=submission)
    return submission


def _store(
    *,
    owner: Any,
    data: SubmissionInput,
    content: File,
    too_long_prompts: int = 0,
    kind: str = Kind.SUBMISSION,
) -> Submission:
    """Save the checked predictions file and the submission, and queue its scoring. The file
    is hashed and copied a chunk at a time."""
    digest = hashlib.sha256()
    content.seek(0)
    for chunk in content.chunks():
        digest.update(chunk)
    content.seek(0)
    gzipped = content.read(2) == b"\x1f\x8b"
    content.seek(0)
    submission = Submission(
        kind=kind,
        owner=owner,
        **asdict(data),
        status=Status.QUEUED,
        queued_at=timezone.now(),
        predictions_sha256=digest.hexdigest(),
        too_long_prompts=too_long_prompts,
    )
    suffix = ".gz" if gzipped else ""
    submission.predictions.save(f"{uuid.uuid4().hex}.jsonl{suffix}", content, save=False)
    submission.save()
    enqueue_scoring(submission.pk)
    return submission


def baseline_create(*, data: SubmissionInput, predictions: Mapping[str, Any]) -> Submission:
    """Store the platform's own system's predictions as a baseline row of a track's board
    (no owner, no daily limit), queued for scoring."""
    check_metadata(data)
    content = ContentFile(predictions_file(predictions, qa=False))
    return _store(owner=None, data=data, content=content, kind=Kind.BASELINE)


@transaction.atomic
def submission_rescore(*, submission: Submission, user: Any) -> Submission:
    """Score again from the stored upload (after gold answers changed, say)."""
    MANAGING_SUBMISSION.check(user, submission)
    # Read the state under a lock: the object in hand may be stale, and two clicks race.
    current = Submission.objects.select_for_update().get(pk=submission.pk)
    if current.status in (Status.QUEUED, Status.SCORING):
        raise ApplicationError("This submission is already waiting to be scored")
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.QUEUED,
        progress=0,
        error="",
        attempts=0,
        queued_at=timezone.now(),
        started_at=None,
    )
    enqueue_scoring(submission.pk)
    submission.refresh_from_db()
    return submission


@transaction.atomic
def submission_delete(*, submission: Submission, user: Any) -> None:
    MANAGING_SUBMISSION.check(user, submission)
    was_scored = submission.status == Status.SCORED
    stored = submission.predictions
    submission.delete()
    if stored:
        transaction.on_commit(lambda: stored.storage.delete(stored.name))
    if was_scored:
        enqueue_regression()


@transaction.atomic
def submission_visibility_set(*, submission: Submission, user: Any, visibility: str) -> None:
    MANAGING_SUBMISSION.check(user, submission)
    if visibility not in Visibility.values:
        raise ApplicationError(f"Visibility should be public or private, not {visibility!r}")
    Submission.objects.filter(pk=submission.pk).update(
        visibility=visibility, updated_at=timezone.now()
    )
    if submission.status == Status.SCORED:
        enqueue_regression()


# --- The regression ------------------------------------------------------------------------


@transaction.atomic
def property_regression_refresh() -> PropertyRegression | None:
    """Regress mean recall per real table outside the test split (over the submissions
    ranked on the public boards) on the table properties, and keep the result. The
    per-question recall is the 2025-05 rules' (the paper's Table 4 came from those), the same
    for text and vision. With too few data, the previous result is removed."""
    cache.delete(REGRESSION_PENDING_KEY)  # changes from now on queue another one
    candidates = selectors.comparable_submissions().filter(data_scope=DataScope.REAL)
    admitted, left_out = selectors.regression_rows(candidates)
    # Test-split tables are left out: coefficients are linear in the per-table means, so a
    # regression on them would be one more set of figures on hidden answers, and the public
    # may refresh it one submission at a time (hctqa.core.disclosure).
    per_table = (
        QuestionResult.objects.filter(submission__in=admitted, question__in_gold_pool=False)
        .exclude(question__table__split=Split.TEST)
        .values("question__table_id", "question__table__table_properties")
        .annotate(mean=Avg("recall"), n=Count("pk"))
    )
    outcome: dict[str, float] = {}
    properties: dict[str, dict[str, Any]] = {}
    for row in per_table:
        table_id = row["question__table_id"]
        outcome[table_id] = row["mean"]
        properties[table_id] = row["question__table__table_properties"] or {}
    PropertyRegression.objects.all().delete()
    try:
        result = regress_on_table_properties(outcome, properties)
    except ValueError:
        return None
    return PropertyRegression.objects.create(
        computed_at=timezone.now(),
        submissions=len(admitted),
        tables=result.n,
        r_squared=result.r_squared,
        intercept=result.intercept,
        coefficients=[asdict(c) for c in result.coefficients],
        dropped=list(result.dropped),
        left_out=left_out,
    )


# --- Reported results ----------------------------------------------------------------------


@dataclass(frozen=True)
class ReportedImportSummary:
    created: int
    updated: int
    unchanged: int = 0


_REPORTED_SCORE_FIELDS = ("precision", "recall", "cc", "by_source") + tuple(
    f"recall_{s}" for s in BOARD_SOURCES
)


@transaction.atomic
def reported_results_import(*, results: list[ReportedResult]) -> ReportedImportSummary:
    """Create or update the paper's rows, keyed by model, modality and data scope. Their
    figures are the 2025-05 rules' (the paper's Table 1 came from them): a 2025-05 score
    only."""
    created = updated = unchanged = 0
    for r in results:
        values: dict[str, Any] = {
            "organisation": r.provider,
            "parameters_billions": None
            if r.parameters_billions is None
            else Decimal(str(r.parameters_billions)),
            "weights": r.weights,
            "table_format": TableFormat.IMAGE
            if r.modality == Modality.VISION
            else TableFormat.PAPER,
            "split": EvalSplit.ALL,
            "status": Status.SCORED,
            "progress": 100,
            "description": "Reported in the HCT-QA paper (Table 1), under the 2025-05 rules.",
        }
        figures: dict[str, Any] = {
            "precision": r.precision,
            "recall": r.recall,
            "cc": r.cc,
            "by_source": r.by_source,
            **{f"recall_{s}": (r.by_source.get(s) or {}).get("recall") for s in BOARD_SOURCES},
        }
        key = {
            "kind": Kind.REPORTED,
            "model_name": r.model_name,
            "modality": r.modality,
            "data_scope": r.data_scope,
        }
        current = Submission.objects.filter(**key).first()
        score = (
            Score.objects.filter(submission=current, rules=DEFAULT_RULES).first()
            if current
            else None
        )
        if (
            current is not None
            and score is not None
            and all(getattr(current, k) == v for k, v in values.items())
            and all(getattr(score, k) == v for k, v in figures.items())
        ):
            unchanged += 1  # importing the same file again writes nothing, and says so
            continue
        submission, made = Submission.objects.update_or_create(**key, defaults=values)
        Score.objects.update_or_create(submission=submission, rules=DEFAULT_RULES, defaults=figures)
        created += made
        updated += not made
    return ReportedImportSummary(created=created, updated=updated, unchanged=unchanged)
