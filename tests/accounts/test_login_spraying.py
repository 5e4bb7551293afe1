"""Issue 23, item 4: log-in spraying. 40 usernames tried from one address in 31 s all got 200
on the log-in form, with no lockout (the per-user count never reached its limit). Failed
log-ins are now also counted per address (an IPv6 /64), across usernames and across every
log-in form, against a limit of their own."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SPRAYER = "203.0.113.66"
RIGHT = "a-Long-password-1"


def form(path: str, user: str, password: str, address: str = SPRAYER):
    return Client().post(path, {"username": user, "password": password}, REMOTE_ADDR=address)


def token(user: str, password: str, address: str = SPRAYER):
    return Client().post(
        "/api/auth/token/",
        {"username": user, "password": password},
        content_type="application/json",
        REMOTE_ADDR=address,
    )


def test_spraying_usernames_from_one_address_is_locked_out_on_every_form() -> None:
    UserFactory(username="ada", role="researcher")
    # The replay: 40 usernames, one common password each, on the HTML form.
    codes = [form("/accounts/login/", f"user{n}", "Summer2026!").status_code for n in range(40)]
    assert codes[:19] == [200] * 19  # "Please enter a correct username and password"
    assert codes[19:] == [429] * 21
    locked = form("/accounts/login/", "someone-else", "Summer2026!")
    page = locked.content.decode()
    assert locked.status_code == 429
    assert "Too many failed log-ins from your address" in page
    assert "whichever the username" in page
    assert "Try again after" in page and "UTC" in page
    assert 0 < int(locked["Retry-After"]) <= 15 * 60
    # Every log-in form and the token endpoint refuse the address, the right password too.
    assert form("/accounts/login/", "ada", RIGHT).status_code == 429
    assert form("/admin/login/", "ada", RIGHT).status_code == 429
    refused = token("ada", RIGHT)
    assert refused.status_code == 429 and "token" not in refused.json()
    assert "Too many failed log-ins from your address" in refused.json()["detail"]
    assert int(refused["Retry-After"]) > 0
    # Another address is not held up.
    assert form("/accounts/login/", "ada", RIGHT, address="198.51.100.9").status_code == 302


def test_failures_on_each_form_add_up_per_address(settings) -> None:
    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 6
    UserFactory(username="ada", role="researcher")
    form("/accounts/login/", "u1", "x")
    form("/accounts/login/", "u2", "x")
    form("/admin/login/", "u3", "x")
    form("/admin/login/", "u4", "x")
    token("u5", "x")
    assert token("u6", "x").status_code == 429
    assert form("/accounts/login/", "ada", RIGHT).status_code == 429


def test_an_ipv6_64_is_one_address(settings) -> None:
    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 5
    UserFactory(username="ada", role="researcher")
    # One host may use any address of its /64: one address per try was no limit.
    for n in range(1, 6):
        form("/accounts/login/", f"user{n}", "x", address=f"2001:db8:7:7::{n}")
    assert form("/accounts/login/", "ada", RIGHT, address="2001:db8:7:7::99").status_code == 429
    assert form("/accounts/login/", "ada", RIGHT, address="2001:db8:7:8::1").status_code == 302


def test_the_address_lockout_ends_when_its_failures_age_out(settings) -> None:
    from axes.models import AccessAttempt

    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 5
    UserFactory(username="ada", role="researcher")
    for n in range(5):
        form("/accounts/login/", f"user{n}", "x")
    assert form("/accounts/login/", "ada", RIGHT).status_code == 429
    # The refused attempt counts as a failure too; all of them age out after the cool-off.
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(minutes=16)
        attempt.save()
    assert form("/accounts/login/", "ada", RIGHT).status_code == 302


def test_the_per_user_lockout_says_so_and_when_to_come_back() -> None:
    UserFactory(username="ada", role="researcher")
    for _ in range(5):
        form("/accounts/login/", "ada", "wrong")
    page = form("/accounts/login/", "ada", RIGHT).content.decode()
    assert "Too many failed log-ins to this account from your address" in page
    assert "Try again after" in page


def test_the_address_limit_can_be_turned_off(settings) -> None:
    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 0
    UserFactory(username="ada", role="researcher")
    for n in range(25):
        assert form("/accounts/login/", f"user{n}", "x").status_code == 200
    assert form("/accounts/login/", "ada", RIGHT).status_code == 302
