"""Reads about accounts: approval for test-split submissions and the requests for it,
notifications, and who the admins are."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from hctqa.accounts.models import Account, ApprovalRequest, Notification
from hctqa.accounts.roles import ADMIN


def can_submit_to_test_split(*, user: Any) -> bool:
    """Whether ``user`` may have predictions scored against test gold answers: on a server
    with OPEN_TEST_SUBMISSIONS, anyone who may submit; otherwise admins (who see that gold
    anyway) and accounts an admin approved."""
    if settings.OPEN_TEST_SUBMISSIONS or user.has_perm("annotation.view_test_gold"):
        return True
    return Account.objects.filter(user=user, test_split_approved_at__isnull=False).exists()


def account_of(*, user: Any) -> Account | None:
    return Account.objects.select_related("test_split_approved_by").filter(user=user).first()


def approval_request_latest(*, user: Any) -> ApprovalRequest | None:
    """The user's newest approval request (waiting, approved or declined), if any."""
    return ApprovalRequest.objects.filter(user=user).order_by("-created_at", "-pk").first()


def approval_requests_waiting(*, limit: int = 100) -> list[ApprovalRequest]:
    """Requests waiting for an admin, oldest first, with each researcher's account."""
    return list(
        ApprovalRequest.objects.filter(decided_at__isnull=True)
        .select_related("user")
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


def notifications_of(*, user: Any, limit: int = 50) -> list[Notification]:
    return list(Notification.objects.filter(recipient=user)[:limit])


def notifications_unread_count(*, user: Any) -> int:
    return Notification.objects.filter(recipient=user, read_at__isnull=True).count()
