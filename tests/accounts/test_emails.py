"""Emails go through Django's email framework, after the change they tell of is committed, by a
task that retries: a slow or dead mail server never holds a request or loses the change, and
no name or note can add a header."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from smtplib import SMTPServerDisconnected
from unittest import mock

import pytest
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.db import IntegrityError
from django.test import Client
from django.utils import timezone

from accounts import mail as outbox
from accounts.models import ApprovalRequest, OutgoingEmail
from accounts.services import approval_request_make, notify
from accounts.tasks import send_email
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]


class RefusingBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages):  # type: ignore[no-untyped-def]
        raise SMTPServerDisconnected("Connection unexpectedly closed")


REFUSING = f"{__name__}.RefusingBackend"


@pytest.fixture
def boss():
    return UserFactory(username="boss", role="admin", email="boss@example.org")


def test_a_notification_email_is_sent_by_the_task_after_commit(
    boss, django_capture_on_commit_callbacks
) -> None:
    with (
        mock.patch.object(send_email, "delay") as delay,
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        notify(recipient=boss, text="Something happened", url="/annotate/", email=True)
        assert not delay.called  # nothing is sent inside the transaction
    assert len(callbacks) == 1
    email = OutgoingEmail.objects.get()
    delay.assert_called_once_with(email.pk)
    assert not mail.outbox
    assert outbox.email_send(email_id=email.pk) == "sent"
    [message] = mail.outbox
    assert message.to == ["boss@example.org"] and message.subject == "[HCT-QA] Something happened"
    assert "http://localhost:8000/annotate/" in message.body
    email.refresh_from_db()
    assert email.status == "sent" and email.attempts == 1 and email.sent_at
    # Sent once: the task running again (a duplicate message) sends nothing more.
    assert outbox.email_send(email_id=email.pk) == "not waiting"
    assert len(mail.outbox) == 1


def test_no_address_no_email(boss) -> None:
    boss.email = ""
    boss.save()
    notify(recipient=boss, text="Something happened", email=True)
    assert not OutgoingEmail.objects.exists()
    assert boss.notifications.count() == 1  # told in the menu all the same


def test_a_dead_mail_server_is_retried_then_given_up(settings, boss) -> None:
    settings.EMAIL_BACKEND = REFUSING
    settings.EMAIL_MAX_ATTEMPTS = 3
    notify(recipient=boss, text="Retry me", email=True)
    email = OutgoingEmail.objects.get()
    with pytest.raises(outbox.EmailDeferred):
        outbox.email_send(email_id=email.pk)
    email.refresh_from_db()
    assert email.status == "waiting" and email.attempts == 1
    assert "SMTPServerDisconnected" in email.error
    # The next try waits a minute, then two: the same waits as the task's retries.
    assert timedelta(seconds=55) < email.next_try_at - timezone.now() <= timedelta(minutes=1)
    with pytest.raises(outbox.EmailDeferred):
        outbox.email_send(email_id=email.pk)
    assert outbox.email_send(email_id=email.pk) == "failed after 3 tries"
    email.refresh_from_db()
    assert email.status == "failed" and email.attempts == 3 and not mail.outbox
    # The task's own retries, read at start-up: the default 5 tries, 10 s per step.
    assert send_email.max_retries == 4 and send_email.autoretry_for == (outbox.EmailDeferred,)
    assert send_email.soft_time_limit == 30 and send_email.time_limit == 40


def test_the_task_retries_on_a_failure(settings, boss) -> None:
    settings.EMAIL_BACKEND = REFUSING
    notify(recipient=boss, text="Retry me", email=True)
    email = OutgoingEmail.objects.get()
    with (
        mock.patch.object(send_email, "retry", side_effect=RuntimeError("retried")) as retry,
        pytest.raises(RuntimeError, match="retried"),
    ):
        send_email.apply(args=[email.pk], throw=True)
    assert retry.call_args.kwargs["countdown"] == 60


def test_the_sweeper_sends_what_is_due_and_takes_back_a_dead_senders_message(boss) -> None:
    now = timezone.now()
    notify(recipient=boss, text="Lost message", email=True)
    lost = OutgoingEmail.objects.get()
    OutgoingEmail.objects.filter(pk=lost.pk).update(next_try_at=now - timedelta(minutes=5))
    fresh = OutgoingEmail.objects.create(to_address="a@example.org", subject="s", body="b")
    held = OutgoingEmail.objects.create(
        to_address="b@example.org",
        subject="s",
        body="b",
        status="sending",
        claimed_at=now - timedelta(minutes=10),
        next_try_at=now - timedelta(minutes=10),
    )
    with mock.patch.object(send_email, "delay") as delay:
        sweep = outbox.emails_sweep()
    assert sweep.taken_back == 1
    # Due for over a minute: the lost one and the one taken back; not one just queued.
    assert sorted(sweep.queued) == sorted([lost.pk, held.pk])
    assert fresh.pk not in sweep.queued
    assert {c.args[0] for c in delay.call_args_list} == {lost.pk, held.pk}


def test_a_broker_that_is_down_keeps_the_change_and_the_message(
    client: Client, django_capture_on_commit_callbacks, boss
) -> None:
    eve = UserFactory(username="eve", role="researcher", test_split_approved=False)
    client.force_login(eve)
    with (
        mock.patch.object(send_email, "delay", side_effect=ConnectionError("broker down")),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post("/accounts/approval/", {"note": "Eve, a lab; model X"})
    assert response.status_code == 302  # the request is answered, not an error page
    assert ApprovalRequest.objects.filter(user=eve, decided_at__isnull=True).exists()
    assert OutgoingEmail.objects.get().status == "waiting"  # for the sweeper


def test_the_web_request_never_talks_to_the_mail_server(
    client: Client, settings, django_capture_on_commit_callbacks, boss
) -> None:
    settings.EMAIL_BACKEND = REFUSING
    eve = UserFactory(username="eve", role="researcher", test_split_approved=False)
    client.force_login(eve)
    with (
        mock.patch.object(send_email, "delay") as delay,
        mock.patch.object(RefusingBackend, "send_messages") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert client.post("/accounts/approval/", {"note": "Eve"}).status_code == 302
    assert delay.called and not sent.called


def test_no_name_or_note_can_add_a_header(boss) -> None:
    eve = UserFactory(
        username="eve", role="researcher", test_split_approved=False, email="eve@example.org"
    )
    note = "Hello\r\nBcc: victim@example.org\r\nSubject: free money\n\nbody"
    approval_request_make(user=eve, note=note)
    email = OutgoingEmail.objects.get()
    outbox.email_send(email_id=email.pk)
    [message] = mail.outbox
    raw = message.message().as_string()
    headers = raw.split("\n\n", 1)[0]
    assert "Bcc" not in headers and "victim@example.org" not in headers
    assert "free money" not in headers and message.bcc == []
    assert "Bcc: victim@example.org" in message.body  # the note is body text, as written
    # A subject given with line breaks is made one line; the database refuses one that is not.
    notify(recipient=boss, text="Line one\r\nBcc: victim@example.org", email=True)
    assert OutgoingEmail.objects.latest("pk").subject == (
        "[HCT-QA] Line one Bcc: victim@example.org"
    )
    with pytest.raises(IntegrityError):
        OutgoingEmail.objects.create(to_address="a@example.org", subject="a\nb", body="")


def _settings_with(env: dict[str, str]) -> dict:
    code = (
        "import json, django\n"
        "from django.conf import settings\n"
        "django.setup()\n"
        "print(json.dumps({k: getattr(settings, k) for k in ("
        "'EMAIL_BACKEND', 'EMAIL_HOST', 'EMAIL_PORT', 'EMAIL_HOST_USER', 'EMAIL_HOST_PASSWORD', "
        "'EMAIL_USE_TLS', 'EMAIL_USE_SSL', 'EMAIL_TIMEOUT', 'DEFAULT_FROM_EMAIL', 'SITE_URL')}))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("EMAIL_", "DEFAULT_FROM"))}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": "hctqa.settings", **env},
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout)


def test_the_console_by_default_and_smtp_from_the_environment() -> None:
    default = _settings_with({})
    assert default["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"
    smtp = _settings_with(
        {
            "EMAIL_HOST": "smtp.example.org",
            "EMAIL_PORT": "465",
            "EMAIL_HOST_USER": "platform",
            "EMAIL_HOST_PASSWORD": "pw",
            "EMAIL_USE_TLS": "false",
            "EMAIL_USE_SSL": "true",
            "EMAIL_TIMEOUT": "5",
            "DEFAULT_FROM_EMAIL": "HCT-QA <hctqa@example.org>",
            "SITE_URL": "https://hctqa.example.org/",
        }
    )
    assert smtp == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.org",
        "EMAIL_PORT": 465,
        "EMAIL_HOST_USER": "platform",
        "EMAIL_HOST_PASSWORD": "pw",
        "EMAIL_USE_TLS": False,
        "EMAIL_USE_SSL": True,
        "EMAIL_TIMEOUT": 5,
        "DEFAULT_FROM_EMAIL": "HCT-QA <hctqa@example.org>",
        "SITE_URL": "https://hctqa.example.org",
    }
    both = _settings_with({"EMAIL_USE_TLS": "true", "EMAIL_USE_SSL": "true"})
    assert "Set one of EMAIL_USE_TLS (STARTTLS) and EMAIL_USE_SSL, not both" in both["error"]


def test_choosing_emails_on_the_account_page(client: Client) -> None:
    ada = UserFactory(username="ada", role="researcher")
    client.force_login(ada)
    page = client.get("/accounts/").text
    assert "When a submission or inference run of mine is scored or fails" in page
    assert "When someone mentions me" not in page  # researchers take no part in discussions
    response = client.post("/accounts/emails/", {"on_scoring": "on"})
    assert response.status_code == 302
    ada.account.refresh_from_db()
    assert ada.account.email_on_scoring and not ada.account.email_on_mention
    client.post("/accounts/emails/", {})
    ada.account.refresh_from_db()
    assert not ada.account.email_on_scoring
