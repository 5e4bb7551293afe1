"""What the leaderboard does when the dataset below it changes (``annotation.signals``)."""

from __future__ import annotations

from typing import Any


def rescore_after_gold_pool_change(sender: Any, *, question_ids: list[str], **kwargs: Any) -> None:
    from leaderboard.services import submissions_rescore_for_questions

    submissions_rescore_for_questions(question_ids=question_ids)
