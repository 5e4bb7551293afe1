"""What the platform keeps about a user beyond Django's own User (whose groups are the roles):
the skeleton of the username, where the account was made from, and whether an admin approved
it for test-split submissions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


class Account(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="account"
    )
    # The username's UTS #39 skeleton (hctqa.accounts.usernames): unique, so no two accounts
    # have confusable names. Empty (NULL) only for an account created outside sign-up whose
    # name was confusable with an older one's; that one still holds the skeleton.
    username_skeleton = models.CharField(max_length=600, unique=True, null=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # The address (an IPv4 address, an IPv6 /64) a self-service sign-up came from, for the
    # per-address sign-up limit; empty for accounts made by admins, commands and the demo.
    signed_up_from = models.CharField(max_length=64, blank=True, default="", editable=False)
    # Test-split submissions (scored against the held-out gold answers) need an admin's
    # approval unless OPEN_TEST_SUBMISSIONS is on.
    test_split_approved_at = models.DateTimeField(null=True, blank=True)
    test_split_approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The admin who approved it (empty once that account is deleted, or when a "
        "command approved it).",
    )

    class Meta:
        indexes = [models.Index(fields=["signed_up_from", "created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(test_split_approved_by__isnull=True)
                | Q(test_split_approved_at__isnull=False),
                name="accounts_account_approver_has_a_time",
            ),
            models.CheckConstraint(
                condition=~Q(test_split_approved_by=F("user")),
                name="accounts_account_no_self_approval",
            ),
        ]

    def __str__(self) -> str:
        return str(self.user)

    @property
    def test_split_approved(self) -> bool:
        return self.test_split_approved_at is not None
