"""An address is the user's only once they follow the signed, expiring link sent to it: until
then no other email goes to it (so the platform relays no stranger's text to someone else's
address) and its owner cannot ask for test-split approval. The admins get at most one digest
of the waiting requests an hour, however many accounts ask."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from unittest import mock

import pytest
from django.db.models import F
from django.test import Client

from accounts import services
from accounts.models import Account, ApprovalRequest, Notification, OutgoingEmail
from accounts.services import (
    approval_digests_queue,
    approval_request_decide,
    approval_request_make,
    email_confirmation_send,
    notify,
)
from accounts.tasks import send_approval_digests
from plumbing.errors import ApplicationError
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NOTE = "Ada Lovelace, Analytical Engines Ltd; TableLlama-7B on the test split."
LINK = re.compile(r"http://localhost:8000(/accounts/emails/confirm/[^/\s]+/)")


@pytest.fixture
def eve():
    return UserFactory(
        username="eve", role="researcher", email_confirmed=False, test_split_approved=False
    )


@pytest.fixture
def boss():
    return UserFactory(username="boss", role="admin", email="boss@example.org")


def _link(user) -> str:
    email = OutgoingEmail.objects.filter(recipient=user, kind="confirmation").first()
    assert email is not None
    return LINK.search(email.body).group(1)


def _confirmed(user) -> bool:
    return Account.objects.select_related("user").get(user=user).email_confirmed


def _signer_later(minutes: float):
    return mock.patch("django.core.signing.time.time", return_value=time.time() + 60 * minutes)


def _emails_older(minutes: float) -> None:
    """As if the emails queued (and the requests made) so far were ``minutes`` earlier."""
    OutgoingEmail.objects.update(created_at=F("created_at") - timedelta(minutes=minutes))
    ApprovalRequest.objects.update(created_at=F("created_at") - timedelta(minutes=minutes))


def test_sign_up_sends_the_link_and_following_it_confirms(client: Client) -> None:
    response = client.post(
        "/accounts/sign-up/",
        {
            "username": "mallory",
            "email": "prof@mit.example.edu",
            "password1": "a-Long-password-1",
            "password2": "a-Long-password-1",
        },
        follow=True,
    )
    assert "follow the link we sent to it" in response.text
    [email] = OutgoingEmail.objects.all()
    assert email.kind == "confirmation" and email.to_address == "prof@mit.example.edu"
    assert email.subject == "[HCT-QA] Confirm your email address"
    # The platform's own words only: not even the chosen username reaches a stranger's inbox.
    assert "mallory" not in email.body
    page = response.text
    assert 'id="email-state"' in page and "Unconfirmed" in page and ">Send it again<" in page
    user = email.recipient
    assert not _confirmed(user)

    # The link opens a page with one button; opening it (a mail scanner does) confirms nothing.
    link = _link(user)
    page = client.get(link)
    assert page.status_code == 200 and 'id="confirm-form"' in page.text
    assert not _confirmed(user)
    response = client.post(link, follow=True)
    assert "prof@mit.example.edu is confirmed" in response.text
    assert _confirmed(user)
    assert "· confirmed " in response.text
    # The link again: used already, said so.
    assert "This link was used already" in client.get(link).text


def test_a_tampered_an_expired_or_another_accounts_link_is_refused(client: Client, eve) -> None:
    email_confirmation_send(user=eve)
    link = _link(eve)
    client.force_login(eve)

    tampered = link.replace("/confirm/", "/confirm/x")
    response = client.post(tampered)
    assert response.status_code == 400 and "This link is not valid" in response.text
    forged = services.signing.dumps(
        {"u": eve.pk, "a": services._address_digest(eve.email)}, salt="another-salt"
    )
    assert client.post(f"/accounts/emails/confirm/{forged}/").status_code == 400

    with _signer_later(3 * 24 * 60 + 1):
        response = client.post(link)
    assert response.status_code == 400 and "This link has expired" in response.text

    mallory = UserFactory(username="mallory", role="researcher", email_confirmed=False)
    client.force_login(mallory)
    response = client.post(link)
    assert response.status_code == 400 and "This link is for another account" in response.text
    assert not _confirmed(eve) and not _confirmed(mallory)
    # Logged out: the log-in page first.
    client.logout()
    assert client.get(link)["Location"].startswith("/accounts/login/?next=")
    assert not _confirmed(eve)


def test_a_new_address_is_unconfirmed_and_the_old_link_refused(client: Client, eve) -> None:
    email_confirmation_send(user=eve)
    link = _link(eve)
    client.force_login(eve)
    client.post(link)
    assert _confirmed(eve)
    eve.email = "eve@elsewhere.example.org"
    eve.save()  # as the Django admin's user form does
    assert not _confirmed(eve)
    account = Account.objects.get(user=eve)
    assert account.email_confirmed_address == "" and account.email_confirmed_at is None
    response = client.post(link)
    assert response.status_code == 400 and "no longer has" in response.text
    # Even an update that bypasses signals leaves the new address unconfirmed.
    client.post(_link_after_resend(eve))
    assert _confirmed(eve)
    type(eve).objects.filter(pk=eve.pk).update(email="victim@example.org")
    eve.refresh_from_db()
    assert not _confirmed(eve)
    notify(recipient=eve, text="Something happened", email=True)
    assert not OutgoingEmail.objects.exclude(kind="confirmation").exists()


def _link_after_resend(user) -> str:
    OutgoingEmail.objects.filter(recipient=user).delete()
    email_confirmation_send(user=user)
    return _link(user)


def test_no_email_but_the_link_to_an_unconfirmed_address(eve, boss) -> None:
    Account.objects.filter(user=eve).update(email_on_scoring=True, email_on_mention=True)
    notify(recipient=eve, text="Your submission 1, “buy pills at evil.example”", email=True)
    assert Notification.objects.filter(recipient=eve).count() == 1  # the menu tells anyway
    assert not OutgoingEmail.objects.exists()
    # An old request of an unconfirmed address (from before confirmation) declined: told in
    # the menu only.
    request = ApprovalRequest.objects.create(user=eve, note=NOTE)
    approval_request_decide(request_id=request.pk, admin=boss, approve=False)
    assert Notification.objects.filter(recipient=eve).count() == 2
    assert not OutgoingEmail.objects.filter(recipient=eve).exists()
    # The link itself is the one email that goes.
    email_confirmation_send(user=eve)
    assert list(OutgoingEmail.objects.values_list("kind", flat=True)) == ["confirmation"]


def test_an_approval_request_needs_a_confirmed_address(client: Client, eve, boss) -> None:
    client.force_login(eve)
    page = client.get("/accounts/").text
    assert 'id="approval-needs-confirmation"' in page and ">Ask for approval</button>" not in page
    assert ">Send the link<" in page
    response = client.post("/accounts/approval/", {"note": NOTE})
    assert response.status_code == 400 and "Confirm your email address first" in response.text
    with pytest.raises(ApplicationError, match="Confirm your email address first"):
        approval_request_make(user=eve, note=NOTE)
    assert not ApprovalRequest.objects.exists() and not OutgoingEmail.objects.exists()

    client.post("/accounts/emails/confirm/")
    client.post(_link(eve))
    assert _confirmed(eve)
    assert client.post("/accounts/approval/", {"note": NOTE}).status_code == 302
    assert ApprovalRequest.objects.filter(user=eve).exists()
    # The admins' page says the address is confirmed, and when.
    client.force_login(boss)
    page = client.get("/accounts/approval-requests/").text
    confirmed = Account.objects.get(user=eve).email_confirmed_at
    assert f'eve@example.org <span class="tag">confirmed {confirmed:%-d %b %Y}</span>' in page


def test_the_link_is_sent_again_at_most_every_ten_minutes_and_a_few_times_a_day(
    client: Client, eve
) -> None:
    client.force_login(eve)
    response = client.post("/accounts/emails/confirm/", follow=True)
    assert "A new link is on its way to eve@example.org; it works for 3 days." in response.text
    response = client.post("/accounts/emails/confirm/", follow=True)
    assert "No link was sent: A link went to eve@example.org at" in response.text
    assert "ask for another after" in response.text
    assert OutgoingEmail.objects.count() == 1
    for _ in range(3):
        _emails_older(11)
        email_confirmation_send(user=eve)
    assert OutgoingEmail.objects.count() == 4
    _emails_older(60)
    with pytest.raises(ApplicationError, match="as many confirmation links"):
        email_confirmation_send(user=eve)
    # A day later, again.
    _emails_older(24 * 60)
    email_confirmation_send(user=eve)
    assert OutgoingEmail.objects.count() == 5


def test_many_accounts_with_one_address_get_few_links_to_it(client: Client) -> None:
    refused = 0
    for k in range(7):
        sock = UserFactory(
            username=f"sock{k}",
            role="researcher",
            email="victim@example.org",
            email_confirmed=False,
        )
        try:
            email_confirmation_send(user=sock)
        except ApplicationError as exc:
            assert "as many confirmation links as a day allows" in exc.message
            refused += 1
    assert refused == 2
    sent = OutgoingEmail.objects.filter(to_address="victim@example.org")
    assert sent.count() == services.CONFIRMATIONS_PER_DAY_PER_ADDRESS == 5


def test_admins_get_at_most_one_digest_an_hour(boss) -> None:
    UserFactory(username="root", role="admin", email="root@example.org")
    askers = [
        UserFactory(username=f"r{k}", role="researcher", test_split_approved=False)
        for k in range(3)
    ]
    for user in askers:
        approval_request_make(user=user, note=f"{user.username}: {NOTE}")
    # One digest each for three requests, sent with the first.
    digests = OutgoingEmail.objects.filter(kind="approval_digest")
    assert sorted(digests.values_list("to_address", flat=True)) == [
        "boss@example.org",
        "root@example.org",
    ]
    assert "r0: " in digests.first().body and "r1: " not in digests.first().body
    # Beat within the hour: nothing more.
    assert send_approval_digests.apply().get() == 0
    # An hour on, beat sends one more each, with every request waiting.
    _emails_older(61)
    assert send_approval_digests.apply().get() == 2
    assert approval_digests_queue() == 0
    latest = digests.order_by("-created_at", "-pk").first()
    assert latest.subject == "[HCT-QA] 3 approval requests waiting"
    assert all(f"r{k}: " in latest.body for k in range(3))
    # Two hours on, with no new request: no digest about the same requests again.
    _emails_older(150)
    assert approval_digests_queue() == 0
    assert digests.count() == 4
