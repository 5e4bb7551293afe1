"""Sign-up is limited per client address, and refuses usernames that look like taken ones."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.models import Account
from accounts.usernames import username_skeleton
from plumbing.client_addresses import address_group, client_address
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "Tables-are-hard-42"


def sign_up(client: Client, username: str, address: str = "203.0.113.7", **headers: str):
    return client.post(
        "/accounts/sign-up/",
        {
            "username": username,
            "email": f"{abs(hash(username))}@example.org",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
        REMOTE_ADDR=address,
        headers=headers,
    )


def test_the_sign_up_after_the_limit_from_one_address_is_refused(settings) -> None:
    settings.SIGN_UP_LIMIT_PER_HOUR = 3
    for n in range(3):
        assert sign_up(Client(), f"lab{n}").status_code == 302
    response = sign_up(Client(), "lab3")
    assert response.status_code == 400
    assert "Your address made 3 accounts in the last hour" in response.text
    assert "try again in an hour" in response.text
    assert not User.objects.filter(username="lab3").exists()
    # Another address still signs up.
    assert sign_up(Client(), "lab3", address="198.51.100.9").status_code == 302
    assert Account.objects.get(user__username="lab3").signed_up_from == "198.51.100.9"


def test_the_limit_counts_the_last_hour_only(settings) -> None:
    settings.SIGN_UP_LIMIT_PER_HOUR = 1
    assert sign_up(Client(), "early").status_code == 302
    assert sign_up(Client(), "second").status_code == 400
    Account.objects.filter(user__username="early").update(
        created_at=Account.objects.get(user__username="early").created_at.replace(year=2020)
    )
    assert sign_up(Client(), "second").status_code == 302


def test_an_ipv6_network_counts_as_one_address(settings) -> None:
    settings.SIGN_UP_LIMIT_PER_HOUR = 1
    assert sign_up(Client(), "v6a", address="2001:db8:1:2::1").status_code == 302
    # Another host of the same /64 is the same client; another /64 is not.
    assert sign_up(Client(), "v6b", address="2001:db8:1:2:ffff::9").status_code == 400
    assert sign_up(Client(), "v6b", address="2001:db8:1:3::1").status_code == 302
    assert address_group("::ffff:192.0.2.1") == "192.0.2.1"


def test_behind_a_trusted_proxy_the_client_is_the_address_it_appended(rf, settings) -> None:
    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    assert client_address(request) == "10.0.0.2"  # no proxy trusted: the header is ignored
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request) == "203.0.113.7"  # the forged left entry is not used
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_address(request) == "6.6.6.6"
    settings.TRUSTED_PROXY_COUNT = 3
    assert client_address(request) == "10.0.0.2"


def test_the_limit_reads_the_address_the_proxy_saw(settings) -> None:
    settings.SIGN_UP_LIMIT_PER_HOUR = 1
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"
    assert sign_up(Client(), "a1", proxy, **{"X-Forwarded-For": "203.0.113.7"}).status_code == 302
    # A client cannot reset its count by sending its own X-Forwarded-For entry first.
    forged = {"X-Forwarded-For": "1.2.3.4, 203.0.113.7"}
    assert sign_up(Client(), "a2", proxy, **forged).status_code == 400
    other = {"X-Forwarded-For": "198.51.100.9"}
    assert sign_up(Client(), "a2", proxy, **other).status_code == 302


@pytest.mark.parametrize(
    "look_alike",
    [
        "admın",  # dotless i
        "ＡＤＭＩＮ",  # fullwidth
        "Admin",  # case
        "аdmin",  # Cyrillic а: mixed scripts
        "adrnin",  # r n for m
        "𝐚𝐝𝐦𝐢𝐧",  # mathematical bold
    ],
)
def test_a_username_confusable_with_a_taken_one_is_refused(look_alike: str) -> None:
    UserFactory(username="admin")
    response = sign_up(Client(), look_alike)
    assert response.status_code == 400
    # Django's form folds fullwidth letters and case itself ("already exists"); the skeleton
    # catches the rest.
    assert (
        "that username is taken, or looks too much like one that is" in response.text
        or "A user with that username already exists." in response.text
    )
    assert User.objects.count() == 1


def test_distinct_names_are_not_confused() -> None:
    UserFactory(username="admin")
    for name in ("administrator", "adnim", "ada", "admin2"):
        assert sign_up(Client(), name, address=f"192.0.2.{len(name)}").status_code == 302, name


def test_skeletons_follow_unicode_confusables() -> None:
    assert username_skeleton("b0b") == username_skeleton("bob")
    assert username_skeleton("user_1") == username_skeleton("user_l")
    assert username_skeleton("Ｇｒａｃｅ") == username_skeleton("grace")
    assert username_skeleton("grace") != username_skeleton("grade")


def test_every_user_gets_its_skeleton_however_it_was_made(client: Client) -> None:
    # Made in the Django admin (or createsuperuser, or the demo): the same check covers it.
    root = UserFactory(username="root", role="admin", is_superuser=True)
    client.force_login(root)
    client.post(
        "/admin/auth/user/add/",
        {
            "username": "ops",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "usable_password": "true",
        },
    )
    assert Account.objects.get(user__username="ops").username_skeleton == username_skeleton("ops")
    assert sign_up(Client(), "0ps").status_code == 400
    # Renaming a user moves its skeleton.
    ops = User.objects.get(username="ops")
    ops.username = "operations"
    ops.save()
    assert sign_up(Client(), "0ps").status_code == 302


def test_an_admin_made_look_alike_keeps_no_skeleton_and_changes_nothing() -> None:
    UserFactory(username="admin")
    twin = UserFactory(username="Admin")  # made outside sign-up, e.g. by a command
    assert Account.objects.get(user=twin).username_skeleton is None
    assert Account.objects.get(user__username="admin").username_skeleton == username_skeleton(
        "admin"
    )


def test_the_check_is_one_indexed_query(django_assert_num_queries) -> None:
    from accounts.models import Account as AccountModel

    UserFactory(username="admin")
    with django_assert_num_queries(1):
        assert AccountModel.objects.filter(username_skeleton=username_skeleton("admın")).exists()
    assert AccountModel._meta.get_field("username_skeleton").unique


def test_the_service_refuses_every_look_alike_itself() -> None:
    from accounts.services import researcher_sign_up
    from plumbing.errors import ApplicationError

    UserFactory(username="admin")
    for name in ("ＡＤＭＩＮ", "Admin", "admın", "аdmin"):
        with pytest.raises(ApplicationError, match="looks too much like one that is"):
            researcher_sign_up(
                username=name, email="x@example.org", password=PASSWORD, address="192.0.2.1"
            )


@pytest.mark.django_db(transaction=True)
def test_concurrent_sign_ups_from_one_address_stay_within_the_limit(settings) -> None:
    import threading

    from django.db import close_old_connections

    from accounts.services import researcher_sign_up
    from plumbing.errors import ApplicationError

    settings.SIGN_UP_LIMIT_PER_HOUR = 3
    outcomes: list[str] = []
    start = threading.Barrier(10)

    def one(n: int) -> None:
        start.wait()
        try:
            researcher_sign_up(
                username=f"burst{n}",
                email=f"b{n}@example.org",
                password=PASSWORD,
                address="203.0.113.7",
            )
            outcomes.append("created")
        except ApplicationError:
            outcomes.append("refused")
        finally:
            close_old_connections()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["created"] * 3 + ["refused"] * 7
    assert Account.objects.filter(signed_up_from="203.0.113.7").count() == 3


def test_a_name_with_combining_marks_is_a_look_alike() -> None:
    from accounts.services import researcher_sign_up
    from plumbing.errors import ApplicationError

    # Issue 23, item 6: "researcher" with a combining acute (U+0301) was accepted beside
    # "researcher"; the mark sits on the last letter and is easily missed.
    UserFactory(username="researcher")
    response = sign_up(Client(), "researcher\u0301")
    assert response.status_code == 400
    assert "that username is taken, or looks too much like one that is" in response.text
    # Precomposed, stacked, or on another letter: the same name.
    for name in ("researcheŕ", "re\u0301\u0301searcher", "résearcher", "researcher\u20dd"):
        with pytest.raises(ApplicationError, match="looks too much like one that is"):
            researcher_sign_up(
                username=name, email="x@example.org", password=PASSWORD, address="192.0.2.1"
            )
    assert User.objects.count() == 1
    # Spacing marks are letters of their script, and stay (Devanagari: कि is not क).
    assert username_skeleton("कि") != username_skeleton("क")
