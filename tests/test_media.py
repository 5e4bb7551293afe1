"""Uploaded media: a file under MEDIA_ROOT is served; a path that tries to leave it (``..``,
encoded or not, a NUL byte, a backslash) gets a plain 404 and leaves no traceback or error
line in the web server's log (the probe of issue 23 filled web.log with them)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

PROBES = [
    "/media/..%2f",
    "/media/..%2fsecret_key",
    "/media/..%2F..%2Fetc%2Fpasswd",
    "/media/%2e%2e/secret_key",
    "/media/tables/..%2f..%2fsecret_key",
    "/media/tables/%2e%2e%2f%2e%2e%2fsecret_key",
    "/media/%2fetc%2fpasswd",
    "/media/..%5csecret_key",
    "/media/x%00.png",
    "/media/tables/x.png%00.txt",
]


@pytest.fixture
def media_root(tmp_path: Path) -> Path:
    root = tmp_path / "media"
    (root / "tables").mkdir(parents=True)
    (root / "tables" / "t.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "secret_key").write_text("not for you")
    with override_settings(MEDIA_ROOT=root):
        yield root


def test_a_file_under_media_root_is_served(media_root: Path) -> None:
    response = Client().get("/media/tables/t.png")
    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")


@pytest.mark.parametrize("path", PROBES)
def test_a_path_leaving_media_root_is_a_quiet_404(
    media_root: Path, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.DEBUG):
        response = client.get(path)
    assert response.status_code == 404
    assert b"not for you" not in response.content
    loud = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not loud, [(r.name, r.levelname, r.getMessage()) for r in loud]
