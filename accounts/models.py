"""What the platform keeps about a user beyond Django's own User (whose groups are the roles):
the skeleton of the username, where the account was made from, whether an admin approved it
for test-split submissions (and the requests for that approval), which emails the person
wants, the notifications shown in the menu, and the emails waiting to be sent."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone


class Account(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="account"
    )
    # The username's UTS #39 skeleton (accounts.usernames): unique, so no two accounts
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
    # Emails the person asked for on their account page (in-app notifications come anyway).
    email_on_scoring = models.BooleanField(
        default=False,
        help_text="Email when a submission or inference run is scored or fails.",
    )
    email_on_mention = models.BooleanField(
        default=False, help_text="Email when someone mentions them in a discussion."
    )
    # The address the person proved theirs by following the link sent to it, and when. Only
    # while it is still the user's address is it confirmed (``email_confirmed``): a change of
    # address, however made, leaves it unconfirmed. No email but that link goes to an address
    # not confirmed (accounts.mail.email_queue).
    email_confirmed_address = models.EmailField(blank=True, default="", editable=False)
    email_confirmed_at = models.DateTimeField(null=True, blank=True, editable=False)

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
            models.CheckConstraint(
                condition=Q(email_confirmed_address="", email_confirmed_at__isnull=True)
                | (~Q(email_confirmed_address="") & Q(email_confirmed_at__isnull=False)),
                name="accounts_account_confirmed_address_has_a_time",
            ),
        ]

    def __str__(self) -> str:
        return str(self.user)

    @property
    def test_split_approved(self) -> bool:
        return self.test_split_approved_at is not None

    @property
    def email_confirmed(self) -> bool:
        """Whether the user's current address is the one they confirmed."""
        return bool(self.email_confirmed_address) and self.email_confirmed_address == (
            self.user.email
        )


# Longest note a researcher may send with an approval request.
APPROVAL_NOTE_MAX = 500


class ApprovalRequest(models.Model):
    """A researcher asking to be approved for test-split submissions, with a short note for
    the admins. One waits at a time per person; an admin approves or declines it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="approval_requests"
    )
    note = models.CharField(max_length=APPROVAL_NOTE_MAX)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    approved = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["user"],
                condition=Q(decided_at__isnull=True),
                name="accounts_one_waiting_approval_request",
            ),
            models.CheckConstraint(
                condition=Q(decided_at__isnull=True, approved__isnull=True)
                | Q(decided_at__isnull=False, approved__isnull=False),
                name="accounts_approval_request_decided_with_outcome",
            ),
            # SQLite does not hold a CharField to its length.
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("note"), APPROVAL_NOTE_MAX),
                name="accounts_approval_request_note_short",
            ),
        ]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(decided_at__isnull=True),
                name="accounts_approval_waiting",
            )
        ]

    def __str__(self) -> str:
        return f"approval request of {self.user}"

    @property
    def waiting(self) -> bool:
        return self.decided_at is None


class Notification(models.Model):
    """One line in a person's notifications (the menu counts the unread ones): what happened,
    and where to look. Written only for someone who may open that page."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    text = models.CharField(max_length=400)
    url = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(
                fields=["recipient"],
                condition=Q(read_at__isnull=True),
                name="accounts_notification_unread",
            ),
            models.Index(fields=["recipient", "-created_at"]),
        ]

    def __str__(self) -> str:
        return f"to {self.recipient}: {self.text[:40]}"


class EmailStatus(models.TextChoices):
    WAITING = "waiting", "Waiting"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class EmailKind(models.TextChoices):
    # The link that confirms an address: the only email sent to an address not confirmed.
    CONFIRMATION = "confirmation", "Address confirmation"
    # The admins' summary of the approval requests waiting: at most one an hour per admin.
    APPROVAL_DIGEST = "approval_digest", "Approval requests digest"
    NOTICE = "notice", "Notice"


class OutgoingEmail(models.Model):
    """An email to send, written in the transaction of the change it tells of and sent by a
    task after that commits (accounts.mail)."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    to_address = models.EmailField()
    subject = models.CharField(max_length=200)
    body = models.TextField()
    status = models.CharField(
        max_length=7, choices=EmailStatus.choices, default=EmailStatus.WAITING
    )
    # What kind of email it is, for the limits that count them (confirmation links, the
    # admins' digests).
    kind = models.CharField(max_length=16, choices=EmailKind.choices, default=EmailKind.NOTICE)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # When a sender took it (sending), or when the next try is due (waiting).
    claimed_at = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=EmailStatus.values), name="accounts_email_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=EmailKind.values), name="accounts_email_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status="sent", sent_at__isnull=False)
                | (~Q(status="sent") & Q(sent_at__isnull=True)),
                name="accounts_email_sent_at_when_sent",
            ),
            # No header can be smuggled in: a subject is one line.
            models.CheckConstraint(
                condition=~Q(subject__contains="\n") & ~Q(subject__contains="\r"),
                name="accounts_email_subject_one_line",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "next_try_at"]),
            models.Index(fields=["recipient", "kind", "created_at"]),
            models.Index(fields=["kind", "to_address", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.subject} to {self.to_address} ({self.status})"
