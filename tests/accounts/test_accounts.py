from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.roles import ROLES
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def perms(role: str) -> set[str]:
    group = Group.objects.get(name=role)
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in group.permissions.select_related("content_type")
    }


def test_the_four_roles_exist_with_their_permissions() -> None:
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)
    assert {
        "annotation.annotate_table",
        "annotation.write_question",
        "annotation.verify_question",
    } <= perms("annotator")
    assert "annotation.adjudicate_question" in perms("adjudicator")
    assert "annotation.adjudicate_question" not in perms("annotator")
    assert "dataset.view_test_gold" in perms("admin")
    assert "dataset.change_table" in perms("admin")
    assert not any(
        "view_test_gold" in p
        for role in ("annotator", "adjudicator", "researcher")
        for p in perms(role)
    )


def test_an_admin_role_can_use_the_django_admin(client: Client) -> None:
    client.force_login(UserFactory(role="admin"))
    assert client.get("/admin/dataset/table/").status_code == 200
    assert client.get("/admin/dataset/question/").status_code == 200
    assert client.get("/admin/dataset/synthetictable/").status_code == 200


def test_a_researcher_can_sign_up_and_is_logged_in(client: Client) -> None:
    response = client.post(
        "/accounts/sign-up/",
        {
            "username": "grace",
            "email": "grace@example.org",
            "password1": "Tables-are-hard-42",
            "password2": "Tables-are-hard-42",
        },
        follow=True,
    )
    assert response.status_code == 200
    user = User.objects.get(username="grace")
    assert list(user.groups.values_list("name", flat=True)) == ["researcher"]
    assert response.context["user"] == user
    assert b"Your researcher account is ready" in response.content


def test_sign_up_refuses_a_taken_name_and_a_weak_password(client: Client) -> None:
    UserFactory(username="grace")
    response = client.post(
        "/accounts/sign-up/",
        {"username": "Grace", "email": "g@example.org", "password1": "123", "password2": "123"},
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert "A user with that username already exists." in text or "that username is taken" in text
    assert "This password is too short." in text
    assert User.objects.count() == 1


def test_log_in_and_out(client: Client) -> None:
    UserFactory(username="ada")
    response = client.post("/accounts/login/", {"username": "ada", "password": "a-Long-password-1"})
    assert response.status_code == 302 and response["Location"] == "/welcome/"
    assert client.get("/accounts/").status_code == 200
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/accounts/").status_code == 302


def test_a_wrong_password_is_refused(client: Client) -> None:
    UserFactory(username="ada")
    response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


def test_the_token_page_creates_and_replaces_a_token(client: Client) -> None:
    user = UserFactory(role="researcher")
    client.force_login(user)
    client.post("/accounts/token/")
    first = Token.objects.get(user=user).key
    assert first in client.get("/accounts/").content.decode()
    client.post("/accounts/token/")
    second = Token.objects.get(user=user).key
    assert second != first
    assert (
        client.get("/api/tables/", headers={"Authorization": f"Token {first}"}).status_code == 401
    )
    assert (
        client.get("/api/tables/", headers={"Authorization": f"Token {second}"}).status_code == 200
    )


def test_the_token_page_needs_a_post(client: Client) -> None:
    client.force_login(UserFactory())
    assert client.get("/accounts/token/").status_code == 405


@pytest.mark.parametrize(
    ("role", "workspace"),
    [
        ("annotator", "/annotate/"),
        ("adjudicator", "/annotate/"),
        ("admin", "/annotate/"),
        ("researcher", "/leaderboard/submissions/"),
        (None, "/"),
    ],
)
def test_logging_in_lands_each_role_on_its_workspace(client: Client, role, workspace) -> None:
    UserFactory(username="ada", role=role)
    response = client.post(
        "/accounts/login/", {"username": "ada", "password": "a-Long-password-1"}, follow=True
    )
    assert response.redirect_chain[-1][0] == workspace
    assert response.status_code == 200


def test_creating_a_first_token_does_not_speak_of_a_previous_one(client: Client) -> None:
    client.force_login(UserFactory(role="researcher"))
    first = client.post("/accounts/token/", follow=True).content.decode()
    assert "Your API token was created." in first and "previous one" not in first
    second = client.post("/accounts/token/", follow=True).content.decode()
    assert "the previous one no longer works" in second
