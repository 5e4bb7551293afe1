"""Template filters for showing tables and questions: their properties as people read them."""

from __future__ import annotations

from collections.abc import Mapping

from django import template

from hctqa.core import taxonomy

register = template.Library()


@register.filter
def query_summary(values: Mapping[str, object]) -> list[tuple[str, list[str]]]:
    """Set query properties as (property, [details])."""
    return taxonomy.summary(taxonomy.QUERY_PROPERTIES, values or {})


@register.filter
def table_property_names(codes: list[str]) -> str:
    """Table property codes (a synthetic run's) as people read them, comma-separated."""
    return ", ".join(taxonomy.TABLE_PROPERTIES.full_label(code) for code in codes or [])


@register.filter
def table_property_labels(values: Mapping[str, object]) -> list[str]:
    """Labels of the set top-level table properties, for a compact list row."""
    return [
        p.label for p in taxonomy.TABLE_PROPERTIES.roots() if (values or {}).get(p.code) is True
    ]
