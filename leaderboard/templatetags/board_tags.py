from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone

from hctqa.core.wording import percent as _percent
from hctqa.core.wording import time_span as _time_span

register = template.Library()


@register.simple_tag
def time_span(start: datetime | None, end: datetime | None) -> str:
    """``2026-11-23 14:16–14:20`` (one date for one day) or ``… to 2026-11-24 09:05``."""
    if start is None or end is None:
        return ""
    return _time_span(timezone.localtime(start), timezone.localtime(end))


@register.filter
def score(value: float | None) -> str:
    """A score to three decimals, or an em dash when there is none."""
    return "—" if value is None else f"{value:.3f}"


@register.filter
def percent(value: float | None) -> str:
    """A share in percent (0–100), to one decimal; short of the whole, never 100."""
    return "0" if value is None else _percent(value)


@register.simple_tag
def interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


@register.simple_tag
def sort_param(current: str, column: str) -> str:
    """The sort value a column header links to: descending first, then toggling."""
    return column if current == f"-{column}" else f"-{column}"


@register.simple_tag
def aria_sort(current: str, column: str) -> str:
    if current == column:
        return "ascending"
    if current == f"-{column}":
        return "descending"
    return "none"


@register.filter
def bar_chart_data(rows: list[dict]) -> dict:
    """A model page's bars for the chart: each group's recall and its board's median."""
    return {
        "labels": [r["label"] for r in rows],
        "recall": [round(r["recall"], 4) if r["recall"] is not None else None for r in rows],
        "median": [round(r["median"], 4) if r.get("median") is not None else None for r in rows],
    }


@register.filter
def get(mapping: dict | None, key: str) -> object:
    return (mapping or {}).get(key)
