"""Writes to users, roles, accounts, approval requests, notifications and API tokens."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.core import signing
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.mail import absolute_url, email_queue, one_line
from accounts.models import (
    APPROVAL_NOTE_MAX,
    Account,
    ApprovalRequest,
    EmailKind,
    Notification,
    OutgoingEmail,
)
from accounts.roles import ADMIN, ADMIN_APPS, RESEARCHER, ROLE_PERMISSIONS, ROLES
from accounts.selectors import admins_to_tell, can_submit_to_test_split
from accounts.usernames import username_skeleton
from hctqa.core.wording import counted
from plumbing.client_addresses import address_group
from plumbing.errors import ApplicationError

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
    whenever a user is saved with a new name or address, however it was made (sign-up, the
    admin, createsuperuser, the demo); a new address loses the old one's confirmation. A
    name confusable with an older account's keeps no skeleton: the older account holds it,
    and sign-up refuses such names before they get here."""
    account, _ = Account.objects.get_or_create(user=user)
    if account.email_confirmed_address and account.email_confirmed_address != user.email:
        # A new address is unconfirmed until its owner follows the link sent to it.
        Account.objects.filter(pk=account.pk).update(
            email_confirmed_address="", email_confirmed_at=None
        )
        account.email_confirmed_address, account.email_confirmed_at = "", None
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
    try:
        email_confirmation_send(user=user)
    except ApplicationError as exc:
        # The address had its links for the day; the account page offers one later.
        logger.info("no confirmation link for new account %s: %s", user.pk, exc.message)
    return user


# How long a confirmation link works, how long to wait before asking for another, and how many
# are sent a day to one account and to one address (whichever accounts ask): few enough that
# sign-ups cannot turn the links into a flood at someone else's address.
CONFIRMATION_MAX_AGE = timedelta(days=3)
CONFIRMATION_RESEND_WAIT = timedelta(minutes=10)
CONFIRMATIONS_PER_DAY_PER_ACCOUNT = 4
CONFIRMATIONS_PER_DAY_PER_ADDRESS = 5
_CONFIRMATION_SALT = "accounts.email-confirmation"


def _address_digest(address: str) -> str:
    # The link names the address by its hash, so that it does not sit in server logs.
    return hashlib.sha256(address.encode()).hexdigest()[:32]


def email_confirmation_token(*, user: User) -> str:
    """A signed, timestamped token binding the user and their current address: it stops
    working after CONFIRMATION_MAX_AGE or once the address changes."""
    return signing.dumps(
        {"u": user.pk, "a": _address_digest(user.email)}, salt=_CONFIRMATION_SALT, compress=False
    )


def email_confirmation_sent_last(*, user: Any) -> datetime | None:
    """When the newest confirmation link went to the user's current address."""
    return OutgoingEmail.objects.filter(
        recipient=user, kind=EmailKind.CONFIRMATION, to_address=user.email.strip()
    ).aggregate(last=Max("created_at"))["last"]


@transaction.atomic
def email_confirmation_send(*, user: User) -> OutgoingEmail:
    """Send the link that confirms the user's address: at sign-up, and again when they ask,
    at most one per CONFIRMATION_RESEND_WAIT and a few a day per account and per address.
    Its text is the platform's own: nothing the account's owner typed is in it."""
    lock_user(user)
    user.refresh_from_db(fields=["email"])
    account = account_sync(user=user)
    address = user.email.strip()
    if not address:
        raise ApplicationError("Your account has no email address: ask an admin to add one")
    if account.email_confirmed:
        raise ApplicationError(f"Your address {address} is confirmed already")
    now = timezone.now()
    day = now - timedelta(days=1)
    sent = OutgoingEmail.objects.filter(kind=EmailKind.CONFIRMATION, created_at__gte=day)
    mine = list(sent.filter(recipient=user).order_by("-created_at").values_list("created_at"))
    if mine and now - mine[0][0] < CONFIRMATION_RESEND_WAIT:
        wait = mine[0][0] + CONFIRMATION_RESEND_WAIT
        raise ApplicationError(
            f"A link went to {address} at {mine[0][0]:%H:%M} UTC; look for it (and in your spam "
            f"folder), or ask for another after {wait:%H:%M} UTC"
        )
    if len(mine) >= CONFIRMATIONS_PER_DAY_PER_ACCOUNT or (
        sent.filter(to_address__iexact=address).count() >= CONFIRMATIONS_PER_DAY_PER_ADDRESS
    ):
        raise ApplicationError(
            f"The address {address} was sent as many confirmation links as a day allows; ask again "
            "tomorrow, or ask the platform's admins"
        )
    link = absolute_url(
        reverse("accounts:email_confirm", args=[email_confirmation_token(user=user)])
    )
    days = CONFIRMATION_MAX_AGE.days
    email = email_queue(
        recipient=user,
        kind=EmailKind.CONFIRMATION,
        subject="Confirm your email address",
        body=(
            f"Someone gave this address for an account on the HCT-QA platform "
            f"({settings.SITE_URL}). If it was you, log in and confirm it here within "
            f"{counted(days, 'day')}:\n\n{link}\n\nIf it was not you, ignore this email: "
            "no other email goes to this address unless its owner confirms it.\n\n-- \n"
            "The HCT-QA platform\n"
        ),
    )
    if email is None:
        raise ApplicationError(f"The address {address} is not one an email can go to")
    return email


def _mark_confirmed(account: Account, address: str) -> None:
    Account.objects.filter(pk=account.pk).update(
        email_confirmed_address=address, email_confirmed_at=timezone.now()
    )
    account.refresh_from_db()


def email_confirmation_check(*, user: User, token: str) -> Account:
    """The user's account when ``token`` confirms their current address; refused, saying
    why, when it is altered, expired, for another account or for an address the account no
    longer has."""
    try:
        data = signing.loads(
            token, salt=_CONFIRMATION_SALT, max_age=CONFIRMATION_MAX_AGE.total_seconds()
        )
    except signing.SignatureExpired as exc:
        days = counted(CONFIRMATION_MAX_AGE.days, "day")
        raise ApplicationError(
            f"This link has expired (a link works for {days}): ask for a new one on your "
            "account page"
        ) from exc
    except signing.BadSignature as exc:
        raise ApplicationError(
            "This link is not valid: it may have been cut short or altered. Copy the whole "
            "link from the email, or ask for a new one on your account page"
        ) from exc
    if not isinstance(data, dict) or data.get("u") != user.pk:
        raise ApplicationError(
            f"This link is for another account, not {user.username}: log in as the account "
            "that asked for it"
        )
    user.refresh_from_db(fields=["email"])
    if not user.email or data.get("a") != _address_digest(user.email):
        raise ApplicationError(
            "This link is for an address your account no longer has; ask for a new one on "
            "your account page"
        )
    return account_sync(user=user)


@transaction.atomic
def email_confirm(*, user: User, token: str) -> Account:
    """Confirm the user's address with the link's token (``email_confirmation_check``).
    Following a link for the address confirmed already changes nothing."""
    lock_user(user)
    account = email_confirmation_check(user=user, token=token)
    if not account.email_confirmed:
        _mark_confirmed(account, user.email)
    return account


def email_address_trust(*, user: User) -> Account:
    """Count the user's current address as confirmed without a link: for addresses the
    platform's operators typed themselves (the demo accounts)."""
    account = account_sync(user=user)
    if user.email and not account.email_confirmed:
        _mark_confirmed(account, user.email)
    return account


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
    """A researcher with a confirmed address asks the admins to approve their account for
    test-split submissions. The admins are told (in the menu, and by the digest email).
    Asking again while a request waits returns
    that request (a double click sends nothing twice)."""
    if not user.has_perm("leaderboard.add_submission"):
        raise ApplicationError("Approval for test-split submissions is for researchers")
    if can_submit_to_test_split(user=user):
        raise ApplicationError("Your account may submit on the test split already")
    lock_user(user)
    user.refresh_from_db(fields=["email"])
    if not account_sync(user=user).email_confirmed:
        raise ApplicationError(
            "Confirm your email address first: the admins decide on an address you have "
            "shown is yours. Follow the link we sent to it, or send it again from your "
            "account page"
        )
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
            f"The note is {counted(len(note), 'character')} long; keep it to {APPROVAL_NOTE_MAX}",
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
    # The menu counts the requests waiting for admins; emails are a digest, capped.
    approval_digests_queue()
    return request


# An admin gets at most one digest of the waiting approval requests in this time, and none
# when no request came since the last one.
APPROVAL_DIGEST_EVERY = timedelta(hours=1)
APPROVAL_DIGEST_LISTS = 30


def confirmed_label(account: Account | None) -> str:
    """How an address stands, for the admins: "confirmed <date>" or "not confirmed"."""
    if account is not None and account.email_confirmed and account.email_confirmed_at:
        return f"confirmed {account.email_confirmed_at:%d %B %Y}"
    return "not confirmed"


def _digest_body(waiting: list[ApprovalRequest], total: int) -> str:
    # The verb and pronoun agree with the count: "1 approval request … waits; decline it".
    verb, them = ("waits", "it") if total == 1 else ("wait", "them")
    parts = [f"{counted(total, 'approval request')} for test-split submissions {verb} for you:"]
    for item in waiting:
        user = item.user
        address = user.email or "no email address"
        state = confirmed_label(getattr(user, "account", None))
        parts.append(
            f"* {user.username} · {address} ({state}) · asked {item.created_at:%d %B %Y, %H:%M} "
            f"UTC. Their note:\n{item.note}"
        )
    if total > len(waiting):
        parts.append(f"… and {total - len(waiting)} more.")
    parts.append(
        f"Approve or decline {them} here:\n{absolute_url(reverse('accounts:approval_requests'))}"
    )
    return "\n\n".join(parts)


@transaction.atomic
def approval_digests_queue() -> int:
    """Email each admin a digest of the waiting approval requests when a request came since
    their last digest and that one is APPROVAL_DIGEST_EVERY old: however many accounts ask,
    an admin gets at most one such email an hour. Run when a request is made and by beat;
    returns how many digests were queued."""
    waiting_requests = ApprovalRequest.objects.filter(decided_at__isnull=True)
    newest = waiting_requests.aggregate(newest=Max("created_at"))["newest"]
    if newest is None:
        return 0
    now = timezone.now()
    admins = list(admins_to_tell())
    last_digests = dict(
        OutgoingEmail.objects.filter(kind=EmailKind.APPROVAL_DIGEST, recipient__in=admins)
        .values("recipient")
        .annotate(last=Max("created_at"))
        .values_list("recipient", "last")
    )
    due = [
        admin
        for admin in admins
        if (last := last_digests.get(admin.pk)) is None
        or (newest > last and now - last >= APPROVAL_DIGEST_EVERY)
    ]
    if not due:
        return 0
    total = waiting_requests.count()
    listed = list(
        waiting_requests.select_related("user__account").order_by("created_at", "pk")[
            :APPROVAL_DIGEST_LISTS
        ]
    )
    body = _digest_body(listed, total)
    queued = 0
    for admin in due:
        lock_user(admin)  # two digests at once count one after the other
        latest = OutgoingEmail.objects.filter(
            kind=EmailKind.APPROVAL_DIGEST, recipient=admin
        ).aggregate(last=Max("created_at"))["last"]
        if latest != last_digests.get(admin.pk):
            continue
        email = email_queue(
            recipient=admin,
            kind=EmailKind.APPROVAL_DIGEST,
            subject=f"{counted(total, 'approval request')} waiting",
            body=f"Hello {admin.username},\n\n{body}\n\n-- \nThe HCT-QA platform\n",
        )
        queued += email is not None
    return queued


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
# A demo researcher who has asked for test-split approval: the admin's side of approving.
DEMO_APPLICANT = "newcomer"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    role: str
    state: str = ""  # where the account stands, for the start banner

    def line(self) -> str:
        about = f"{self.role}; {self.state}" if self.state else self.role
        return f"{self.username} / {self.password}  ({about})"


def _demo_user(username: str, role: str) -> tuple[User, bool]:
    password = f"{username}{DEMO_PASSWORD_SUFFIX}"
    user, made = User.objects.get_or_create(username=username)
    if made or not user.check_password(password):
        user.set_password(password)
        user.save()
    if not user.email:
        # An address the demo owns (RFC 2606), confirmed: the demo's emails reach the
        # worker's log, as every email does without EMAIL_HOST.
        user.email = f"{username}@example.org"
        user.save(update_fields=["email"])
    email_address_trust(user=user)
    if role == ADMIN:
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
    user_role_add(user=user, role=role)
    return user, made


def _test_split_state(user: User) -> str:
    if can_submit_to_test_split(user=user):
        return "approved for test-split submissions"
    if ApprovalRequest.objects.filter(user=user, decided_at__isnull=True).exists():
        return (
            "asked for test-split approval and waits: log in as admin to approve or "
            "decline it under Approval requests"
        )
    return "not approved for test-split submissions: ask on the account page"


@transaction.atomic
def demo_users_ensure() -> list[DemoLogin]:
    """One demo account per role, and ``DEMO_APPLICANT``, a researcher waiting for test-split
    approval. Only the demo loader calls this; the passwords are printed by the run command,
    so never use them in production. An account made before is left as it stands (an
    applicant an admin approved stays approved)."""
    roles_ensure()
    users = {role: _demo_user(role, role)[0] for role in ROLES}
    # The demo researcher shows every kind of submission, the test split's too.
    account_approve_for_test_split(user=users[RESEARCHER], approved_by=users[ADMIN])
    applicant, made = _demo_user(DEMO_APPLICANT, RESEARCHER)
    if made:
        approval_request_make(
            user=applicant,
            note="A demo researcher who wants to evaluate a model on the test split.",
        )

    def login(username: str, role: str, user: User) -> DemoLogin:
        state = _test_split_state(user) if role == RESEARCHER else ""
        return DemoLogin(username, f"{username}{DEMO_PASSWORD_SUFFIX}", role, state)

    return [
        *(login(role, role, user) for role, user in users.items()),
        login(DEMO_APPLICANT, RESEARCHER, applicant),
    ]
