"""Test-split gold answers reach admins only: crawl every page and endpoint as every other role.

New URLs must be added to the crawl (or, if they cannot show gold, to NO_GOLD_POSSIBLE):
test_every_url_is_crawled fails otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from hctqa.core.render import FORMATS
from tests.factories import QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "SECRET-TEST-GOLD-7731"
T = "psa--5--5"
Q = f"{T}--M0"

CRAWL: dict[str, list[str]] = {
    "home": ["/"],
    "annotation:dataset": ["/dataset/", "/dataset/?q=hidden", "/dataset/?split=test"],
    "annotation:table_detail": [f"/tables/{T}/"] + [f"/tables/{T}/?format={f}" for f in FORMATS],
    "annotation:table_download": [f"/tables/{T}/download/{f}/" for f in FORMATS],
    "api-table-list": ["/api/tables/", "/api/tables/?split=test"],
    "api-table-detail": [f"/api/tables/{T}/"],
    "api-table-rendering": [f"/api/tables/{T}/formats/{f}/" for f in FORMATS],
    "api-question-list": [
        "/api/questions/",
        "/api/questions/?split=test",
        f"/api/questions/?table={T}",
    ],
    "api-question-detail": [f"/api/questions/{Q}/"],
    "api-schema": ["/api/schema/"],
    "api-docs": ["/api/docs/"],
    "accounts:account": ["/accounts/"],
}
# Endpoints that take no table or question and cannot carry a gold answer.
NO_GOLD_POSSIBLE = {
    "healthz",
    "media",
    "login",
    "logout",
    "accounts:sign_up",
    "accounts:token_rotate",
    "api-token",
}


def _names(resolver: URLResolver, namespace: str = "") -> Iterator[str]:
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _names(pattern, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield namespace + pattern.name


def test_every_url_is_crawled() -> None:
    names = {n for n in _names(get_resolver()) if not n.startswith("admin:")}
    assert names == set(CRAWL) | NO_GOLD_POSSIBLE


@pytest.fixture
def secret_question() -> None:
    table = TableFactory(id=T, split="test")
    QuestionFactory(table=table, id=Q, gold_answer=f"{{{SECRET}}}", text="What is hidden?")


@pytest.mark.parametrize("role", [None, "annotator", "adjudicator", "researcher"])
def test_no_page_or_endpoint_shows_test_split_gold(
    client: Client, secret_question: None, role: str | None
) -> None:
    if role:
        client.force_login(UserFactory(role=role))
    for urls in CRAWL.values():
        for url in urls:
            response = client.get(url)
            if url == "/accounts/" and role is None:
                assert response.status_code == 302
                continue
            assert response.status_code == 200, url
            assert SECRET not in response.content.decode(), url


def test_the_crawl_would_see_gold_if_it_leaked(client: Client, secret_question: None) -> None:
    # The same crawl as an admin finds the secret: the test above is not blind.
    client.force_login(UserFactory(role="admin"))
    assert SECRET in client.get(f"/tables/{T}/").content.decode()
    assert SECRET in client.get(f"/api/questions/{Q}/").content.decode()


def test_searching_for_a_gold_answer_does_not_find_its_table(
    client: Client, secret_question: None
) -> None:
    # Search covers ids, cells and question text, never gold answers: no oracle for the test split.
    response = client.get(f"/dataset/?q={SECRET}")
    assert response.context["page"].paginator.count == 0
    assert client.get(f"/api/tables/?q={SECRET}").json()["count"] == 0
