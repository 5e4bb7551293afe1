"""Writes to users, roles, accounts, approval requests, notifications and API tokens."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from hctqa.accounts.addresses import address_group
from hctqa.accounts.mail import absolute_url, email_queue, one_line
from hctqa.accounts.models import APPROVAL_NOTE_MAX, Account, ApprovalRequest, Notification
from hctqa.accounts.roles import ADMIN, ADMIN_APPS, RESEARCHER, ROLE_PERMISSIONS, ROLES
from hctqa.accounts.selectors import admins_to_tell, can_submit_to_test_split
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
            f"approved, and {user.username} is not approved yet: ask for approval on your "
            "account page (one button). Validation and train submissions are open to you now.",
            field="split",
        )


@transaction.atomic
def account_approve_for_test_split(*, user: User, approved_by: User | None) -> Account:
    """Approve ``user`` for test-split submissions, recording who (None: a command) and when.
    Approving twice keeps the first approval. An approval by an admin answers the request
    waiting, if any, and tells the researcher (in the menu and by email)."""
    if approved_by is not None and approved_by.pk == user.pk:
        raise ApplicationError("An admin cannot approve their own account")
    account = account_sync(user=user)
    now = timezone.now()
    newly = Account.objects.filter(pk=account.pk, test_split_approved_at__isnull=True).update(
        test_split_approved_at=now, test_split_approved_by=approved_by
    )
    ApprovalRequest.objects.filter(user=user, decided_at__isnull=True).update(
        decided_at=now, decided_by=approved_by, approved=True
    )
    account.refresh_from_db()
    if newly and approved_by is not None:
        limit = settings.SUBMISSION_DAILY_TEST_LIMIT
        notify(
            recipient=user,
            text=f"{approved_by.username} approved your account for test-split submissions",
            url=reverse("leaderboard:submit"),
            email=True,
            body=(
                f"Hello {user.username},\n\n{approved_by.username} approved your account for "
                "test-split submissions. You may now submit predictions and start inference "
                "runs on the test split (and on all questions), up to "
                f"{counted(limit, 'submission')} a day."
            ),
        )
    return account


@transaction.atomic
def account_approval_withdraw(*, user: User) -> None:
    """Withdraw the approval: no new test-split submission or run. Those made already stay."""
    Account.objects.filter(user=user).update(
        test_split_approved_at=None, test_split_approved_by=None
    )


# A declined request may be made again after this long.
ASK_AGAIN_AFTER = timedelta(days=1)


@transaction.atomic
def approval_request_make(*, user: User, note: str) -> ApprovalRequest:
    """A researcher asks the admins to approve their account for test-split submissions. The
    admins are told (in the menu and by email). Asking again while a request waits returns
    that request (a double click sends nothing twice)."""
    if not user.has_perm("leaderboard.add_submission"):
        raise ApplicationError("Approval for test-split submissions is for researchers")
    if can_submit_to_test_split(user=user):
        raise ApplicationError("Your account may submit on the test split already")
    lock_user(user)
    waiting = ApprovalRequest.objects.filter(user=user, decided_at__isnull=True).first()
    if waiting is not None:
        return waiting
    note = note.strip()
    if not note:
        raise ApplicationError(
            "Say who you are and what you want to evaluate, so the admins can decide",
            field="note",
        )
    if len(note) > APPROVAL_NOTE_MAX:
        raise ApplicationError(
            f"The note is {len(note):,} characters long; keep it to {APPROVAL_NOTE_MAX}",
            field="note",
        )
    declined = (
        ApprovalRequest.objects.filter(user=user, approved=False)
        .order_by("-decided_at")
        .values_list("decided_at", flat=True)
        .first()
    )
    if declined is not None and timezone.now() - declined < ASK_AGAIN_AFTER:
        raise ApplicationError(
            "An admin declined your last request less than a day ago; ask again after "
            f"{(declined + ASK_AGAIN_AFTER):%d %B %Y, %H:%M} UTC"
        )
    request = ApprovalRequest.objects.create(user=user, note=note)
    email_address = user.email or "no email address given"
    # The menu counts the requests waiting for admins; each admin is emailed as well.
    for admin in admins_to_tell():
        email_about(
            recipient=admin,
            text=f"{user.username} asks for approval for test-split submissions",
            url=reverse("accounts:approval_requests"),
            body=(
                f"{user.username} ({email_address}) asks to be approved for test-split "
                f"submissions. Their note:\n\n{note}\n\nApprove or decline it on the "
                "approval requests page:"
            ),
        )
    return request


@transaction.atomic
def approval_request_decide(*, request_id: int, admin: User, approve: bool) -> ApprovalRequest:
    """Approve or decline a waiting request; the researcher is told either way. A request
    decided already is returned as it is."""
    if not admin.has_perm("accounts.change_account"):
        raise ApplicationError("Only admins decide approval requests")
    request = (
        ApprovalRequest.objects.select_for_update()
        .select_related("user")
        .filter(pk=request_id)
        .first()
    )
    if request is None:
        raise ApplicationError("There is no such approval request")
    if request.decided_at is not None:
        return request
    if approve:
        account_approve_for_test_split(user=request.user, approved_by=admin)
        request.refresh_from_db()
        return request
    if admin.pk == request.user_id:
        raise ApplicationError("An admin cannot decide their own request")
    request.decided_at = timezone.now()
    request.decided_by = admin
    request.approved = False
    request.save(update_fields=["decided_at", "decided_by", "approved"])
    notify(
        recipient=request.user,
        text=f"{admin.username} declined your request for test-split approval",
        url=reverse("accounts:account"),
        email=True,
        body=(
            f"Hello {request.user.username},\n\n{admin.username} declined your request to be "
            "approved for test-split submissions. Validation and train submissions stay open "
            "to you. You may ask again in a day, saying more about who you are and what you "
            "want to evaluate."
        ),
    )
    return request


def lock_user(user: Any) -> None:
    """Lock the user's row for the rest of the transaction, so that two requests by one user
    counting against a limit count one after the other (on SQLite the IMMEDIATE transaction
    serializes them anyway)."""
    User.objects.select_for_update().filter(pk=user.pk).first()


def notify(
    *, recipient: User, text: str, url: str = "", email: bool = False, body: str = ""
) -> Notification:
    """A notification for ``recipient`` (the menu counts it until read) and, with ``email``,
    an email too (``email_about``). Callers check that ``recipient`` may open ``url``."""
    text = one_line(text, 400)
    notification = Notification.objects.create(recipient=recipient, text=text, url=url)
    if email:
        email_about(recipient=recipient, text=text, url=url, body=body)
    return notification


def email_about(*, recipient: User, text: str, url: str = "", body: str = "") -> None:
    """An email about ``text``, sent after the transaction commits: ``body`` (``text`` if
    empty) with the page's link below it."""
    link = f"\n\n{absolute_url(url)}" if url else ""
    email_queue(
        recipient=recipient,
        subject=text,
        body=f"{body or text}{link}\n\n-- \nThe HCT-QA platform. Your account page says "
        f"which emails you get: {absolute_url(reverse('accounts:account'))}\n",
    )


@transaction.atomic
def notifications_mark_read(*, user: User, notification_id: int | None = None) -> int:
    """Mark one of the user's notifications read, or all of them; how many were unread."""
    unread = Notification.objects.filter(recipient=user, read_at__isnull=True)
    if notification_id is not None:
        unread = unread.filter(pk=notification_id)
    return unread.update(read_at=timezone.now())


@transaction.atomic
def email_preferences_set(*, user: User, on_scoring: bool, on_mention: bool) -> Account:
    account = account_sync(user=user)
    Account.objects.filter(pk=account.pk).update(
        email_on_scoring=on_scoring, email_on_mention=on_mention
    )
    account.refresh_from_db()
    return account


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
