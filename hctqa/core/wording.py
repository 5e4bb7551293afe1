"""Small helpers for the platform's sentences: counts with the right noun form, and time
spans that say a date once."""

from __future__ import annotations

from datetime import datetime


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 question``, ``2 questions``, ``10,065 questions``; ``plural`` for irregular nouns
    (``counted(2, "entry", "entries")``)."""
    word = singular if n == 1 else (plural or f"{singular}s")
    return f"{n:,} {word}"


def time_span(start: datetime, end: datetime) -> str:
    """``2026-11-23 14:16–14:20`` on one day, ``2026-11-23 14:16 to 2026-11-24 09:05``
    across days (both already in the zone to show)."""
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M}"
    return f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}"
