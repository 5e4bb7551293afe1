"""Signals the dataset sends to the apps built on it (the leaderboard), which it must not
import."""

from __future__ import annotations

from django.dispatch import Signal

# Sent after commit with ``question_ids``: questions that joined or left the private gold
# pool, so every score computed over them (or without them) is out of date.
gold_pool_changed = Signal()
