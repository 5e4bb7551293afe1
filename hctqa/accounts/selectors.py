"""Reads about accounts: approval for test-split submissions."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from hctqa.accounts.models import Account


def can_submit_to_test_split(*, user: Any) -> bool:
    """Whether ``user`` may have predictions scored against test gold answers: on a server
    with OPEN_TEST_SUBMISSIONS, anyone who may submit; otherwise admins (who see that gold
    anyway) and accounts an admin approved."""
    if settings.OPEN_TEST_SUBMISSIONS or user.has_perm("annotation.view_test_gold"):
        return True
    return Account.objects.filter(user=user, test_split_approved_at__isnull=False).exists()


def account_of(*, user: Any) -> Account | None:
    return Account.objects.select_related("test_split_approved_by").filter(user=user).first()
