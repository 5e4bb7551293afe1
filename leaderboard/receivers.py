"""What the leaderboard does when the dataset or the tracks below it change
(``dataset.signals``, ``tracks.signals``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def rescore_after_question_set_change(sender: Any, *, reason: str, **kwargs: Any) -> int:
    """Submissions scored on questions or gold answers that changed are marked stale and
    queued to be scored again; the sender learns how many."""
    from leaderboard.services import submissions_invalidate

    return len(submissions_invalidate(reason=reason))


def baselines_after_items_built(
    sender: Any, *, tracks: list[str] | None, report: Callable[[float, str], None], **kwargs: Any
) -> int:
    """The platform's baselines made again on the tracks' new test items (replacing their
    board rows), queued for the scoring worker; the build learns how many rows."""
    from leaderboard.services.baselines import BASELINES, baselines_run
    from tracks.registry import track

    wanted = {b.track for b in BASELINES}
    if tracks is not None:
        wanted &= set(tracks)
    # A baseline runs once in each of its track's modes.
    runs = sum(max(len(track(b.track).modes), 1) for b in BASELINES if b.track in wanted)
    labels: list[str] = []

    def progress(label: str, number: int, total: int) -> None:
        # Each baseline in each mode is one stretch of the bar, in the order they run.
        if label not in labels:
            labels.append(label)
        share = (len(labels) - 1 + number / max(total, 1)) / max(runs, len(labels))
        report(share, f"baselines: {label}, {number:,} of {total:,} items")

    return len(baselines_run(tracks=sorted(wanted), split="test", report=progress))
