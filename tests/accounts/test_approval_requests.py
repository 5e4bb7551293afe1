"""A researcher asks for test-split approval with one button and a note; admins see the request
on their hub and its count in the menu, and approve or decline it with one action (or from
the Django admin); each side is told, in the menu and by email."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import DataError, IntegrityError
from django.test import Client
from django.utils import timezone

from accounts.models import Account, ApprovalRequest, Notification, OutgoingEmail
from accounts.services import approval_request_decide, approval_request_make
from plumbing.errors import ApplicationError
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NOTE = "Ada Lovelace, Analytical Engines Ltd; TableLlama-7B on the test split."
PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture
def eve():
    return UserFactory(username="eve", role="researcher", test_split_approved=False)


@pytest.fixture
def boss():
    return UserFactory(username="boss", role="admin", email="boss@example.org")


def _ask(client: Client, note: str = NOTE):
    return client.post("/accounts/approval/", {"note": note})


def test_one_button_and_a_note_reach_every_admin(client: Client, eve, boss) -> None:
    UserFactory(username="root", role="admin", email="")  # sees the count in the menu only
    UserFactory(username="ann", role="annotator")  # not told
    client.force_login(eve)
    page = client.get("/accounts/").text
    assert ">Ask for approval</button>" in page and 'name="note"' in page

    response = _ask(client)
    assert response.status_code == 302 and response["Location"] == "/accounts/"
    request = ApprovalRequest.objects.get(user=eve)
    assert request.note == NOTE and request.waiting
    # The admins' menu counts the request (not a notification besides); each is emailed a
    # digest, which says the address is confirmed.
    assert not Notification.objects.exists()
    email = OutgoingEmail.objects.get()
    assert email.to_address == "boss@example.org" and email.status == "waiting"
    assert email.kind == "approval_digest"
    assert email.subject == "[HCT-QA] 1 approval request waiting"
    confirmed = f"{Account.objects.get(user=eve).email_confirmed_at:%d %B %Y}"
    assert NOTE in email.body and f"eve@example.org (confirmed {confirmed})" in email.body
    assert "http://localhost:8000/accounts/approval-requests/" in email.body
    # One request waits, not "wait" (the verb agrees with the count).
    assert "\n1 approval request for test-split submissions waits for you:" in email.body
    assert "Approve or decline it here:" in email.body

    # The page now says the request is with the admins, and offers no second button.
    page = client.get("/accounts/").text
    assert 'id="approval-waiting"' in page and NOTE in page
    assert ">Ask for approval</button>" not in page
    # A second click (another tab) makes nothing new and tells no one twice.
    assert _ask(client, "again").status_code == 302
    assert ApprovalRequest.objects.count() == 1 and OutgoingEmail.objects.count() == 1


@pytest.mark.parametrize(
    ("note", "why"),
    [("   ", "Say who you are"), ("x" * 501, "Ensure this value has at most 500 characters")],
)
def test_a_note_is_required_and_short(client: Client, eve, boss, note: str, why: str) -> None:
    client.force_login(eve)
    response = _ask(client, note)
    assert response.status_code == 400 and why in response.text
    assert not ApprovalRequest.objects.exists() and not Notification.objects.exists()


def test_the_service_refuses_a_long_note_and_the_database_too(eve) -> None:
    with pytest.raises(ApplicationError, match="keep it to 500"):
        approval_request_make(user=eve, note="y" * 501)
    # SQLite has only the check constraint; PostgreSQL's varchar refuses first.
    with pytest.raises((IntegrityError, DataError)):
        ApprovalRequest.objects.create(user=eve, note="z" * 501)


def test_only_researchers_not_yet_approved_may_ask(client: Client, boss) -> None:
    ann = UserFactory(role="annotator")
    with pytest.raises(ApplicationError, match="for researchers"):
        approval_request_make(user=ann, note=NOTE)
    approved = UserFactory(role="researcher")
    with pytest.raises(ApplicationError, match="may submit on the test split already"):
        approval_request_make(user=approved, note=NOTE)
    client.force_login(approved)
    assert ">Ask for approval</button>" not in client.get("/accounts/").text


def test_one_request_waits_at_a_time_in_the_database(eve) -> None:
    ApprovalRequest.objects.create(user=eve, note=NOTE)
    with pytest.raises(IntegrityError):
        ApprovalRequest.objects.create(user=eve, note=NOTE)


def test_admins_see_the_request_escaped_on_their_hub_and_a_count_in_the_menu(
    client: Client, eve, boss
) -> None:
    approval_request_make(user=eve, note=f"Hi {PAYLOAD}")
    client.force_login(boss)
    hub = client.get("/annotate/").text
    assert 'id="hub-approval-requests"' in hub and "eve@example.org" in hub
    assert PAYLOAD not in hub and "&lt;script&gt;alert(1)&lt;/script&gt;" in hub
    menu = r'id="menu-approval-requests">Approval requests <span class="count-badge">1<'
    assert re.search(menu, hub)
    assert ">Approve eve</button>" in hub
    # A researcher has no such menu entry, nor the page.
    client.force_login(eve)
    assert "menu-approval-requests" not in client.get("/accounts/").text
    assert client.get("/accounts/approval-requests/").status_code == 403


def test_approving_from_the_hub_is_one_action_and_tells_the_researcher(
    client: Client, eve, boss
) -> None:
    request = approval_request_make(user=eve, note=NOTE)
    OutgoingEmail.objects.all().delete()
    client.force_login(boss)
    response = client.post(
        f"/accounts/approval-requests/{request.pk}/decide/",
        {"decision": "approve", "next": "/annotate/"},
    )
    assert response.status_code == 302 and response["Location"] == "/annotate/"
    account = Account.objects.get(user=eve)
    assert account.test_split_approved and account.test_split_approved_by == boss
    request.refresh_from_db()
    assert request.approved is True and request.decided_by == boss
    told = eve.notifications.get()
    assert told.text == "boss approved your account for test-split submissions"
    assert told.url == "/leaderboard/submit/"
    email = OutgoingEmail.objects.get()
    assert email.to_address == "eve@example.org" and "up to 5 submissions a day" in email.body
    # The count in the menu is gone with the request.
    assert "menu-approval-requests" not in client.get("/annotate/").text
    # Deciding again changes nothing and tells no one twice.
    client.post(f"/accounts/approval-requests/{request.pk}/decide/", {"decision": "decline"})
    assert Account.objects.get(user=eve).test_split_approved
    assert eve.notifications.count() == 1


def test_declining_tells_the_researcher_who_may_ask_again_a_day_later(
    client: Client, eve, boss
) -> None:
    request = approval_request_make(user=eve, note=NOTE)
    client.force_login(boss)
    client.post(f"/accounts/approval-requests/{request.pk}/decide/", {"decision": "decline"})
    request.refresh_from_db()
    assert request.approved is False and not Account.objects.get(user=eve).test_split_approved
    assert "declined your request" in eve.notifications.get().text
    client.force_login(eve)
    page = client.get("/accounts/").text
    assert 'id="approval-declined"' in page and ">Ask for approval</button>" in page
    response = _ask(client)
    assert response.status_code == 400 and "less than a day ago" in response.text
    ApprovalRequest.objects.filter(pk=request.pk).update(
        decided_at=timezone.now() - timedelta(days=1, minutes=1)
    )
    assert _ask(client).status_code == 302
    assert ApprovalRequest.objects.filter(user=eve, decided_at__isnull=True).count() == 1


def test_a_bad_decision_or_an_outsider_decides_nothing(client: Client, eve, boss) -> None:
    request = approval_request_make(user=eve, note=NOTE)
    client.force_login(boss)
    client.post(f"/accounts/approval-requests/{request.pk}/decide/", {"decision": "maybe"})
    assert ApprovalRequest.objects.get(pk=request.pk).waiting
    with pytest.raises(ApplicationError, match="Only admins"):
        approval_request_decide(request_id=request.pk, admin=eve, approve=True)
    with pytest.raises(ApplicationError, match="no such approval request"):
        approval_request_decide(request_id=request.pk + 99, admin=boss, approve=True)


def test_the_django_admin_approves_and_declines_with_one_action(client: Client, boss) -> None:
    first = approval_request_make(
        user=UserFactory(username="r1", role="researcher", test_split_approved=False), note=NOTE
    )
    second = approval_request_make(
        user=UserFactory(username="r2", role="researcher", test_split_approved=False), note=NOTE
    )
    client.force_login(boss)
    url = "/admin/accounts/approvalrequest/"
    listing = client.get(url).text
    assert "Approve for test-split submissions" in listing and NOTE[:40] in listing
    client.post(url, {"action": "approve", "_selected_action": [first.pk]})
    client.post(url, {"action": "decline", "_selected_action": [second.pk]})
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.approved is True and Account.objects.get(user=first.user).test_split_approved
    assert second.approved is False
    assert first.user.notifications.count() == 1 and second.user.notifications.count() == 1


def test_an_approval_from_the_account_admin_answers_the_waiting_request(eve, boss) -> None:
    from accounts.services import account_approve_for_test_split

    request = approval_request_make(user=eve, note=NOTE)
    account_approve_for_test_split(user=eve, approved_by=boss)
    request.refresh_from_db()
    assert request.approved is True and request.decided_by == boss
    assert eve.notifications.count() == 1
    # A command's approval (no admin) tells no one.
    quiet = UserFactory(role="researcher", test_split_approved=False)
    account_approve_for_test_split(user=quiet, approved_by=None)
    assert not quiet.notifications.exists()
