"""The flag form's memory of a flag the server refused."""

from __future__ import annotations

from django import template

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
