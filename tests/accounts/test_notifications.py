"""Notifications: the menu counts the unread ones, once per page; opening one marks it read
and leads to its page; "Mark all read" clears the count; no one opens another's."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import Notification
from accounts.services import notify
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _menu_count(html: str) -> str | None:
    found = re.search(
        r'id="menu-notifications">Notifications <span class="count-badge">'
        r'<span class="visually-hidden">unread: </span>(\d+)</span>',
        html,
    )
    return found.group(1) if found else None


def test_the_menu_counts_unread_and_opening_one_marks_it_read(client: Client) -> None:
    ann = UserFactory(username="ann", role="annotator")
    first = notify(recipient=ann, text="bob mentioned you on psa--1--1", url="/tables/psa--1--1/")
    notify(recipient=ann, text="Something else")
    client.force_login(ann)
    page = client.get("/accounts/notifications/").text
    assert _menu_count(page) == "2"
    assert "bob mentioned you on psa--1--1" in page
    assert f'href="/accounts/notifications/{first.pk}/"' in page
    response = client.get(
        f"/accounts/notifications/{first.pk}/", headers={"Sec-Fetch-Site": "same-origin"}
    )
    assert response.status_code == 302 and response["Location"] == "/tables/psa--1--1/"
    assert _menu_count(client.get("/accounts/notifications/").text) == "1"
    client.post("/accounts/notifications/read/")
    assert _menu_count(client.get("/accounts/notifications/").text) is None
    assert not Notification.objects.filter(read_at__isnull=True).exists()


@pytest.mark.parametrize(
    ("headers", "marked"),
    [
        ({"Sec-Fetch-Site": "same-origin"}, True),
        ({"Sec-Fetch-Site": "none"}, True),  # typed or bookmarked
        ({"Sec-Fetch-Site": "cross-site"}, False),
        ({"Sec-Fetch-Site": "same-site"}, False),
        ({"Sec-Fetch-Site": "cross-site", "Referer": "http://testserver/accounts/"}, False),
        ({"Referer": "http://testserver/accounts/notifications/"}, True),  # an older browser
        ({"Referer": "https://evil.example/page"}, False),
        ({}, False),
    ],
    ids=repr,
)
def test_another_site_cannot_mark_a_notification_read(
    client: Client, headers: dict, marked: bool
) -> None:
    ann = UserFactory(role="annotator")
    item = notify(recipient=ann, text="bob mentioned you", url="/tables/psa--1--1/")
    client.force_login(ann)
    response = client.get(f"/accounts/notifications/{item.pk}/", headers=headers)
    # The link is followed either way.
    assert response.status_code == 302 and response["Location"] == "/tables/psa--1--1/"
    item.refresh_from_db()
    assert (item.read_at is not None) is marked


def test_no_one_opens_or_clears_another_persons_notification(client: Client) -> None:
    ann = UserFactory(role="annotator")
    item = notify(recipient=ann, text="For ann only", url="/annotate/")
    client.force_login(UserFactory(role="annotator"))
    assert client.get(f"/accounts/notifications/{item.pk}/").status_code == 404
    client.post("/accounts/notifications/read/")
    assert "For ann only" not in client.get("/accounts/notifications/").text
    item.refresh_from_db()
    assert item.read_at is None


def test_an_outside_link_is_never_followed(client: Client) -> None:
    ann = UserFactory(role="annotator")
    item = Notification.objects.create(recipient=ann, text="x", url="https://evil.example/")
    client.force_login(ann)
    assert client.get(f"/accounts/notifications/{item.pk}/")["Location"] == (
        "/accounts/notifications/"
    )


def test_the_menu_costs_the_same_queries_however_many_notifications(client: Client) -> None:
    ann = UserFactory(role="annotator")
    client.force_login(ann)
    client.get("/accounts/")  # warm the session and permission caches

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/accounts/").status_code == 200
        return len(captured)

    before = queries()
    for k in range(20):
        notify(recipient=ann, text=f"n{k}")
    assert queries() == before
