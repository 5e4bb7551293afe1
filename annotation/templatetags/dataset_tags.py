from __future__ import annotations

from collections.abc import Mapping

from django import template

from hctqa.core import taxonomy

register = template.Library()

# The session key of a flag the server refused (flag_new), for the form to come back as sent.
REFUSED_FLAG = "refused_flag"


@register.simple_tag(takes_context=True)
def refused_flag(context: template.Context, table_id: str) -> dict | None:
    """The flag on this table that was just refused, once: the form opens with it."""
    request = context.get("request")
    if request is None or not hasattr(request, "session"):
        return None
    refused = request.session.get(REFUSED_FLAG)
    if not refused or refused.get("table") != table_id:
        return None
    del request.session[REFUSED_FLAG]
    return refused


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
