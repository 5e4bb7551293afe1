"""Who may read and write the dataset's discussions (``plumbing.permissions``)."""

from __future__ import annotations

from plumbing.permissions import Rule

DISCUSSING = Rule(
    "Discussions are for annotators, adjudicators and admins",
    ("discussion.view_comment",),
    hint="They are where the dataset's makers talk about its tables and questions.",
)
