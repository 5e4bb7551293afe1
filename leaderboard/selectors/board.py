"""QA's public boards: their filters, ranked rows, rows being scored again, a model's rows."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.db.models import Count, F, Q, QuerySet

from leaderboard.models import (
    BOARD_SPLITS,
    DEFAULT_RULES,
    QA_TRACK,
    DataScope,
    EvalSplit,
    InferenceRun,
    Kind,
    Score,
    Status,
    Submission,
    Visibility,
)

# --- The board -----------------------------------------------------------------------------


# Sort keys and the Score columns (or its submission's) they sort on.
SORTABLE = {
    "model": "submission__model_name",
    "organisation": "submission__organisation",
    "parameters": "submission__parameters_billions",
    "precision": "precision",
    "recall": "recall",
    "f1": "f1",
    "cc": "cc",
    "psa": "recall_psa",
    "pak": "recall_pak",
    "census": "recall_census",
    "arxiv": "recall_arxiv",
    "submitted": "submission__created_at",
}


@dataclass(frozen=True)
class BoardFilters:
    modality: str = "text"
    # all (the paper's Table 1 protocol) or test: a board ranks one question set only.
    split: str = EvalSplit.ALL
    rules: str = DEFAULT_RULES
    size_class: str = ""
    weights: str = ""
    data_scope: str = "real"
    table_format: str = ""
    search: str = ""
    sort: str = "-recall"


def _board_submissions(filters: BoardFilters, prefix: str = "") -> Q:
    """The submissions a board with these filters holds, as a condition on ``prefix``."""
    if filters.split not in BOARD_SPLITS:
        raise ValueError("Train and validation scores are not ranked publicly")
    p = prefix
    condition = Q(
        **{f"{p}track": QA_TRACK, f"{p}modality": filters.modality, f"{p}split": filters.split}
    )
    for field in ("size_class", "weights", "data_scope", "table_format"):
        value = getattr(filters, field)
        if value:
            condition &= Q(**{f"{p}{field}": value})
    if filters.search:
        text = filters.search
        condition &= (
            Q(**{f"{p}model_name__icontains": text})
            | Q(**{f"{p}organisation__icontains": text})
            | Q(**{f"{p}description__icontains": text})
        )
    return condition


def _board_rows(filters: BoardFilters) -> QuerySet[Score]:
    return Score.objects.filter(
        Q(submission__kind=Kind.REPORTED)
        | Q(
            submission__status=Status.SCORED,
            submission__visibility=Visibility.PUBLIC,
            submission__stale=False,
        ),
        _board_submissions(filters, "submission__"),
        rules=filters.rules,
    )


def board(*, filters: BoardFilters) -> QuerySet[Score]:
    """The ranked rows of a public board: the scores, under the chosen rules, of public
    submissions scored on the chosen question set (all questions, or the test split) whose
    scores are current, and the paper's reported rows (2025-05 figures on all questions, so
    only on that board). Filtered and sorted; missing figures sort last whichever the
    direction. One query per page, with the submission joined."""
    rows = _board_rows(filters)
    descending = filters.sort.startswith("-")
    column = SORTABLE[filters.sort.lstrip("-")]
    order = F(column).desc(nulls_last=True) if descending else F(column).asc(nulls_last=True)
    return (
        rows.select_related("submission")
        # The release a row was scored on, by version only (the row says where it came from).
        .annotate(release_version=F("submission__release__version"))
        .defer(
            "breakdowns",
            "by_source",
            "submission__description",
            "submission__gold_claims",
            "submission__predictions",
        )
        .order_by(order, "submission__model_name", "submission_id")
    )


def board_other_scopes(*, filters: BoardFilters) -> list[tuple[str, str, int]]:
    """For an empty board: the boards of the other data scopes with the same filters that
    have rows, as (scope, label, rows), in the scopes' order. One query."""
    counts = dict(
        _board_rows(replace(filters, data_scope=""))
        .exclude(submission__data_scope=filters.data_scope)
        .order_by()
        .values_list("submission__data_scope")
        .annotate(n=Count("id"))
    )
    return [(s.value, s.label, counts[s.value]) for s in DataScope if counts.get(s.value)]


# How many submissions being scored again a board lists (beside its ranked rows).
BEING_RESCORED_SHOWN = 50


def board_being_rescored(*, filters: BoardFilters) -> list[Submission]:
    """Public submissions of this board whose questions or gold answers changed since they
    were scored, waiting to be scored again: listed apart, never ranked. One query."""
    return list(
        Submission.objects.filter(
            _board_submissions(filters),
            kind=Kind.SUBMISSION,
            visibility=Visibility.PUBLIC,
            stale=True,
            status__in=[Status.QUEUED, Status.SCORING],
        )
        .only("id", "model_name", "organisation", "status", "progress", "split", "modality")
        .order_by("model_name", "id")[:BEING_RESCORED_SHOWN]
    )


# --- The same model, several rows --------------------------------------------------------------


@dataclass(frozen=True)
class NamedAlike:
    """One row of a board under a model's name: its 2025-05 score (the rules the paper's rows
    have) and its rank there (ties share one)."""

    submission: Submission
    score: Score
    rank: int
    from_run: bool  # its answers came from an inference run on this platform


def same_model_rows(*, submission: Submission) -> list[NamedAlike]:
    """The rows of the submission's public board under the same model name (any case), itself
    included, highest recall first: empty unless it is on that board beside another. The
    paper's Table 1 row and a computed row of one model differ; the model page says why."""
    if submission.split not in BOARD_SPLITS:
        return []
    filters = BoardFilters(
        modality=submission.modality,
        split=submission.split,
        rules=DEFAULT_RULES,
        data_scope=submission.data_scope,
    )
    rows = list(
        _board_rows(filters)
        .filter(submission__model_name__iexact=submission.model_name)
        .select_related("submission__owner", "submission__release")
        .order_by(F("recall").desc(nulls_last=True), "submission_id")
    )
    if len(rows) < 2 or all(r.submission_id != submission.pk for r in rows):
        return []
    board = _board_rows(filters)
    runs = set(
        InferenceRun.objects.filter(submission__in=[r.submission_id for r in rows]).values_list(
            "submission_id", flat=True
        )
    )
    return [
        NamedAlike(
            row.submission,
            row,
            board.filter(recall__gt=row.recall).count() + 1 if row.recall is not None else 0,
            row.submission_id in runs,
        )
        for row in rows
    ]
