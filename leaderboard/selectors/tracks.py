"""The boards of the tracks beside QA, a track submission's figures and per-item results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from dataset.selectors import gold_answer_visible
from leaderboard.models import (
    EvalSplit,
    ItemResult,
    Kind,
    Status,
    Submission,
    TrackScore,
    Visibility,
)
from leaderboard.selectors.board import BEING_RESCORED_SHOWN
from leaderboard.selectors.questions import User
from tracks.registry import TrackInfo
from tracks.registry import track as track_info

# A track's board ranks the test split: the items whose gold is hidden.
TRACK_BOARD_SPLIT = EvalSplit.TEST
GROUP_SOURCE = "source:"
GROUP_PROPERTY = "property:"


@dataclass(frozen=True)
class TrackBoardFilters:
    """One track's board: its mode (extraction), the figures shown (``group``: all items,
    ``source:<code>`` or ``property:<code>``), search, weights, and the sort (a figure's
    name, ``model`` or ``submitted``; ``-`` first for descending)."""

    track: str
    mode: str = ""
    group: str = ""
    weights: str = ""
    search: str = ""
    sort: str = ""


@dataclass
class TrackBoardRow:
    submission: Submission
    score: TrackScore
    n: int  # the items the figures shown rest on
    figures: dict[str, float | None]
    intervals: dict[str, list[float]]  # overall only
    by_source: dict[str, float | None]  # the primary figure per item source
    withheld: bool
    rank: int = 0


def _group_figures(score: TrackScore, group: str) -> tuple[int, dict[str, Any], bool] | None:
    """(n, figures, withheld) of one group of a score, or None when it has none."""
    if not group:
        return score.n, score.figures, score.withheld
    kind, _, key = group.partition(":")
    rows = score.by_source if kind == "source" else score.breakdowns.get("table_properties", [])
    for row in rows:
        if row.get("key") == key:
            return row["n"], row["figures"], row["withheld"]
    return None


def _track_board_scores(filters: TrackBoardFilters) -> QuerySet[TrackScore]:
    scores = TrackScore.objects.filter(
        submission__track=filters.track,
        submission__mode=filters.mode,
        submission__split=TRACK_BOARD_SPLIT,
        submission__kind__in=[Kind.SUBMISSION, Kind.BASELINE],
        submission__status=Status.SCORED,
        submission__visibility=Visibility.PUBLIC,
        submission__stale=False,
    )
    if filters.weights:
        scores = scores.filter(submission__weights=filters.weights)
    if filters.search:
        text = filters.search
        scores = scores.filter(
            Q(submission__model_name__icontains=text)
            | Q(submission__organisation__icontains=text)
            | Q(submission__description__icontains=text)
        )
    return scores.select_related("submission").defer(
        "submission__description", "submission__gold_claims", "submission__predictions"
    )


def track_board(*, filters: TrackBoardFilters) -> list[TrackBoardRow]:
    """The ranked rows of a track's public board: the public submissions and the platform's
    baselines scored on the test split's items of the track and mode, with current scores,
    showing the figures of all items or of one group. Sorted in Python (a board holds
    hundreds of rows at most, and its figures are in JSON): missing figures last whichever
    the direction. One query."""
    info = track_info(filters.track)
    primary = info.primary
    rows = []
    for score in _track_board_scores(filters):
        found = _group_figures(score, filters.group)
        if found is None:
            continue
        n, figures, withheld = found
        rows.append(
            TrackBoardRow(
                submission=score.submission,
                score=score,
                n=n,
                figures=figures,
                intervals={} if filters.group else score.intervals,
                by_source={s["key"]: s["figures"].get(primary) for s in score.by_source},
                withheld=withheld,
            )
        )
    sort = filters.sort or f"-{primary}"
    descending, column = sort.startswith("-"), sort.lstrip("-")

    def value(row: TrackBoardRow) -> Any:
        if column == "model":
            return row.submission.model_name.lower()
        if column == "submitted":
            return row.submission.created_at
        return row.figures.get(column)

    present = [r for r in rows if value(r) is not None]
    present.sort(key=lambda r: (value(r), -r.submission.pk), reverse=descending)
    missing = sorted(
        (r for r in rows if value(r) is None),
        key=lambda r: (r.submission.model_name.lower(), r.submission.pk),
    )
    ranked = present + missing
    for rank, row in enumerate(ranked, start=1):
        row.rank = rank
    return ranked


def track_board_sorts(info: TrackInfo, mode: str) -> list[str]:
    columns = [f.name for f in info.figures(mode)] + ["model", "submitted"]
    return columns + [f"-{c}" for c in columns]


def track_board_sources(rows: list[TrackBoardRow]) -> list[str]:
    """The item sources the board's rows have figures for, in name order."""
    return sorted({key for row in rows for key in row.by_source})


def track_being_rescored(*, filters: TrackBoardFilters) -> list[Submission]:
    """Public submissions of this board waiting to be scored again (their items changed)."""
    return list(
        Submission.objects.filter(
            track=filters.track,
            mode=filters.mode,
            split=TRACK_BOARD_SPLIT,
            kind__in=[Kind.SUBMISSION, Kind.BASELINE],
            visibility=Visibility.PUBLIC,
            stale=True,
            status__in=[Status.QUEUED, Status.SCORING],
        )
        .only("id", "model_name", "organisation", "status", "progress", "split", "track")
        .order_by("model_name", "id")[:BEING_RESCORED_SHOWN]
    )


def track_score_for_viewer(*, submission: Submission) -> TrackScore | None:
    """A track submission's figures (withheld ones are null for everyone already)."""
    return TrackScore.objects.filter(submission=submission).first()


def item_results_export(*, submission: Submission, user: User) -> list[dict[str, Any]]:
    """Per-item results for the owner: each item's split, reason and message (why it scored
    0: no prediction, an unreadable one, a limit its SQL broke); its figures and detail
    (an executed result, relation counts) only where the item's gold is public to this user.
    A test item's figures would say whether a prediction matches the hidden gold, and its
    executed result could hold the hidden table's values."""
    rows = (
        ItemResult.objects.filter(submission=submission)
        .select_related("item")
        .only("figures", "reason", "message", "detail", "item__item_id", "item__split")
        .order_by("item__item_id")
    )
    out = []
    for r in rows:
        visible = gold_answer_visible(user=user, split=r.item.split)
        out.append(
            {
                "id": r.item.item_id,
                "split": r.item.split,
                "reason": r.reason,
                "message": r.message,
                "figures": r.figures if visible else None,
                "detail": r.detail if visible else None,
            }
        )
    return out
