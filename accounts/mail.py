"""Emails, queued in the database with the change they tell of and sent by a task once that
change is committed.

``email_queue`` writes an ``OutgoingEmail`` in the caller's transaction and, on commit, asks
the ``send_email`` task (on the "default" queue) to send it. The task claims the row, sends it
through Django's email framework (``EMAIL_BACKEND``: the console unless ``EMAIL_HOST`` is set)
and records what happened. A failure is retried later, waiting longer each time, up to
``EMAIL_MAX_ATTEMPTS`` tries. Beat's ``send_waiting_emails`` sends what is due and takes back
a message whose worker died mid-send, so neither a task message lost by the broker nor a broker
down at commit time loses an email. Delivery is at least once: a worker killed after the mail
server took a message, before its row was updated, sends that message again.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import EmailKind, EmailStatus, OutgoingEmail
from hctqa.core.wording import counted

logger = logging.getLogger(__name__)

SUBJECT_PREFIX = "[HCT-QA] "
SUBJECT_MAX = 150
BODY_MAX = 20_000
# Control characters but tab and newline; in a subject, every line break and tab as well.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_SPACES = re.compile(r"\s+")
# The first retry waits this long, then twice as long each time, up to the cap.
RETRY_FIRST = timedelta(minutes=1)
RETRY_CAP = timedelta(hours=1)
# A message is left to its own task this long before the sweeper queues it again.
SWEEP_GRACE = timedelta(minutes=1)


class EmailDeferred(Exception):
    """Sending failed and will be tried again: the task retries on it."""


def one_line(text: str, limit: int) -> str:
    """``text`` as a single line of at most ``limit`` characters: names and notes put into a
    subject cannot start a header of their own."""
    flat = _SPACES.sub(" ", _CONTROL.sub(" ", text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def absolute_url(path: str) -> str:
    """A page of the platform as a link to put in an email (SITE_URL before it)."""
    return settings.SITE_URL + path if path.startswith("/") else path


def _address_of(recipient: Any, kind: str) -> str:
    """The recipient's address as the database has it now; for any email but the link that
    confirms it, only an address its owner confirmed (empty otherwise)."""
    users = get_user_model().objects.filter(pk=getattr(recipient, "pk", None))
    if kind != EmailKind.CONFIRMATION:
        users = users.filter(
            account__email_confirmed_at__isnull=False,
            account__email_confirmed_address=F("email"),
        )
    return (users.values_list("email", flat=True).first() or "").strip()


def email_queue(
    *, recipient: Any, subject: str, body: str, kind: str = EmailKind.NOTICE
) -> OutgoingEmail | None:
    """Queue an email to ``recipient``'s address; sent once the current transaction commits.
    Every email goes through here, so this is where the rule holds that no email but the
    confirmation link itself goes to an address its owner has not confirmed: else the
    platform would carry a stranger's text to any address. None when there is no valid,
    confirmed address: there is nowhere to send it."""
    address = _address_of(recipient, kind)
    if not address:
        return None
    try:
        validate_email(address)
    except ValidationError:
        return None
    body = _CONTROL.sub("", body)
    if len(body) > BODY_MAX:
        body = body[:BODY_MAX] + "\n…"
    email = OutgoingEmail.objects.create(
        recipient=recipient,
        kind=kind,
        to_address=address,
        subject=one_line(SUBJECT_PREFIX + subject, SUBJECT_MAX),
        body=body,
    )
    email_id = email.pk

    def send_later() -> None:
        from accounts.tasks import send_email

        send_email.delay(email_id)

    # robust: a broker that is down must not turn the committed change into an error page;
    # the sweeper sends the message once the broker is back.
    transaction.on_commit(send_later, robust=True)
    return email


def _retry_wait(attempts: int) -> timedelta:
    return min(RETRY_FIRST * 2 ** max(0, attempts - 1), RETRY_CAP)


def _stale_after() -> timedelta:
    """How long a message may stay claimed before its sender counts as dead: past the task's
    hard time limit."""
    return timedelta(seconds=3 * settings.EMAIL_TIMEOUT + 70)


def email_send(*, email_id: int) -> str:
    """Send one queued email, if it is still waiting (or its sender died). Safe to run twice:
    only the run that claims the row sends it. Returns what happened, for the task log;
    raises ``EmailDeferred`` when it failed and will be tried again."""
    now = timezone.now()
    with transaction.atomic():
        claimed = (
            OutgoingEmail.objects.filter(pk=email_id)
            .filter(
                Q(status=EmailStatus.WAITING)
                | Q(status=EmailStatus.SENDING, claimed_at__lt=now - _stale_after())
            )
            .update(status=EmailStatus.SENDING, claimed_at=now)
        )
    if not claimed:
        return "not waiting"
    email = OutgoingEmail.objects.get(pk=email_id)
    attempts = email.attempts + 1
    try:
        EmailMessage(
            subject=email.subject,
            body=email.body,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[email.to_address],
        ).send()
    except Exception as exc:  # any failure of the server or the backend: recorded, retried
        error = f"{type(exc).__name__}: {exc}"[:1000]
        final = attempts >= settings.EMAIL_MAX_ATTEMPTS
        OutgoingEmail.objects.filter(pk=email_id, status=EmailStatus.SENDING).update(
            status=EmailStatus.FAILED if final else EmailStatus.WAITING,
            attempts=attempts,
            error=error,
            claimed_at=None,
            next_try_at=now + _retry_wait(attempts),
        )
        logger.warning("email %s to %s not sent: %s", email_id, email.to_address, error)
        if final:
            return f"failed after {counted(attempts, 'try', 'tries')}"
        raise EmailDeferred(error) from exc
    OutgoingEmail.objects.filter(pk=email_id).update(
        status=EmailStatus.SENT, attempts=attempts, error="", sent_at=timezone.now()
    )
    return "sent"


@dataclass(frozen=True)
class EmailSweep:
    queued: list[int]
    taken_back: int


def emails_sweep(*, limit: int = 200) -> EmailSweep:
    """Take back messages whose sender died, and queue a task for each message that is due
    (a failed try whose wait is over, or one whose task message was lost)."""
    now = timezone.now()
    taken_back = OutgoingEmail.objects.filter(
        status=EmailStatus.SENDING, claimed_at__lt=now - _stale_after()
    ).update(status=EmailStatus.WAITING, claimed_at=None)
    due = list(
        OutgoingEmail.objects.filter(status=EmailStatus.WAITING, next_try_at__lte=now - SWEEP_GRACE)
        .order_by("next_try_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    from accounts.tasks import send_email

    for email_id in due:
        send_email.delay(email_id)
    return EmailSweep(due, taken_back)
