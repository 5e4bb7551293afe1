"""Writes for submissions: creating, scoring, the sweeper, the regression, the paper's rows."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import threading
import uuid
from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import IO, Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile, File
from django.core.files.uploadedfile import UploadedFile
from django.db import DatabaseError, connection, transaction
from django.db.models import Avg, Case, Count, F, PositiveSmallIntegerField, Q, When
from django.utils import timezone

from annotation.models import Question, QuestionOrigin
from hctqa.accounts.services import account_check_test_split_access
from hctqa.core import taxonomy
from hctqa.core.predictions import PredictionsError, PredictionsFile, read_predictions
from hctqa.core.reported import ReportedResult
from hctqa.core.scoring import Evaluation, evaluate
from hctqa.core.stats import group_means, regress_on_table_properties
from hctqa.errors import ApplicationError
from leaderboard import selectors
from leaderboard.models import (
    BOARD_SOURCES,
    DailyLimitEntry,
    DataScope,
    EvalSplit,
    Kind,
    Modality,
    PropertyRegression,
    QuestionResult,
    Status,
    Submission,
    TableFormat,
    Visibility,
    Weights,
)
from releases.models import Release
from releases.selectors import release_for_question_set

logger = logging.getLogger(__name__)

# Breakdown groups smaller than this are not shown for submissions that include test
# questions: a group of one question would give away that question's score.
MIN_GROUP_WITH_TEST_QUESTIONS = 10


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


def _enqueue_scoring(submission_id: int) -> None:
    from leaderboard.tasks import score_submission

    transaction.on_commit(lambda: score_submission.delay(submission_id))


def _enqueue_regression() -> None:
    from leaderboard.tasks import refresh_property_regression

    transaction.on_commit(refresh_property_regression.delay)


def _check_size(upload: UploadedFile) -> None:
    limit = settings.SUBMISSION_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        raise ApplicationError(
            f"the file is {upload.size / 1024 / 1024:.1f} MB, over the "
            f"{limit / 1024 / 1024:.1f} MB limit",
            field="predictions",
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
        raise ApplicationError(str(exc), field="predictions", details=details) from None


def _split_phrase(split: str, data_scope: str) -> str:
    scope = "synthetic" if data_scope == DataScope.SYNTHETIC else "real"
    if split == EvalSplit.ALL:
        return f"the verified questions on {scope} tables"
    return f"the verified questions of the {split} split on {scope} tables"


def check_matches_split(answers: Collection[str], *, split: str, data_scope: str) -> None:
    """Refuse a file that answers none of the questions it would be scored on, saying where
    its ids are instead (a test-split file uploaded as validation, say)."""
    gold_ids = selectors.benchmark_questions(split=split, data_scope=data_scope).values_list(
        "id", flat=True
    )
    if not answers or any(qid in answers for qid in gold_ids.iterator(chunk_size=5000)):
        return
    places = selectors.question_places(question_ids=answers)
    described = []
    for (where, scope, verified), n in sorted(places.items(), key=lambda kv: -kv[1]):
        kind = "" if verified else "unverified "
        described.append(f"{n:,} in the {where} split ({kind}{scope} tables)")
    raise PredictionsError(
        f"none of the {len(answers):,} predictions is for {_split_phrase(split, data_scope)}; "
        f"its ids are {', '.join(described)}. Choose the split and tables the file answers."
    )


def _validated(
    source: bytes | IO[bytes], *, split: str, data_scope: str, max_answer_chars: int | None
) -> PredictionsFile:
    read = _read(source, max_answer_chars=max_answer_chars)
    try:
        check_matches_split(read.answers, split=split, data_scope=data_scope)
    except PredictionsError as exc:
        raise ApplicationError(str(exc), field="predictions") from None
    return read


def _check_metadata(data: SubmissionInput) -> None:
    if data.parameters_billions is not None and not (0 < data.parameters_billions < 1_000_000):
        raise ApplicationError(
            "the parameter count is in billions, more than 0 (blank when unknown)",
            field="parameters_billions",
        )
    if data.weights == Weights.OPEN and data.parameters_billions is None:
        raise ApplicationError(
            "give the parameter count of an open-weights model", field="parameters_billions"
        )
    if data.modality == Modality.VISION and data.table_format not in (
        TableFormat.IMAGE,
        TableFormat.OTHER,
    ):
        raise ApplicationError(
            "a vision submission reads the table as an image: choose the image format",
            field="table_format",
        )
    if data.modality == Modality.TEXT and data.table_format == TableFormat.IMAGE:
        raise ApplicationError(
            "a text submission cannot read the table as an image", field="table_format"
        )


def _start_of_utc_day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _take_test_split_slot(user: Any) -> None:
    """Count one test-split submission against today's limit, or refuse.

    The user's row is locked for the rest of the transaction, so two uploads by one user
    count one after the other (on SQLite the IMMEDIATE transaction serializes them anyway).
    """
    User = get_user_model()
    User.objects.select_for_update().filter(pk=user.pk).first()
    limit = settings.SUBMISSION_DAILY_TEST_LIMIT
    used = DailyLimitEntry.objects.filter(
        user=user, created_at__gte=_start_of_utc_day(timezone.now())
    ).count()
    if used >= limit:
        raise ApplicationError(
            f"you have made your {limit} test-split submissions for today (failed and deleted "
            "ones count); the limit resets at 00:00 UTC",
            field="split",
        )


def submission_create(
    *, owner: Any, data: SubmissionInput, predictions: UploadedFile
) -> Submission:
    """Check the metadata, the file and today's limit, store the upload and queue scoring.

    Nothing is stored when any check fails. The file is read and parsed before the
    transaction opens: the limit's lock (a write lock on SQLite) is held only to store.
    """
    if not owner.has_perm("leaderboard.add_submission"):
        raise PermissionDenied("only researchers can submit predictions")
    if selectors.includes_test_questions(data.split):
        account_check_test_split_access(user=owner)
    _check_metadata(data)
    _check_size(predictions)
    _validated(
        predictions,
        split=data.split,
        data_scope=data.data_scope,
        max_answer_chars=settings.SUBMISSION_MAX_ANSWER_CHARS,
    )
    counted = selectors.includes_test_questions(data.split)
    with transaction.atomic():
        if counted:
            _take_test_split_slot(owner)
        submission = _store(owner=owner, data=data, content=predictions)
        if counted:
            DailyLimitEntry.objects.create(user=owner, submission=submission)
    return submission


@transaction.atomic
def submission_create_from_predictions(
    *,
    owner: Any,
    data: SubmissionInput,
    predictions: dict[str, str],
    limit_entry: DailyLimitEntry | None = None,
) -> Submission:
    """Store answers produced on the platform (by an inference run) as a submission and queue
    its scoring. They are kept as a predictions file like an upload, so the submission can
    be scored again. ``limit_entry``: the run already took today's test-split slot when it
    was started; without one, a test-split submission takes a slot now."""
    if not owner.has_perm("leaderboard.add_submission"):
        raise PermissionDenied("only researchers can submit predictions")
    _check_metadata(data)
    lines = "\n".join(
        json.dumps({"question_id": qid, "response": answer}, ensure_ascii=False)
        for qid, answer in sorted(predictions.items())
    )
    raw = gzip.compress(lines.encode("utf-8"), mtime=0)
    # The run's own answers: bounded by its max_tokens, not by the upload limit.
    _validated(raw, split=data.split, data_scope=data.data_scope, max_answer_chars=None)
    counted = limit_entry is None and selectors.includes_test_questions(data.split)
    if counted:
        account_check_test_split_access(user=owner)
        _take_test_split_slot(owner)
    submission = _store(owner=owner, data=data, content=ContentFile(raw))
    if counted:
        DailyLimitEntry.objects.create(user=owner, submission=submission)
    elif limit_entry is not None:
        DailyLimitEntry.objects.filter(pk=limit_entry.pk).update(submission=submission)
    return submission


def _store(*, owner: Any, data: SubmissionInput, content: File) -> Submission:
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
        kind=Kind.SUBMISSION,
        owner=owner,
        **asdict(data),
        status=Status.QUEUED,
        queued_at=timezone.now(),
        predictions_sha256=digest.hexdigest(),
    )
    suffix = ".gz" if gzipped else ""
    submission.predictions.save(f"{uuid.uuid4().hex}.jsonl{suffix}", content, save=False)
    submission.save()
    _enqueue_scoring(submission.pk)
    return submission


def _require_manager(user: Any, submission: Submission) -> None:
    if not selectors.can_manage(user=user, submission=submission):
        raise PermissionDenied("only the owner of a submission, or an admin, can change it")


@transaction.atomic
def submission_rescore(*, submission: Submission, user: Any) -> Submission:
    """Score again from the stored upload (after gold answers changed, say)."""
    _require_manager(user, submission)
    # Read the state under a lock: the object in hand may be stale, and two clicks race.
    current = Submission.objects.select_for_update().get(pk=submission.pk)
    if current.status in (Status.QUEUED, Status.SCORING):
        raise ApplicationError("this submission is already waiting to be scored")
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.QUEUED,
        progress=0,
        error="",
        attempts=0,
        queued_at=timezone.now(),
        started_at=None,
    )
    _enqueue_scoring(submission.pk)
    submission.refresh_from_db()
    return submission


@transaction.atomic
def submission_delete(*, submission: Submission, user: Any) -> None:
    _require_manager(user, submission)
    was_scored = submission.status == Status.SCORED
    stored = submission.predictions
    submission.delete()
    if stored:
        transaction.on_commit(lambda: stored.storage.delete(stored.name))
    if was_scored:
        _enqueue_regression()


@transaction.atomic
def submission_visibility_set(*, submission: Submission, user: Any, visibility: str) -> None:
    _require_manager(user, submission)
    if visibility not in Visibility.values:
        raise ApplicationError(f"visibility should be public or private, not {visibility!r}")
    Submission.objects.filter(pk=submission.pk).update(visibility=visibility)
    if submission.status == Status.SCORED:
        _enqueue_regression()


@transaction.atomic
def submissions_rescore_for_questions(*, question_ids: list[str]) -> list[int]:
    """Score again every submission whose question set holds one of these questions, after
    they joined or left the gold pool, so no score or breakdown counts a pool question and
    every score covers the same questions. One being scored now is queued again (its result
    would be out of date; the scoring that is under way then drops it)."""
    covering = Q(pk__in=[])
    questions = Question.objects.filter(pk__in=question_ids)
    for scope in DataScope:
        splits = set(
            questions.filter(selectors.scope_filter(scope)).values_list("table__split", flat=True)
        )
        if splits:
            covering |= Q(data_scope=scope, split__in=[*splits, EvalSplit.ALL])
    affected = Submission.objects.filter(
        covering, kind=Kind.SUBMISSION, status__in=[Status.SCORED, Status.SCORING]
    )
    ids = list(affected.values_list("pk", flat=True))
    Submission.objects.filter(pk__in=ids).update(
        status=Status.QUEUED,
        progress=0,
        error="",
        attempts=0,
        queued_at=timezone.now(),
        started_at=None,
    )
    for pk in ids:
        _enqueue_scoring(pk)
    return ids


# --- Scoring -------------------------------------------------------------------------------


def _set_progress(submission_id: int, percent: int) -> None:
    Submission.objects.filter(pk=submission_id, status=Status.SCORING).update(progress=percent)


def _fail(submission_id: int, reason: str, attempt: int | None = None) -> None:
    mine = {} if attempt is None else {"attempts": attempt}
    Submission.objects.filter(pk=submission_id, status=Status.SCORING, **mine).update(
        status=Status.FAILED, error=reason, progress=100
    )


# How often scoring writes its heartbeat; SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS is well above.
HEARTBEAT_EVERY_SECONDS = 5.0


@contextmanager
def _heartbeat(submission_id: int, attempt: int) -> Iterator[None]:
    """Beat from a thread while the block runs, so a long scoring keeps its claim and a dead
    worker's submission is requeued within a minute. The claim wrote the first beat."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(HEARTBEAT_EVERY_SECONDS):
                Submission.objects.filter(
                    pk=submission_id, status=Status.SCORING, attempts=attempt
                ).update(heartbeat_at=timezone.now())
        except DatabaseError:
            logger.warning("scoring heartbeat of submission %s failed", submission_id)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"heartbeat-{submission_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _claim(submission_id: int) -> int | None:
    """Move a queued submission to scoring; the attempt number it gets identifies this run
    (a requeued submission's next run gets another), or None if it was not queued."""
    with transaction.atomic():
        claimed = Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(
            status=Status.SCORING,
            started_at=timezone.now(),
            heartbeat_at=timezone.now(),
            attempts=F("attempts") + 1,
            progress=5,
            error="",
        )
        if not claimed:
            return None
        return Submission.objects.values_list("attempts", flat=True).get(pk=submission_id)


def submission_score(*, submission_id: int) -> str:
    """Score a queued submission. Safe to run twice: only the run that moves it from queued to
    scoring does the work, and only that run (its attempt) may save or fail it. Returns what
    happened, for the task log."""
    attempt = _claim(submission_id)
    if attempt is None:
        return "not queued"
    submission = Submission.objects.get(pk=submission_id)
    try:
        with _heartbeat(submission_id, attempt):
            _score(submission, attempt)
    except PredictionsError as exc:
        _fail(submission_id, str(exc), attempt)
        return "failed: " + str(exc)
    except FileNotFoundError:
        _fail(submission_id, "the predictions file is missing", attempt)
        return "failed: file missing"
    except SoftTimeLimitExceeded:
        limit = settings.SUBMISSION_SCORING_TIME_LIMIT
        _fail(
            submission_id,
            f"scoring took longer than the {limit:,} s limit and was stopped; an admin can "
            "look into the file and re-score it",
            attempt,
        )
        return "failed: time limit"
    except DatabaseError:
        # Transient: put it back in the queue for the task's retry (or the sweeper).
        Submission.objects.filter(pk=submission_id, status=Status.SCORING, attempts=attempt).update(
            status=Status.QUEUED, queued_at=timezone.now()
        )
        raise
    except Exception:
        logger.exception("scoring submission %s failed", submission_id)
        _fail(
            submission_id,
            "scoring failed because of an internal error; an admin can re-score it",
            attempt,
        )
        return "failed: internal error"
    return "scored"


def _score(submission: Submission, attempt: int) -> None:
    submission_id = submission.pk
    if not submission.predictions:
        raise PredictionsError("the predictions file is missing")
    with submission.predictions.open("rb") as handle:
        # Checked when it was uploaded (the answer limit included); read again as a stream.
        # Answers to questions that joined the gold pool since are ignored, not refused.
        read = read_predictions(
            handle,
            max_bytes=settings.SUBMISSION_MAX_BYTES,
            known_ids=selectors.known_question_ids(include_gold_pool=True),
        )
    gold = selectors.gold_answers(split=submission.split, data_scope=submission.data_scope)
    if not gold:
        raise PredictionsError(
            f"there are no {submission.get_data_scope_display().lower()} questions in "
            f"the {submission.get_split_display().lower()} split to score against"
        )
    check_matches_split(read.answers, split=submission.split, data_scope=submission.data_scope)
    _set_progress(submission_id, 30)
    evaluation = evaluate(gold, answers_for_scoring(read.answers), submission.modality)
    _set_progress(submission_id, 60)
    facts = selectors.question_facts(question_ids=list(gold))
    has_test = selectors.includes_test_questions(submission.split)
    min_group = MIN_GROUP_WITH_TEST_QUESTIONS if has_test else 1
    breakdowns = compute_breakdowns(evaluation, facts, min_group=min_group)
    claims = gold_claims_check(read.claimed_gold, gold, test_ids=selectors.test_question_ids())
    release = release_for_question_set(
        split=submission.split, data_scope=submission.data_scope, gold=gold
    )
    _save_scores(
        submission_id, attempt, evaluation, read.answers, breakdowns, claims, release=release
    )


def answers_for_scoring(answers: Mapping[str, str | None]) -> dict[str, str]:
    """The answers as the scorer takes them: a JSON null ("no answer") scores as an empty
    answer under the 2025-05 rules (the 2025-10 rules leave it out of the averages)."""
    return {qid: "" if answer is None else answer for qid, answer in answers.items()}


# How many question ids a gold-claims warning names.
GOLD_CLAIM_EXAMPLES = 5


def gold_claims_check(
    claimed: Mapping[str, str], gold: Mapping[str, str], *, test_ids: Collection[str]
) -> dict[str, Any]:
    """Compare a file's own gold answers (``gt``) with the platform's, on the questions
    scored, spacing aside. Never on a test-split question (``test_ids``): a count of
    mismatches would tell a researcher whether a guessed ``gt`` is the hidden gold answer.
    Empty when the file gives no ``gt`` for a scored question."""
    compared = differ = hidden = 0
    examples: list[str] = []
    for qid in sorted(claimed):
        if qid not in gold:
            continue
        if qid in test_ids:
            hidden += 1
            continue
        compared += 1
        if " ".join(claimed[qid].split()) != " ".join(gold[qid].split()):
            differ += 1
            if len(examples) < GOLD_CLAIM_EXAMPLES:
                examples.append(qid)
    if not compared and not hidden:
        return {}
    return {"compared": compared, "differ": differ, "examples": examples, "not_compared": hidden}


@transaction.atomic
def _save_scores(
    submission_id: int,
    attempt: int,
    evaluation: Evaluation,
    answers: Mapping[str, str | None],
    breakdowns: dict[str, Any],
    gold_claims: dict[str, Any],
    *,
    release: Release | None = None,
) -> None:
    # Still ours? The sweeper, a delete or a later attempt may have moved on meanwhile.
    if (
        not Submission.objects.select_for_update()
        .filter(pk=submission_id, status=Status.SCORING, attempts=attempt)
        .exists()
    ):
        return
    QuestionResult.objects.filter(submission_id=submission_id).delete()
    QuestionResult.objects.bulk_create(
        [
            QuestionResult(
                submission_id=submission_id,
                question_id=qid,
                prediction=answers.get(qid, ""),
                answered=qid in answers,
                precision=s.precision,
                recall=s.recall,
                f1=s.f1,
                cc=bool(s.cc),
            )
            for qid, s in evaluation.scores.items()
        ],
        batch_size=2000,
    )
    overall = evaluation.overall
    ci = overall.ci
    fields: dict[str, Any] = {
        "status": Status.SCORED,
        "progress": 100,
        "scored_at": timezone.now(),
        "n_questions": overall.n,
        "coverage": evaluation.coverage,
        "precision": overall.precision,
        "precision_low": ci["precision"].low if "precision" in ci else None,
        "precision_high": ci["precision"].high if "precision" in ci else None,
        "recall": overall.recall,
        "recall_low": ci["recall"].low,
        "recall_high": ci["recall"].high,
        "f1": overall.f1,
        "cc": overall.cc,
        "cc_low": ci["cc"].low,
        "cc_high": ci["cc"].high,
        "by_source": {k: v.as_dict() for k, v in evaluation.by_source.items()},
        "breakdowns": breakdowns,
        "gold_claims": gold_claims,
        "release": release,
    }
    for source in BOARD_SOURCES:
        summary = evaluation.by_source.get(source)
        fields[f"recall_{source}"] = summary.recall if summary else None
    Submission.objects.filter(pk=submission_id).update(**fields)
    _enqueue_regression()


def compute_breakdowns(
    evaluation: Evaluation, facts: dict[str, selectors.QuestionFacts], *, min_group: int = 1
) -> dict[str, Any]:
    """Mean recall per table property, per query property (human-written questions only,
    the only ones labelled) and per synthetic template."""
    recall = {qid: s.recall for qid, s in evaluation.scores.items()}
    by_table: dict[str, list[str]] = defaultdict(list)
    by_query: dict[str, list[str]] = defaultdict(list)
    by_template: dict[str, list[str]] = defaultdict(list)
    for qid, fact in facts.items():
        for code, value in (fact.table_properties or {}).items():
            if value is True:
                by_table[code].append(qid)
        if fact.origin == QuestionOrigin.HUMAN:
            for code, value in (fact.query_properties or {}).items():
                if value is True:
                    by_query[code].append(qid)
        if fact.template_number is not None:
            by_template[str(fact.template_number)].append(qid)

    def ordered(
        groups: dict[str, list[str]], tax: taxonomy.Taxonomy | None
    ) -> dict[str, list[str]]:
        if tax is None:
            return dict(sorted(groups.items(), key=lambda kv: int(kv[0])))
        return {p.code: groups[p.code] for p in tax.properties if p.code in groups}

    def labels(tax: taxonomy.Taxonomy) -> dict[str, str]:
        out = {}
        for p in tax.properties:
            parent = tax.get(p.parent).label + ": " if p.parent else ""
            out[p.code] = parent + p.label
        return out

    def as_json(rows: list) -> list[dict[str, Any]]:
        return [
            {"key": r.key, "label": r.label, "recall": r.mean, "n": r.n}
            for r in rows
            if r.n >= min_group
        ]

    template_labels = {k: f"Template {k}" for k in by_template}
    return {
        "table_properties": as_json(
            group_means(
                recall,
                ordered(by_table, taxonomy.TABLE_PROPERTIES),
                labels(taxonomy.TABLE_PROPERTIES),
            )
        ),
        "query_properties": as_json(
            group_means(
                recall,
                ordered(by_query, taxonomy.QUERY_PROPERTIES),
                labels(taxonomy.QUERY_PROPERTIES),
            )
        ),
        "templates": as_json(group_means(recall, ordered(by_template, None), template_labels)),
        "min_group": min_group,
    }


# --- The sweeper ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    requeued: list[int]
    failed: list[int]


def submission_sweep(*, now: datetime | None = None) -> SweepResult:
    """Requeue submissions whose scoring has lost its heartbeat, or that waited in the queue
    past the timeout (the message may be lost), and fail those that have used up their
    attempts. Conditional updates: two sweepers cannot both act."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER_SECONDS)
    # Scoring beats every few seconds: a silent one lost its worker.
    silent = now - timedelta(seconds=settings.SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS)
    max_attempts = settings.SUBMISSION_MAX_ATTEMPTS
    requeued: list[int] = []
    failed: list[int] = []
    stuck_condition = (
        Q(status=Status.SCORING, heartbeat_at__lt=silent)
        | Q(status=Status.SCORING, heartbeat_at__isnull=True, started_at__lt=silent)
        | Q(status=Status.QUEUED, queued_at__lt=cutoff)
    )
    for pk, attempts in Submission.objects.filter(stuck_condition).values_list("pk", "attempts"):
        still_stuck = Submission.objects.filter(stuck_condition, pk=pk)
        if attempts >= max_attempts:
            if still_stuck.update(
                status=Status.FAILED,
                progress=100,
                error=f"scoring did not finish after {attempts} attempts; re-score to try again",
            ):
                failed.append(pk)
            continue
        with transaction.atomic():
            # A queued one waited too long (its message may be lost): that is an attempt too.
            # One stuck in scoring had its attempt counted when scoring claimed it.
            if still_stuck.update(
                status=Status.QUEUED,
                queued_at=now,
                started_at=None,
                heartbeat_at=None,
                attempts=Case(
                    When(status=Status.QUEUED, then=F("attempts") + 1),
                    default=F("attempts"),
                    output_field=PositiveSmallIntegerField(),
                ),
            ):
                requeued.append(pk)
                _enqueue_scoring(pk)
    return SweepResult(requeued=requeued, failed=failed)


# --- The regression ------------------------------------------------------------------------


@transaction.atomic
def property_regression_refresh() -> PropertyRegression | None:
    """Regress mean recall per real table (over all scored public submissions) on the table
    properties, and keep the result. With too few data, the previous result is removed."""
    submissions = selectors.comparable_submissions().filter(data_scope=DataScope.REAL)
    per_table = (
        QuestionResult.objects.filter(submission__in=submissions, question__in_gold_pool=False)
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
        submissions=submissions.count(),
        tables=result.n,
        r_squared=result.r_squared,
        intercept=result.intercept,
        coefficients=[asdict(c) for c in result.coefficients],
        dropped=list(result.dropped),
    )


# --- Reported results ----------------------------------------------------------------------


@dataclass(frozen=True)
class ReportedImportSummary:
    created: int
    updated: int
    unchanged: int = 0


@transaction.atomic
def reported_results_import(*, results: list[ReportedResult]) -> ReportedImportSummary:
    """Create or update the paper's rows, keyed by model, modality and data scope."""
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
            "precision": r.precision,
            "recall": r.recall,
            "cc": r.cc,
            "by_source": r.by_source,
            "description": "Reported in the HCT-QA paper (Table 1).",
            **{f"recall_{s}": (r.by_source.get(s) or {}).get("recall") for s in BOARD_SOURCES},
        }
        key = {
            "kind": Kind.REPORTED,
            "model_name": r.model_name,
            "modality": r.modality,
            "data_scope": r.data_scope,
        }
        current = Submission.objects.filter(**key).first()
        if current is not None and all(getattr(current, k) == v for k, v in values.items()):
            unchanged += 1  # importing the same file again writes nothing, and says so
            continue
        _, made = Submission.objects.update_or_create(**key, defaults=values)
        created += made
        updated += not made
    return ReportedImportSummary(created=created, updated=updated, unchanged=unchanged)
