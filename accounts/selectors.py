"""Reads about accounts: approval for test-split submissions and the requests for it,
notifications, and who the admins are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from accounts.models import Account, ApprovalRequest, Notification
from accounts.roles import ADMIN


def can_submit_to_test_split(*, user: Any) -> bool:
    """Whether ``user`` may have predictions scored against test gold answers: on a server
    with OPEN_TEST_SUBMISSIONS, anyone who may submit; otherwise admins (who see that gold
    anyway) and accounts an admin approved."""
    if settings.OPEN_TEST_SUBMISSIONS or user.has_perm("dataset.view_test_gold"):
        return True
    return Account.objects.filter(user=user, test_split_approved_at__isnull=False).exists()


def account_of(*, user: Any) -> Account | None:
    # The user too: Account.email_confirmed reads its address.
    return (
        Account.objects.select_related("user", "test_split_approved_by").filter(user=user).first()
    )


def approval_request_latest(*, user: Any) -> ApprovalRequest | None:
    """The user's newest approval request (waiting, approved or declined), if any."""
    return ApprovalRequest.objects.filter(user=user).order_by("-created_at", "-pk").first()


def approval_requests_waiting(*, limit: int = 100) -> list[ApprovalRequest]:
    """Requests waiting for an admin, oldest first, with each researcher's account (whether
    their address is confirmed)."""
    return list(
        ApprovalRequest.objects.filter(decided_at__isnull=True)
        .select_related("user__account")
        .order_by("created_at", "pk")[:limit]
    )


def approval_requests_waiting_count() -> int:
    return ApprovalRequest.objects.filter(decided_at__isnull=True).count()


def approval_requests_decided(*, limit: int = 20) -> list[ApprovalRequest]:
    return list(
        ApprovalRequest.objects.filter(decided_at__isnull=False)
        .select_related("user", "decided_by")
        .order_by("-decided_at", "-pk")[:limit]
    )


def may_decide_approval_requests(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm("accounts.change_account"))


def admins_to_tell() -> QuerySet[Any]:
    """Who is told of a new approval request: active accounts with the admin role (or
    superusers)."""
    return (
        get_user_model()
        .objects.filter(Q(groups__name=ADMIN) | Q(is_superuser=True), is_active=True)
        .distinct()
        .order_by("pk")
    )


# Checks that other apps add when they load (their AppConfig.ready): given a person and some
# of their notifications, the ids of those about a page they may no longer open, whose text
# (an excerpt of a comment, say) is then not shown. One query each, whatever the number.
NOTIFICATION_CHECKS: list[Callable[[Any, list[Notification]], set[int]]] = []


def notifications_of(*, user: Any, limit: int = 50) -> list[Notification]:
    """The person's latest notifications, each with ``withdrawn``: true when its page is no
    longer open to them (a question's thread that became admins'), its text then unshown."""
    items = list(Notification.objects.filter(recipient=user)[:limit])
    withdrawn: set[int] = set()
    for check in NOTIFICATION_CHECKS:
        withdrawn |= check(user, items)
    for item in items:
        item.withdrawn = item.pk in withdrawn  # type: ignore[attr-defined]
    return items


def notifications_unread_count(*, user: Any) -> int:
    return Notification.objects.filter(recipient=user, read_at__isnull=True).count()
