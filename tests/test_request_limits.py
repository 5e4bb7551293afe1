"""A request body over REQUEST_MAX_BYTES is refused before Django reads it into a temporary
file, on pages and on the API; a body within it goes through."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import multipartparser
from django.test import Client, override_settings

from leaderboard.models import Submission
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def body_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: object) -> None:
        raise AssertionError("the request body was read")

    monkeypatch.setattr(multipartparser.MultiPartParser, "parse", refuse)


def predictions(size: int) -> SimpleUploadedFile:
    return SimpleUploadedFile("p.jsonl", b"x" * size, content_type="application/jsonl")


@override_settings(REQUEST_MAX_BYTES=4096)
@pytest.mark.parametrize("path", ["/leaderboard/submit/", "/ingest/"])
def test_a_page_upload_over_the_limit_is_a_413_page(
    client: Client, body_never_read: None, path: str
) -> None:
    client.force_login(UserFactory(role="researcher"))
    response = client.post(path, {"predictions": predictions(10_000)})
    assert response.status_code == 413
    text = response.content.decode()
    assert "at most 4.0\xa0KB can be sent at once" in text
    assert "<!doctype html>" in text  # the site's page, not a bare error
    assert not Submission.objects.exists()


@override_settings(REQUEST_MAX_BYTES=4096)
def test_an_api_upload_over_the_limit_is_a_413_in_json(
    client: Client, body_never_read: None
) -> None:
    client.force_login(UserFactory(role="researcher"))
    response = client.post("/api/submissions/create/", {"predictions": predictions(10_000)})
    assert response.status_code == 413
    assert "at most 4.0\xa0KB" in response.json()["detail"]


@override_settings(REQUEST_MAX_BYTES=64 * 1024)
def test_a_body_within_the_limit_reaches_the_view(client: Client) -> None:
    client.force_login(UserFactory(role="researcher"))
    response = client.post("/api/submissions/create/", {"predictions": predictions(1_000)})
    assert response.status_code == 400  # the view's own answer: the other fields are missing
