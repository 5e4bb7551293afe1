"""The upgrade to skeletons without combining marks (issue 23, item 6): every account's is
taken again; of two older users whose names now look alike, the first keeps it."""

from __future__ import annotations

import pytest

from accounts.usernames import username_skeleton
from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("accounts", "0001_username_skeletons_and_test_split_approval")]


def test_skeletons_are_taken_again_and_the_older_look_alike_keeps_its_own() -> None:
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    Account = old.get_model("accounts", "Account")
    names = ("researcher", "researcheŕ", "ada")
    users = [User.objects.create(username=name) for name in names]
    # As 0001 kept them: the marked name had a skeleton of its own.
    for user, skeleton in zip(users, ("researcher", "researcher\u0301", "ada"), strict=True):
        Account.objects.create(user_id=user.pk, username_skeleton=skeleton)

    new = migrate(latest())
    kept = dict(
        new.get_model("accounts", "Account").objects.values_list(
            "user__username", "username_skeleton"
        )
    )
    assert kept == {"researcher": username_skeleton("researcher"), "researcheŕ": None, "ada": "ada"}
