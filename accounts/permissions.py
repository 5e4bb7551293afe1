"""Who may decide researchers' approval requests (``plumbing.permissions``)."""

from __future__ import annotations

from plumbing.permissions import Rule

DECIDING_APPROVALS = Rule(
    "Approval requests are decided by admins",
    ("accounts.change_account",),
    hint="Researchers ask for approval on their account page.",
)
