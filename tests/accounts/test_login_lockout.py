"""django-axes locks out a client after repeated failed log-ins, on the log-in form and on
the API's token endpoint, with a page (or JSON) that says why and for how long."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RIGHT = "a-Long-password-1"


@pytest.fixture
def ada():
    return UserFactory(username="ada", role="researcher")


def form_login(client: Client, password: str, address: str = "203.0.113.7", user: str = "ada"):
    return client.post(
        "/accounts/login/", {"username": user, "password": password}, REMOTE_ADDR=address
    )


def token(client: Client, password: str, address: str = "203.0.113.7"):
    return client.post(
        "/api/auth/token/",
        {"username": "ada", "password": password},
        content_type="application/json",
        REMOTE_ADDR=address,
    )


def test_the_form_locks_out_after_the_limit_even_for_the_right_password(
    client: Client, ada, settings
) -> None:
    assert settings.LOGIN_FAILURE_LIMIT == 5
    for _ in range(4):
        assert form_login(client, "wrong").status_code == 200  # "Please enter a correct…"
    response = form_login(client, "wrong")
    assert response.status_code == 429
    response = form_login(client, RIGHT)
    assert response.status_code == 429 and response["Retry-After"] == "900"
    assert "Log-in locked for 15 minutes" in response.text
    assert "Too many failed log-ins" in response.text
    assert "_auth_user_id" not in client.session
    # Locked for ada from this address only: ada elsewhere, and others here, still log in.
    assert form_login(Client(), RIGHT, address="198.51.100.9").status_code == 302
    UserFactory(username="bob")
    assert form_login(Client(), RIGHT, user="bob").status_code == 302


def test_the_token_endpoint_locks_out_with_json(client: Client, ada) -> None:
    for _ in range(4):
        response = token(client, "wrong")
        assert response.status_code == 400
    assert token(client, "wrong").status_code == 429
    response = token(client, RIGHT)
    assert response.status_code == 429
    assert response["Content-Type"] == "application/json"
    assert "Too many failed log-ins" in response.json()["detail"]
    assert response["Retry-After"] == "900"
    assert "token" not in response.json()
    assert token(Client(), RIGHT, address="198.51.100.9").status_code == 200


def test_failures_on_both_entry_points_add_up(client: Client, ada) -> None:
    for _ in range(3):
        form_login(client, "wrong")
    token(client, "wrong")
    token(client, "wrong")
    assert form_login(client, RIGHT).status_code == 429


def test_a_successful_log_in_starts_the_count_again(client: Client, ada) -> None:
    for _ in range(4):
        form_login(client, "wrong")
    assert form_login(client, RIGHT).status_code == 302
    for _ in range(4):
        assert form_login(Client(), "wrong").status_code == 200


def test_the_lockout_can_count_per_user_from_every_address(client: Client, ada, settings) -> None:
    settings.AXES_LOCKOUT_PARAMETERS = ["username"]
    for n in range(5):
        form_login(Client(), "wrong", address=f"192.0.2.{n}")
    assert form_login(Client(), RIGHT, address="198.51.100.9").status_code == 429


def test_the_lockout_ends_after_the_cool_off(client: Client, ada, settings) -> None:
    from datetime import timedelta

    from axes.models import AccessAttempt

    for _ in range(5):
        form_login(client, "wrong")
    assert form_login(client, RIGHT).status_code == 429
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16)
    )
    assert form_login(client, RIGHT).status_code == 302
