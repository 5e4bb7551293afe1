"""The link to a table's discussion, for the pages of the apps below this one (the table page,
the annotation tools), which show it without importing this app."""

from __future__ import annotations

from typing import Any

from django import template

from discussion.selectors import can_discuss, comment_counts

register = template.Library()


@register.inclusion_tag("discussion/partials/_table_link.html", takes_context=True)
def discussion_link(context: template.Context, table: Any) -> dict[str, Any]:
    """ "Discussion: 3 comments on the table, 2 on its questions", for those who may read it;
    nothing for anyone else. One query."""
    viewer = context["request"].user
    if not can_discuss(viewer):
        return {"shown": False}
    own, on_questions = comment_counts(table=table, viewer=viewer)
    return {"shown": True, "table": table, "own": own, "on_questions": on_questions}
