"""Writes to users, roles, accounts and API tokens."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from rest_framework.authtoken.models import Token

from hctqa.accounts.addresses import address_group
from hctqa.accounts.models import Account
from hctqa.accounts.roles import ADMIN, ADMIN_APPS, RESEARCHER, ROLE_PERMISSIONS, ROLES
from hctqa.accounts.selectors import can_submit_to_test_split
from hctqa.accounts.usernames import username_skeleton
from hctqa.core.wording import counted
from hctqa.errors import ApplicationError

logger = logging.getLogger(__name__)

SIGN_UP_WINDOW = timedelta(hours=1)
USERNAME_TAKEN = "that username is taken, or looks too much like one that is"


def _permissions(names: tuple[str, ...]) -> list[Permission]:
    wanted = [tuple(name.split(".", 1)) for name in names]
    query = Q(pk__in=[])
    for app_label, codename in wanted:
        query |= Q(content_type__app_label=app_label, codename=codename)
    found = list(Permission.objects.filter(query))
    if len(found) != len(wanted):
        have = {f"{p.content_type.app_label}.{p.codename}" for p in found}
        missing = sorted(set(names) - have)
        raise ApplicationError(f"Permissions not found (run migrate first): {', '.join(missing)}")
    return found


@transaction.atomic
def roles_ensure() -> None:
    """Create the role groups and give each its permissions. Safe to run any number of times."""
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        permissions = _permissions(ROLE_PERMISSIONS[role])
        if role == ADMIN:
            permissions += list(Permission.objects.filter(content_type__app_label__in=ADMIN_APPS))
        group.permissions.set(permissions)


@transaction.atomic
def user_role_add(*, user: User, role: str) -> None:
    if role not in ROLES:
        raise ApplicationError(f"Unknown role {role!r}; roles are {', '.join(ROLES)}")
    user.groups.add(Group.objects.get(name=role))
    if role == ADMIN and not user.is_staff:
        # Admins use the Django admin, which requires is_staff.
        user.is_staff = True
        user.save(update_fields=["is_staff"])


def account_sync(*, user: User) -> Account:
    """Create or update the user's account row with the skeleton of their username. Runs
    whenever a user is saved with a new name, however it was made (sign-up, the admin,
    createsuperuser, the demo). A name confusable with an older account's keeps no skeleton:
    the older account holds it, and sign-up refuses such names before they get here."""
    account, _ = Account.objects.get_or_create(user=user)
    skeleton = username_skeleton(user.username)
    if account.username_skeleton == skeleton:
        return account
    try:
        with transaction.atomic():
            Account.objects.filter(pk=account.pk).update(username_skeleton=skeleton)
        account.username_skeleton = skeleton
    except IntegrityError:
        logger.warning("username %r is confusable with an older account's", user.username)
        Account.objects.filter(pk=account.pk).update(username_skeleton=None)
        account.username_skeleton = None
    return account


def _lock_sign_ups_from(group: str) -> None:
    """Serialise sign-ups from one address so that concurrent ones count one after the other.
    SQLite's IMMEDIATE transactions do so already; PostgreSQL takes a transaction-scoped
    advisory lock on the address."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ["sign-up:" + group])


def _check_sign_up_limit(group: str) -> None:
    limit = settings.SIGN_UP_LIMIT_PER_HOUR
    if limit <= 0:
        return
    recent = Account.objects.filter(
        signed_up_from=group, created_at__gte=timezone.now() - SIGN_UP_WINDOW
    ).count()
    if recent >= limit:
        raise ApplicationError(
            f"Your address made {counted(limit, 'account')} in the last hour, the most it allows; "
            "try again in an hour, or ask the platform's admins for an account"
        )


@transaction.atomic
def researcher_sign_up(*, username: str, email: str, password: str, address: str) -> User:
    """A self-service account with the researcher role. At most SIGN_UP_LIMIT_PER_HOUR per
    address (an IPv6 /64) an hour; a username confusable with an existing one (after
    Unicode normalisation and without case) is refused."""
    group = address_group(address)
    _lock_sign_ups_from(group)
    _check_sign_up_limit(group)
    skeleton = username_skeleton(username)
    if Account.objects.filter(username_skeleton=skeleton).exists():
        raise ApplicationError(USERNAME_TAKEN, field="username")
    user = User.objects.create_user(username=username, email=email, password=password)
    # Saving the user made its account (account_sync); a concurrent sign-up of a confusable
    # name that committed first left it without the skeleton.
    if not Account.objects.filter(user=user, username_skeleton=skeleton).update(
        signed_up_from=group
    ):
        raise ApplicationError(USERNAME_TAKEN, field="username")
    user_role_add(user=user, role=RESEARCHER)
    return user


def account_check_test_split_access(*, user: Any) -> None:
    """Refuse, with what to do, a user who may not have predictions scored against test gold
    answers (split test or all)."""
    if not can_submit_to_test_split(user=user):
        raise ApplicationError(
            "Test-split submissions (split test or all) are open to accounts an admin has "
            f"approved, and {user.username} is not approved yet: ask the platform's admins to "
            "approve it (your account page says how). Validation and train submissions are "
            "open to you now.",
            field="split",
        )


@transaction.atomic
def account_approve_for_test_split(*, user: User, approved_by: User | None) -> Account:
    """Approve ``user`` for test-split submissions, recording who (None: a command) and when.
    Approving twice keeps the first approval."""
    if approved_by is not None and approved_by.pk == user.pk:
        raise ApplicationError("An admin cannot approve their own account")
    account = account_sync(user=user)
    Account.objects.filter(pk=account.pk, test_split_approved_at__isnull=True).update(
        test_split_approved_at=timezone.now(), test_split_approved_by=approved_by
    )
    account.refresh_from_db()
    return account


@transaction.atomic
def account_approval_withdraw(*, user: User) -> None:
    """Withdraw the approval: no new test-split submission or run. Those made already stay."""
    Account.objects.filter(user=user).update(
        test_split_approved_at=None, test_split_approved_by=None
    )


@transaction.atomic
def api_token_rotate(*, user: User) -> Token:
    """Replace the user's API token with a new one; the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


# Demo accounts only; load_demo prints these passwords on purpose.
DEMO_PASSWORD_SUFFIX = "-demo-pass"  # noqa: S105


@transaction.atomic
def demo_users_ensure() -> list[tuple[str, str, str]]:
    """One demo account per role, as (username, password, role). Only the demo loader calls
    this; the passwords are printed by the run command, so never use them in production."""
    roles_ensure()
    created = []
    for role in ROLES:
        username, password = role, f"{role}{DEMO_PASSWORD_SUFFIX}"
        user, made = User.objects.get_or_create(username=username)
        if made or not user.check_password(password):
            user.set_password(password)
            user.save()
        if role == ADMIN:
            user.is_superuser = True
            user.save(update_fields=["is_superuser"])
        user_role_add(user=user, role=role)
        created.append((username, password, role))
    # The demo researcher shows every kind of submission, the test split's too.
    account_approve_for_test_split(
        user=User.objects.get(username=RESEARCHER), approved_by=User.objects.get(username=ADMIN)
    )
    return created
