"""DRF's rate limits: anonymous clients per address, users per account, uploads and the token
endpoint tighter; the defaults leave an annotator's draft saves (one a second) alone."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from hctqa import settings as configured
from tests.factories import TableFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):
    """The production defaults (the test settings turn rate limits off), on an empty cache."""
    cache.clear()
    settings.API_THROTTLE_RATES = dict(configured.API_THROTTLE_RATES)
    yield settings.API_THROTTLE_RATES
    cache.clear()


def test_the_defaults(rates) -> None:
    assert rates == {
        "anon": "120/minute",
        "user": "600/minute",
        "uploads": "60/hour",
        "ingest": "60/hour",
        "auth": "20/minute",
        "compare": "60/hour",
    }


def test_anonymous_clients_are_limited_per_address(rates) -> None:
    rates["anon"] = "3/minute"
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        assert client.get("/api/tables/").status_code == 200
    response = client.get("/api/tables/")
    assert response.status_code == 429
    assert "Request was throttled" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    assert Client(REMOTE_ADDR="198.51.100.9").get("/api/tables/").status_code == 200


def test_users_are_limited_per_account(rates) -> None:
    rates["user"] = "2/minute"
    client = Client()
    client.force_login(UserFactory())
    assert [client.get("/api/tables/").status_code for _ in range(3)] == [200, 200, 429]
    other = Client()
    other.force_login(UserFactory())
    assert other.get("/api/tables/").status_code == 200


def test_a_minute_of_draft_saves_stays_within_the_default_rate(rates) -> None:
    TableFactory(id="psa--1--1")
    client = Client()
    client.force_login(UserFactory(role="annotator"))
    body = {"properties": {"row_group_label": True}, "base_version": 0, "elapsed_ms": 100}
    # One save a second for a minute, with the page's other calls in between.
    for second in range(60):
        response = client.put(
            "/api/annotate/properties/psa--1--1/draft/",
            body | {"client_ms": second + 1},
            content_type="application/json",
        )
        assert response.status_code == 200, (second, response.content)
        assert client.get("/api/annotate/properties/psa--1--1/").status_code == 200


def test_uploads_have_their_own_tighter_limit(rates) -> None:
    rates["uploads"] = "2/hour"
    client = Client()
    client.force_login(UserFactory(role="researcher"))
    codes = [client.post("/api/submissions/create/", {}).status_code for _ in range(3)]
    assert codes == [400, 400, 429]  # refused for being empty, then throttled
    assert client.get("/api/submissions/").status_code == 200  # reading is not an upload


def test_the_token_endpoint_is_limited_per_address(rates) -> None:
    rates["auth"] = "2/minute"
    client = Client(REMOTE_ADDR="203.0.113.7")
    ask = {"username": "nobody", "password": "x"}
    codes = [client.post("/api/auth/token/", ask).status_code for _ in range(3)]
    assert codes == [400, 400, 429]
    assert Client(REMOTE_ADDR="198.51.100.9").post("/api/auth/token/", ask).status_code == 400


def test_a_missing_rate_means_no_limit(rates) -> None:
    rates["anon"] = None
    client = Client()
    assert all(client.get("/api/tables/").status_code == 200 for _ in range(5))
