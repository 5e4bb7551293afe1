"""What the leaderboard does when the dataset below it changes (``dataset.signals``)."""

from __future__ import annotations

from typing import Any


def rescore_after_question_set_change(sender: Any, *, reason: str, **kwargs: Any) -> int:
    """Submissions scored on questions or gold answers that changed are marked stale and
    queued to be scored again; the sender learns how many."""
    from leaderboard.services import submissions_invalidate

    return len(submissions_invalidate(reason=reason))
