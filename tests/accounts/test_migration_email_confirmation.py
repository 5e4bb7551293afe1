"""The upgrade that brings email confirmation: addresses an admin, a command or the demo typed
in, and those of staff and admins, count as confirmed; an address given at self-service
sign-up waits for its owner to follow a link."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("accounts", "0003_approval_requests_notifications_and_emails")]


def test_only_addresses_not_given_at_sign_up_count_as_confirmed() -> None:
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    Account = old.get_model("accounts", "Account")
    Group = old.get_model("auth", "Group")
    made = {
        # username: (signed up from, is_staff, in the admin group, address)
        "signed_up": ("192.0.2.1", False, False, "prof@mit.example.edu"),
        "signed_up_admin": ("192.0.2.2", False, True, "boss@example.org"),
        "signed_up_staff": ("192.0.2.3", True, False, "staff@example.org"),
        "by_an_admin": ("", False, False, "ann@example.org"),
        "no_address": ("", False, False, ""),
    }
    admins, _ = Group.objects.get_or_create(name="admin")
    for k, (name, (origin, staff, admin, address)) in enumerate(made.items()):
        user = User.objects.create(username=name, email=address, is_staff=staff)
        Account.objects.create(user_id=user.pk, username_skeleton=f"s{k}", signed_up_from=origin)
        if admin:
            user.groups.add(admins)

    new = migrate(latest())
    confirmed = dict(
        new.get_model("accounts", "Account").objects.values_list(
            "user__username", "email_confirmed_address"
        )
    )
    assert confirmed == {
        "signed_up": "",
        "signed_up_admin": "boss@example.org",
        "signed_up_staff": "staff@example.org",
        "by_an_admin": "ann@example.org",
        "no_address": "",
    }
