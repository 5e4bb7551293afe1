"""The menu's counts: unread notifications, and approval requests waiting (for admins). Each
is counted only when a page shows the menu, once per page (base.html reads it in a
``with``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts import selectors


def menu_counts(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def waiting() -> int:
        if not selectors.may_decide_approval_requests(user):
            return 0
        return selectors.approval_requests_waiting_count()

    return {
        "unread_notifications": lambda: selectors.notifications_unread_count(user=user),
        "approval_requests_waiting": waiting,
    }
