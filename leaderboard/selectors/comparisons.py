"""Two submissions compared (the paired bootstrap), and the rows the regression reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet, TextField, Value
from django.db.models.functions import Coalesce, Lower, Trim

from dataset.models import Split
from hctqa.core.stats import PairedComparison, paired_bootstrap
from leaderboard.models import (
    BOARD_SPLITS,
    DEFAULT_RULES,
    QA_TRACK,
    DataScope,
    Kind,
    Modality,
    PropertyRegression,
    QuestionResult,
    Rules,
    Score,
    Status,
    Submission,
    Visibility,
)
from leaderboard.selectors.submission import FIGURES_UNDER_RULES


@dataclass(frozen=True)
class Comparison:
    a: Submission
    b: Submission
    rules: str
    metrics: dict[str, PairedComparison]


# The bootstrap takes about half a second of CPU for two full submissions, and the page is
# open to anonymous visitors: the same comparison asked again is read from the cache. It is
# the same answer (fixed seed) until either submission is scored again.
COMPARISON_CACHE_SECONDS = 600


def _comparison_key(a: Submission, b: Submission, rules: str) -> str:
    """The two submissions, each as last scored and edited, under these rules: a rescore or
    an edit of either asks for the bootstrap again."""
    for s in (a, b):
        if s.is_reported:
            raise ValueError(
                f"The row {s.model_name} is reported in the paper: the paper gives its "
                "figures, not its answer to each question, so the paired test cannot use it"
            )
    if rules != Rules.V2025_05 and Modality.VISION in (a.modality, b.modality):
        raise ValueError("Vision answers have only the 2025-05 rules")
    pair = ":".join(
        f"{s.pk}@{s.scored_at and s.scored_at.timestamp()}@{s.updated_at.timestamp()}"
        for s in (a, b)
    )
    return f"compare:{pair}:{rules}"


def comparison_cached(
    *, a: Submission, b: Submission, rules: str = DEFAULT_RULES
) -> Comparison | None:
    """The comparison if it was computed lately (see ``compare``), else None; ValueError
    when the two cannot be compared."""
    metrics = cache.get(_comparison_key(a, b, rules))
    return None if metrics is None else Comparison(a=a, b=b, rules=rules, metrics=metrics)


def compare(*, a: Submission, b: Submission, rules: str = DEFAULT_RULES) -> Comparison:
    """Paired bootstrap, under these rules, on the questions both submissions answered for the
    same gold and that both had counted (the 2025-10 rules leave some answers out)."""
    key = _comparison_key(a, b, rules)
    metrics = cache.get(key)
    if metrics is None:
        metrics = _compared(a, b, rules)
        cache.set(key, metrics, timeout=COMPARISON_CACHE_SECONDS)
    return Comparison(a=a, b=b, rules=rules, metrics=metrics)


def _compared(a: Submission, b: Submission, rules: str) -> dict[str, PairedComparison]:
    metrics = ["recall", "cc"]
    if a.modality == b.modality == "text":
        metrics = ["precision", "recall", "f1", "cc"]
    columns, counted = FIGURES_UNDER_RULES[rules]
    named = dict(zip(("precision", "recall", "f1", "cc"), columns, strict=True))
    scores: dict[int, dict[str, tuple[float, ...]]] = {}
    hidden: set[str] = set()
    for submission in (a, b):
        rows = (
            QuestionResult.objects.filter(counted, submission=submission)
            .exclude(question__in_gold_pool=True)
            .values_list("question_id", "question__table__split", *(named[m] for m in metrics))
        )
        scores[submission.pk] = {}
        for qid, split, *figures in rows:
            scores[submission.pk][qid] = tuple(float(v) for v in figures)
            if split == Split.TEST:
                hidden.add(qid)
    shared = sorted(set(scores[a.pk]) & set(scores[b.pk]))
    if not shared:
        raise ValueError("These two submissions share no scored questions")
    _check_comparison_discloses_nothing(shared, hidden, (a, b), scores, rules)
    results = {}
    for position, metric in enumerate(metrics):
        results[metric] = paired_bootstrap(
            [scores[a.pk][q][position] for q in shared],
            [scores[b.pk][q][position] for q in shared],
        )
    return results


def _check_comparison_discloses_nothing(
    shared: Collection[str],
    hidden: Collection[str],
    submissions: tuple[Submission, Submission],
    counted: dict[int, dict[str, Any]],
    rules: str,
) -> None:
    """Refuse a comparison on test-split answers unless its figures follow from figures
    already shown: each submission's overall figure under these rules, shown, on exactly the
    test-split answers compared. Then the mean differences are those of the overall figures;
    a comparison on any other set of test answers would be a new figure that, with the
    submissions' own ones, could rest on a few hidden questions (hctqa.core.disclosure)."""
    on_hidden = {q for q in shared if q in hidden}
    if not on_hidden:
        return
    withheld = dict(
        Score.objects.filter(submission__in=submissions, rules=rules).values_list(
            "submission_id", "withheld"
        )
    )
    for submission in submissions:
        mine = {q for q in counted[submission.pk] if q in hidden}
        hides = withheld.get(submission.pk, True)
        if mine != on_hidden or hides:
            why = " and its overall figure is withheld" if hides else ""
            raise ValueError(
                f"These two submissions share {len(on_hidden):,} counted test-split answers "
                f"under the {rules} rules, but {submission.model_name} has {len(mine):,}{why}: "
                "a comparison on other test answers than both overall figures would be a new "
                "figure, which with theirs could give single hidden answers away. The 2025-05 "
                "rules count every answer: compare under them."
            )


def comparable_submissions(*, demo: bool = False) -> QuerySet[Submission]:
    """The submissions the public boards rank: public, scored on all questions or the test
    split, with current scores. The demo rows (made-up tables) are listed only with
    ``demo``, and then alone, as on their board."""
    demo_rows = Q(data_scope=DataScope.DEMO)
    return (
        Submission.objects.filter(
            demo_rows if demo else ~demo_rows,
            track=QA_TRACK,
            kind=Kind.SUBMISSION,
            status=Status.SCORED,
            visibility=Visibility.PUBLIC,
            stale=False,
            split__in=BOARD_SPLITS,
        )
        .only("id", "model_name", "modality", "split", "data_scope", "table_format")
        .order_by("model_name", "id")
    )


# The public regression reads a row only when it answered nearly every question of its set
# and is no constant answer (a row answering "{1}" everywhere says nothing about tables).
REGRESSION_MIN_COVERAGE = 0.9
REGRESSION_MAX_SAME_ANSWER = 0.5


def regression_rows(submissions: QuerySet[Submission]) -> tuple[list[int], list[dict[str, Any]]]:
    """The ids of the submissions the property regression reads, and those it leaves out,
    each as {id, model_name, why}, in name order. Three queries."""
    coverage = dict(
        Score.objects.filter(submission__in=submissions, rules=Rules.V2025_05).values_list(
            "submission_id", "coverage"
        )
    )
    totals: Counter[int] = Counter()
    top: dict[int, tuple[int, str]] = {}
    given = (
        QuestionResult.objects.filter(submission__in=submissions, answered=True)
        .annotate(answer=Lower(Trim(Coalesce("prediction", Value(""), output_field=TextField()))))
        .values("submission_id", "answer")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in given:
        totals[row["submission_id"]] += row["n"]
        if row["n"] > top.get(row["submission_id"], (0, ""))[0]:
            top[row["submission_id"]] = (row["n"], row["answer"])
    admitted, left_out = [], []
    for submission in submissions.order_by("model_name", "id").only("id", "model_name"):
        share = coverage.get(submission.pk) or 0.0
        same, answer = top.get(submission.pk, (0, ""))
        same_share = same / totals[submission.pk] if totals[submission.pk] else 1.0
        why = ""
        if share < REGRESSION_MIN_COVERAGE:
            why = f"answered {share:.0%} of its questions"
        elif same_share > REGRESSION_MAX_SAME_ANSWER:
            shown = answer if len(answer) <= 30 else answer[:29] + "…"
            why = f"gave one answer, “{shown}”, to {same_share:.0%} of its questions"
        if why:
            left_out.append({"id": submission.pk, "model_name": submission.model_name, "why": why})
        else:
            admitted.append(submission.pk)
    return admitted, left_out


def current_regression() -> PropertyRegression | None:
    return PropertyRegression.objects.order_by("-computed_at").first()


# The normal quantile of a two-sided 95% interval.
Z_95 = 1.96


def coefficient_intervals(regression: PropertyRegression) -> list[dict[str, Any]]:
    """The regression's coefficients, each with its 95% interval (coefficient ± 1.96 standard
    errors)."""
    return [
        {**c, "low": c["coef"] - Z_95 * c["std_error"], "high": c["coef"] + Z_95 * c["std_error"]}
        for c in regression.coefficients
    ]
