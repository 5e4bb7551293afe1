"""Writes for submissions: creating, scoring, the sweeper, the regression, the paper's rows."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import DatabaseError, transaction
from django.db.models import Avg, Case, Count, F, PositiveSmallIntegerField, Q, When
from django.utils import timezone

from annotation.models import QuestionOrigin
from hctqa.core import taxonomy
from hctqa.core.predictions import PredictionsError, check_known, parse_predictions
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


def _read_upload(upload: UploadedFile) -> bytes:
    limit = settings.SUBMISSION_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        raise ApplicationError(
            f"the file is {upload.size / 1024 / 1024:.1f} MB, over the "
            f"{limit / 1024 / 1024:.1f} MB limit",
            field="predictions",
        )
    return upload.read()


def _validated_predictions(raw: bytes) -> dict[str, str]:
    try:
        predictions = parse_predictions(raw, max_bytes=settings.SUBMISSION_MAX_BYTES)
        check_known(predictions, selectors.known_question_ids())
    except PredictionsError as exc:
        raise ApplicationError(str(exc), field="predictions") from None
    return predictions


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
    _check_metadata(data)
    raw = _read_upload(predictions)
    _validated_predictions(raw)
    counted = selectors.includes_test_questions(data.split)
    with transaction.atomic():
        if counted:
            _take_test_split_slot(owner)
        submission = _store(owner=owner, data=data, raw=raw)
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
    _validated_predictions(raw)
    counted = limit_entry is None and selectors.includes_test_questions(data.split)
    if counted:
        _take_test_split_slot(owner)
    submission = _store(owner=owner, data=data, raw=raw)
    if counted:
        DailyLimitEntry.objects.create(user=owner, submission=submission)
    elif limit_entry is not None:
        DailyLimitEntry.objects.filter(pk=limit_entry.pk).update(submission=submission)
    return submission


def _store(*, owner: Any, data: SubmissionInput, raw: bytes) -> Submission:
    """Save the checked predictions file and the submission, and queue its scoring."""
    submission = Submission(
        kind=Kind.SUBMISSION,
        owner=owner,
        **asdict(data),
        status=Status.QUEUED,
        queued_at=timezone.now(),
        predictions_sha256=hashlib.sha256(raw).hexdigest(),
    )
    suffix = ".gz" if raw[:2] == b"\x1f\x8b" else ""
    submission.predictions.save(f"{uuid.uuid4().hex}.jsonl{suffix}", ContentFile(raw), save=False)
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


# --- Scoring -------------------------------------------------------------------------------


def _set_progress(submission_id: int, percent: int) -> None:
    Submission.objects.filter(pk=submission_id, status=Status.SCORING).update(progress=percent)


def _fail(submission_id: int, reason: str) -> None:
    Submission.objects.filter(pk=submission_id, status=Status.SCORING).update(
        status=Status.FAILED, error=reason, progress=100
    )


def submission_score(*, submission_id: int) -> str:
    """Score a queued submission. Safe to run twice: only the run that moves it from queued to
    scoring does the work. Returns what happened, for the task log."""
    claimed = Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(
        status=Status.SCORING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
        progress=5,
        error="",
    )
    if not claimed:
        return "not queued"
    submission = Submission.objects.get(pk=submission_id)
    try:
        if not submission.predictions:
            raise PredictionsError("the predictions file is missing")
        with submission.predictions.open("rb") as handle:
            raw = handle.read()
        predictions = parse_predictions(raw, max_bytes=settings.SUBMISSION_MAX_BYTES)
        check_known(predictions, selectors.known_question_ids())
        gold = selectors.gold_answers(split=submission.split, data_scope=submission.data_scope)
        if not gold:
            raise PredictionsError(
                f"there are no {submission.get_data_scope_display().lower()} questions in "
                f"the {submission.get_split_display().lower()} split to score against"
            )
        _set_progress(submission_id, 30)
        evaluation = evaluate(gold, predictions, submission.modality)
        _set_progress(submission_id, 60)
        facts = selectors.question_facts(question_ids=list(gold))
        has_test = selectors.includes_test_questions(submission.split)
        min_group = MIN_GROUP_WITH_TEST_QUESTIONS if has_test else 1
        breakdowns = compute_breakdowns(evaluation, facts, min_group=min_group)
        _save_scores(submission_id, evaluation, breakdowns)
    except PredictionsError as exc:
        _fail(submission_id, str(exc))
        return "failed: " + str(exc)
    except FileNotFoundError:
        _fail(submission_id, "the predictions file is missing")
        return "failed: file missing"
    except DatabaseError:
        # Transient: put it back in the queue for the task's retry (or the sweeper).
        Submission.objects.filter(pk=submission_id, status=Status.SCORING).update(
            status=Status.QUEUED, queued_at=timezone.now()
        )
        raise
    except Exception:
        logger.exception("scoring submission %s failed", submission_id)
        _fail(
            submission_id, "scoring failed because of an internal error; an admin can re-score it"
        )
        return "failed: internal error"
    return "scored"


@transaction.atomic
def _save_scores(submission_id: int, evaluation: Evaluation, breakdowns: dict[str, Any]) -> None:
    # Still ours? The sweeper or a delete may have moved on while we computed.
    if (
        not Submission.objects.select_for_update()
        .filter(pk=submission_id, status=Status.SCORING)
        .exists()
    ):
        return
    QuestionResult.objects.filter(submission_id=submission_id).delete()
    QuestionResult.objects.bulk_create(
        [
            QuestionResult(
                submission_id=submission_id,
                question_id=qid,
                prediction=evaluation.predictions.get(qid, ""),
                answered=qid in evaluation.predictions,
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
    """Requeue submissions stuck in the queue or in scoring past the timeout, and fail those
    that have used up their attempts. Conditional updates: two sweepers cannot both act."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER_SECONDS)
    max_attempts = settings.SUBMISSION_MAX_ATTEMPTS
    requeued: list[int] = []
    failed: list[int] = []
    stuck_condition = Q(status=Status.SCORING, started_at__lt=cutoff) | Q(
        status=Status.QUEUED, queued_at__lt=cutoff
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
        QuestionResult.objects.filter(submission__in=submissions)
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
