"""Signals the dataset sends to the apps built on it (the leaderboard), which it must not
import."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the transaction that changed which questions are scored or their gold answers
# (an import that moved tables between splits or changed gold answers, questions joining or
# leaving the private gold pool), with ``reason``, a sentence saying what changed, and
# ``question_ids``, the questions concerned. Receivers write in the same transaction, so a
# dry run's rollback undoes them too, and return how many scored results they found out of
# date (the leaderboard: submissions marked stale and queued to be scored again), so the
# sender can say so.
question_set_changed = Signal()


def announce_question_set_change(*, sender: type, reason: str, question_ids: list[str]) -> int:
    """Send ``question_set_changed``; the number of scored results out of date because of it."""
    responses = question_set_changed.send(sender=sender, reason=reason, question_ids=question_ids)
    return sum(r for _, r in responses if isinstance(r, int))
