"""One submission: who sees it, its scores, the board's medians, hardest questions, download."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from statistics import median
from typing import Any

from django.core.cache import cache
from django.db.models import Count, F, Max, Q, QuerySet
from django.db.models.functions import Length, Substr
from django.http import Http404

from dataset.models import Split
from dataset.selectors import gold_answer_visible
from hctqa.core.render import to_html
from hctqa.core.tables import TableFormatError, parse_table
from leaderboard.models import (
    DEFAULT_RULES,
    RESULT_FIGURES,
    Kind,
    QuestionResult,
    Rules,
    Score,
    Status,
    Submission,
    Visibility,
)
from leaderboard.selectors.questions import User


def can_manage(*, user: User, submission: Submission) -> bool:
    if not user.is_authenticated or submission.kind == Kind.REPORTED:
        return False
    return submission.owner_id == user.pk or user.has_perm("leaderboard.change_submission")


def is_public(submission: Submission) -> bool:
    """Shown to everyone: the paper's rows, and public submissions on all questions or the
    test split. Train and validation submissions are their owners' only."""
    if submission.kind == Kind.REPORTED:
        return True
    return submission.visibility == Visibility.PUBLIC and not submission.owner_only


def submission_for_viewer(*, submission_id: int, user: User) -> Submission:
    """Public submissions and reported rows for everyone; private ones, and train and
    validation ones, for owner and admins. Anything else is a 404, so those do not reveal
    that they exist."""
    try:
        submission = Submission.objects.select_related("owner", "release", "rescore").get(
            pk=submission_id
        )
    except Submission.DoesNotExist:
        raise Http404("No such submission") from None
    if not is_public(submission) and not can_manage(user=user, submission=submission):
        raise Http404("No such submission")
    return submission


def scores_of(*, submission: Submission) -> dict[str, Score]:
    """Its scores, by rules version (from the prefetched ones, when they are)."""
    return {s.rules: s for s in submission.scores.all()}


def breakdowns_for_viewer(*, score: Score) -> dict[str, Any]:
    """The breakdowns anyone may see, the owner included: without the groups withheld (they
    keep no figure: they would give single hidden answers' scores), with how many are."""
    breakdowns = score.breakdowns or {}
    out: dict[str, Any] = {"margin": breakdowns.get("margin", 0), "withheld": 0}
    for kind in ("table_properties", "query_properties", "templates"):
        rows = breakdowns.get(kind, [])
        shown = [r for r in rows if not r.get("withheld")]
        out["withheld"] += len(rows) - len(shown)
        out[kind] = shown
    return out


def submissions_of(*, user: User) -> QuerySet[Submission]:
    """The user's submissions, newest first, each with its scores prefetched."""
    return (
        Submission.objects.filter(owner=user)
        .select_related("release", "rescore", "track_score")
        .prefetch_related("scores")
        .order_by("-created_at")
    )


# The breakdowns a model page sets beside its board's median.
MEDIAN_KINDS = ("table_properties", "query_properties")
# Medians are kept this long in the cache, under a key that changes with the board's rows.
MEDIANS_CACHE_SECONDS = 600


def board_medians(*, submission: Submission, rules: str) -> dict[str, dict[str, tuple]] | None:
    """The median recall of each table-property and query-property group over the public
    board ``submission`` belongs on: same modality, question set (split and data scope) and
    rules; the paper's rows have no groups. Each row's groups withheld from the public are
    left out, so a median gives away nothing the board does not. By kind, then group key:
    (median, rows). None when it belongs on no public board (train, validation).

    One query for the board's fingerprint (its rows, their last scoring and change); the
    breakdowns are read only when the cached medians are out of date."""
    if submission.owner_only or submission.is_reported:
        return None
    board = Score.objects.filter(
        rules=rules,
        submission__kind=Kind.SUBMISSION,
        submission__status=Status.SCORED,
        submission__visibility=Visibility.PUBLIC,
        submission__stale=False,
        submission__modality=submission.modality,
        submission__split=submission.split,
        submission__data_scope=submission.data_scope,
    )
    # Visibility changes set updated_at: one row hidden and another shown keep the count.
    mark = board.aggregate(
        n=Count("pk"),
        top=Max("pk"),
        last=Max("submission__scored_at"),
        changed=Max("submission__updated_at"),
    )
    board_id = (submission.modality, submission.split, submission.data_scope, rules)
    fingerprint = ":".join(str(v) for v in (*board_id, *mark.values()))
    # Hashed: a cache key holds no spaces (the timestamp has one) on every backend.
    key = "board-medians:" + hashlib.sha256(fingerprint.encode()).hexdigest()
    cached = cache.get(key)
    if cached is not None:
        return cached
    values: dict[str, dict[str, list[float]]] = {kind: defaultdict(list) for kind in MEDIAN_KINDS}
    for breakdowns in board.values_list("breakdowns", flat=True).iterator(chunk_size=200):
        for kind in MEDIAN_KINDS:
            for row in (breakdowns or {}).get(kind, []):
                if row.get("key") and not row.get("withheld") and row.get("recall") is not None:
                    values[kind][row["key"]].append(row["recall"])
    medians = {
        kind: {group: (median(v), len(v)) for group, v in groups.items()}
        for kind, groups in values.items()
    }
    cache.set(key, medians, MEDIANS_CACHE_SECONDS)
    return medians


def beside_medians(
    rows: list[dict[str, Any]], medians: dict[str, tuple] | None
) -> list[dict[str, Any]]:
    """Breakdown rows with the board's median of each group (``median``, ``median_rows``;
    None where the board has none)."""
    out = []
    for row in rows:
        found = (medians or {}).get(row.get("key"))
        out.append(
            {
                **row,
                "median": found[0] if found else None,
                "median_rows": found[1] if found else 0,
            }
        )
    return out


# Pages show at most this much of an answer; the per-question download has all of it.
PREDICTION_SHOWN_CHARS = 500


@dataclass(frozen=True)
class WrongAnswer:
    question_id: str
    table_id: str
    text: str
    prediction: str | None  # at most PREDICTION_SHOWN_CHARS; None: the file said null
    gold_answer: str | None
    recall: float
    f1: float | None
    table_html: str = ""  # the table rendered, merged header cells and all (escaped)
    prediction_length: int = 0  # the whole answer's length

    @property
    def prediction_cut(self) -> int:
        """Characters of the answer not shown."""
        return max(0, self.prediction_length - PREDICTION_SHOWN_CHARS)


# Per-question figures of each rules version: (precision, recall, F1, CC) columns, and the
# condition for an answer to count under it.
FIGURES_UNDER_RULES: dict[str, tuple[tuple[str, str, str, str], Q]] = {
    Rules.V2025_05: (("precision", "recall", "f1", "cc"), Q()),
    Rules.V2025_10: (
        ("precision_2025_10", "recall_2025_10", "f1_2025_10", "cc_2025_10"),
        Q(counted_2025_10=True),
    ),
}


def hardest_questions(
    *, submission: Submission, rules: str = DEFAULT_RULES, limit: int = 20
) -> list[WrongAnswer]:
    """The questions this submission got least right under these rules: lowest recall, then
    lowest F1 (answers the rules leave out are not listed).

    Test-split questions are left out: their per-question scores would tell a reader which
    answers match the hidden gold. So are gold-pool questions (scored before they joined it).
    """
    (_, recall, f1, cc), counted = FIGURES_UNDER_RULES[rules]
    results = (
        QuestionResult.objects.filter(counted, submission=submission, **{cc: False})
        .exclude(question__table__split=Split.TEST)
        .exclude(question__in_gold_pool=True)
        .select_related("question__table")
        .annotate(
            # Only the start of each answer leaves the database: one can be megabytes long.
            prediction_head=Substr("prediction", 1, PREDICTION_SHOWN_CHARS),
            prediction_length=Length("prediction"),
            shown_recall=F(recall),
            shown_f1=F(f1),
        )
        .only(
            "question__id",
            "question__text",
            "question__gold_answer",
            "question__table_id",
            "question__table__canonical_csv",
        )
        .order_by("shown_recall", F("shown_f1").asc(nulls_first=True), "question_id")[:limit]
    )
    rendered: dict[str, str] = {}
    out = []
    for r in results:
        table = r.question.table
        if table.pk not in rendered:
            try:
                rendered[table.pk] = to_html(parse_table(table.canonical_csv))
            except TableFormatError:
                rendered[table.pk] = ""
        out.append(
            WrongAnswer(
                question_id=r.question.id,
                table_id=table.pk,
                text=r.question.text,
                prediction=r.prediction_head,
                gold_answer=r.question.gold_answer,
                recall=r.shown_recall,
                f1=r.shown_f1,
                table_html=rendered[table.pk],
                prediction_length=r.prediction_length or 0,
            )
        )
    return out


# The per-question figures as the downloads name them: every one with its rules version.
RESULT_EXPORT_FIGURES = tuple(
    f if f.endswith("2025_10") else f"{f}_2025_05" for f in RESULT_FIGURES
)


def results_export(*, submission: Submission, user: User) -> list[dict[str, Any]]:
    """Per-question results for the owner, under both rules versions side by side
    (``*_2025_05``, and ``*_2025_10`` with ``counted_2025_10``: null for vision, false for an
    answer the 2025-10 rules leave out). Predictions always; scores and gold answers only
    where the gold may be shown to this user (never for test-split questions, admins
    aside). Gold-pool questions are left out for everyone: a submission scored before a
    question joined the pool still holds its row."""
    rows = (
        QuestionResult.objects.filter(submission=submission)
        .exclude(question__in_gold_pool=True)
        .values_list(
            "question_id",
            "question__table__split",
            "question__gold_answer",
            "prediction",
            "answered",
            *RESULT_FIGURES,
        )
    )
    out = []
    for qid, split, gold, prediction, answered, *scores in rows.order_by("question_id"):
        visible = gold_answer_visible(user=user, split=split)
        out.append(
            {
                "question_id": qid,
                "split": split,
                "prediction": prediction,
                "answered": answered,
                "gold_answer": gold if visible else None,
                **{
                    k: (v if visible else None)
                    for k, v in zip(RESULT_EXPORT_FIGURES, scores, strict=True)
                },
            }
        )
    return out
