"""/api/ is the API's index: the docs, the schema, the token and the main collections, each
a link that answers."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_api_root_links_the_docs_the_schema_and_the_collections(client: Client) -> None:
    response = client.get("/api/")
    assert response.status_code == 200
    body = response.json()
    assert body["title"] == "HCT-QA platform API"
    assert urlsplit(body["docs"]).path == "/api/docs/"
    assert urlsplit(body["schema"]).path == "/api/schema/"
    assert urlsplit(body["site"]).path == "/"
    assert urlsplit(body["token"]).path == "/api/auth/token/"
    assert client.get(urlsplit(body["docs"]).path).status_code == 200
    assert client.get(urlsplit(body["schema"]).path).status_code == 200
    for name, url in body["resources"].items():
        # Some need a signed-in client; none is missing.
        assert client.get(urlsplit(url).path).status_code in (200, 401, 403), name
    assert {"tables", "questions", "leaderboard", "releases", "submissions"} <= set(
        body["resources"]
    )


def test_the_api_docs_link_back_to_the_site(client: Client) -> None:
    page = client.get("/api/docs/").content.decode()
    assert '<a href="/">HCT-QA platform</a>' in page
    assert '<a href="/api/">API index</a>' in page
