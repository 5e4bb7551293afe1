"""Authorization on every private object: a researcher's private submission and its
results, their inference runs, their account and token, and the admins' pages are refused
to everyone else (anonymous, another researcher, an annotator), page and API alike, and
each changing action too. Every URL with an object id is listed here, so a new one must be
added."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import get_resolver
from rest_framework.authtoken.models import Token

from leaderboard.models import InferenceRun, RunStatus
from tests.factories import InferenceRunFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "private-model-xq7"


@pytest.fixture
def owner():
    return UserFactory(username="owner", role="researcher")


@pytest.fixture
def private(owner) -> dict[str, int]:
    submission = SubmissionFactory(owner=owner, model_name=SECRET, visibility="private")
    run = InferenceRunFactory(created_by=owner, model_name=SECRET)
    Token.objects.create(user=owner, key="0" * 40)
    return {"submission": submission.pk, "run": run.pk}


def reads(ids: dict[str, int]) -> list[str]:
    s, r = ids["submission"], ids["run"]
    return [
        f"/leaderboard/submissions/{s}/",
        f"/leaderboard/submissions/{s}/results.csv",
        f"/leaderboard/submissions/{s}/results.json",
        f"/leaderboard/inference/{r}/",
        f"/api/submissions/{s}/",
        f"/api/submissions/{s}/results/",
        f"/api/inference-runs/{r}/",
        "/accounts/",
    ]


def writes(ids: dict[str, int]) -> list[tuple[str, dict]]:
    s, r = ids["submission"], ids["run"]
    return [
        (f"/leaderboard/submissions/{s}/rescore/", {}),
        (f"/leaderboard/submissions/{s}/visibility/", {"visibility": "public"}),
        (f"/leaderboard/submissions/{s}/delete/", {}),
        (f"/leaderboard/inference/{r}/cancel/", {}),
        (f"/leaderboard/inference/{r}/resume/", {}),
        (f"/api/submissions/{s}/rescore/", {}),
        (f"/api/submissions/{s}/visibility/", {"visibility": "public"}),
        (f"/api/submissions/{s}/delete/", {}),
        (f"/api/inference-runs/{r}/cancel/", {}),
        (f"/api/inference-runs/{r}/resume/", {}),
        ("/accounts/token/", {}),
    ]


def outsiders() -> list[Client | None]:
    clients: list[Client | None] = [None]
    for role in ("researcher", "annotator", "adjudicator"):
        client = Client()
        client.force_login(UserFactory(role=role))
        clients.append(client)
    return clients


def test_no_one_else_reads_a_private_object(private, owner) -> None:
    for client in outsiders():
        c = client or Client()
        for url in reads(private):
            response = c.get(url)
            if url == "/accounts/" and client is not None:
                assert response.status_code == 200  # their own account, not the owner's
            else:
                assert response.status_code in (302, 401, 403, 404), (url, response.status_code)
            assert SECRET not in response.content.decode(), url
            assert "0" * 40 not in response.content.decode(), url
    mine = Client()
    mine.force_login(owner)
    for url in reads(private):
        assert mine.get(url).status_code == 200, url


def test_no_one_else_changes_a_private_object(private, owner) -> None:
    from leaderboard.models import Submission

    for client in outsiders():
        c = client or Client()
        for url, data in writes(private):
            response = c.post(url, data)
            if url == "/accounts/token/":
                # Everyone logged in rotates their own token only; the owner's stays.
                assert Token.objects.get(user=owner).key == "0" * 40
                continue
            assert response.status_code in (302, 401, 403, 404), (url, response.status_code)
            if response.status_code == 302:
                assert "/accounts/login/" in response["Location"], url
    submission = Submission.objects.get(pk=private["submission"])
    assert submission.visibility == "private" and submission.status == "scored"
    assert InferenceRun.objects.get(pk=private["run"]).status == RunStatus.FAILED


def test_admins_pages_are_refused_to_everyone_else() -> None:
    pages = [
        "/annotate/gold/",
        "/annotate/generation/",
        "/annotate/synthetic/",
        "/admin/accounts/account/",
        "/releases/builds/1/",
        "/api/releases/builds/1/",
        "/api/verify/gold-pool/",
        "/api/verify/gold-verdicts/",
        "/api/verify/generation-runs/",
    ]
    for client in outsiders():
        c = client or Client()
        for url in pages:
            assert c.get(url).status_code in (302, 401, 403, 404), url


def test_every_url_with_an_object_id_is_covered() -> None:
    covered = {
        "leaderboard/submissions/<int:pk>/",
        "leaderboard/submissions/<int:pk>/results.<str:fmt>",
        "leaderboard/submissions/<int:pk>/rescore/",
        "leaderboard/submissions/<int:pk>/visibility/",
        "leaderboard/submissions/<int:pk>/delete/",
        "leaderboard/inference/<int:pk>/",
        "leaderboard/inference/<int:pk>/cancel/",
        "leaderboard/inference/<int:pk>/resume/",
        "api/submissions/<int:pk>/",
        "api/submissions/<int:pk>/rescore/",
        "api/submissions/<int:pk>/visibility/",
        "api/submissions/<int:pk>/delete/",
        "api/submissions/<int:pk>/results/",
        "api/inference-runs/<int:pk>/",
        "api/inference-runs/<int:pk>/cancel/",
        "api/inference-runs/<int:pk>/resume/",
        "api/releases/builds/<int:pk>/",  # admins only, in test_admins_pages_…
    }
    found = set()

    def walk(resolver, prefix: str = "") -> None:
        for pattern in resolver.url_patterns:
            route = prefix + str(pattern.pattern)
            if hasattr(pattern, "url_patterns"):
                walk(pattern, route)
            elif route.startswith(("leaderboard/", "api/")) and "<int:pk>" in route:
                found.add(route)

    walk(get_resolver())
    assert found == covered
