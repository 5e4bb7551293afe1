from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def score(value: float | None) -> str:
    """A score to three decimals, or an em dash when there is none."""
    return "—" if value is None else f"{value:.3f}"


@register.filter
def percent(value: float | None) -> str:
    """A share in percent (0–100), to one decimal."""
    return "0" if value is None else f"{max(0.0, min(1.0, value)) * 100:.1f}"


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
def get(mapping: dict | None, key: str) -> object:
    return (mapping or {}).get(key)
