"""Small helpers for the platform's sentences: counts with the right noun form, shares in
percent that never say 100% before the last one, and time spans that say a date once."""

from __future__ import annotations

from datetime import datetime


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 question``, ``2 questions``, ``10,065 questions``; ``plural`` for irregular nouns
    (``counted(2, "entry", "entries")``)."""
    word = singular if n == 1 else (plural or f"{singular}s")
    return f"{n:,} {word}"


def percent(share: float | None, decimals: int = 1) -> str:
    """A share (0–1) in percent, to ``decimals`` places: ``0.5`` → ``50.0``. Short of the
    whole it never reads 100 (9,834 of 9,835 is ``99.9``, not ``100.0``): rounded up, a
    missing answer would disappear."""
    if share is None:
        return f"{0:.{decimals}f}"
    share = max(0.0, min(1.0, share))
    text = f"{share * 100:.{decimals}f}"
    if share < 1 and float(text) >= 100:
        text = f"{100 - 10**-decimals:.{decimals}f}"
    return text


def whole_percent(done: int, total: int) -> int:
    """``done`` of ``total`` in whole percent, rounded down: 100 only when all are done."""
    return min(100, 100 * done // total) if total > 0 else 0


def time_span(start: datetime, end: datetime) -> str:
    """``2026-11-23 14:16–14:20`` on one day, ``2026-11-23 14:16 to 2026-11-24 09:05``
    across days (both already in the zone to show)."""
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M}"
    return f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}"
