"""Signals the dataset sends to the apps built on it, which it must not import: the
leaderboard (scores out of date) and annotation (table properties decided by people)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.dispatch import Signal

# Sent inside the transaction that changed which questions are scored or their gold answers
# (an import that moved tables between splits or changed gold answers, questions joining or
# leaving the private gold pool), with ``reason``, a sentence saying what changed, and
# ``question_ids``, the questions concerned. Receivers write in the same transaction, so a
# dry run's rollback undoes them too, and return how many scored results they found out of
# date (the leaderboard: submissions marked stale and queued to be scored again), so the
# sender can say so.
question_set_changed = Signal()

# Sent by an import before it writes tables, with ``table_ids``. Receivers return, as
# {table id: properties}, the tables whose properties people decided (annotation: an
# adjudicator's resolution); the import keeps those instead of the release's labels.
table_properties_decided = Signal()

# Sent inside an import's transaction once its tables are written, with ``properties``,
# {table id: the release's own labels}. Receivers keep them (annotation: one release
# annotation per table) and return how many they added or changed.
release_labels_imported = Signal()


def _total(responses: list[tuple[Any, Any]]) -> int:
    return sum(r for _, r in responses if isinstance(r, int))


def announce_question_set_change(*, sender: type, reason: str, question_ids: list[str]) -> int:
    """Send ``question_set_changed``; the number of scored results out of date because of it."""
    responses = question_set_changed.send(sender=sender, reason=reason, question_ids=question_ids)
    return _total(responses)


def decided_table_properties(*, sender: type, table_ids: Collection[str]) -> dict[str, dict]:
    """Send ``table_properties_decided``; the properties people decided, by table id."""
    decided: dict[str, dict] = {}
    for _, response in table_properties_decided.send(sender=sender, table_ids=table_ids):
        decided.update(response or {})
    return decided


def announce_release_labels(*, sender: type, properties: Mapping[str, dict]) -> int:
    """Send ``release_labels_imported``; how many labels the receivers added or changed."""
    return _total(release_labels_imported.send(sender=sender, properties=properties))
