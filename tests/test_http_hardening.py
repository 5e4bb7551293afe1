"""HTTPS redirects and HSTS when HTTPS is on (with /healthz left reachable over plain HTTP for
a load balancer), and the Content-Security-Policy on every page, with no template that needs
an inline script, handler or style."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from django.test import Client, override_settings

from tests.conftest import REPO

pytestmark = pytest.mark.django_db

HTTPS_SETTINGS = (
    "SECURE_SSL_REDIRECT",
    "SECURE_REDIRECT_EXEMPT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
)


def settings_with(env: dict[str, str]) -> dict[str, object]:
    """The HTTPS settings as hctqa/settings.py makes them from ``env``, in a fresh process."""
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        f"print(json.dumps({{k: getattr(s, k) for k in {list(HTTPS_SETTINGS)!r}}}))"
    )
    full = {**os.environ, "DJANGO_SETTINGS_MODULE": "hctqa.settings", **env}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=full, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def https_on() -> dict[str, object]:
    return settings_with({"HTTPS": "true"})


def test_https_turns_on_the_redirect_and_hsts(https_on) -> None:
    assert https_on["SECURE_SSL_REDIRECT"] is True
    assert https_on["SECURE_HSTS_SECONDS"] == 31536000
    assert https_on["SECURE_REDIRECT_EXEMPT"] == ["^healthz$"]
    assert https_on["SESSION_COOKIE_SECURE"] and https_on["CSRF_COOKIE_SECURE"]
    assert https_on["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    plain = settings_with({"HTTPS": "false"})
    assert plain["SECURE_SSL_REDIRECT"] is False and plain["SECURE_HSTS_SECONDS"] == 0


def test_hsts_is_configurable() -> None:
    tuned = settings_with(
        {"HTTPS": "1", "SECURE_HSTS_SECONDS": "600", "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1"}
    )
    assert tuned["SECURE_HSTS_SECONDS"] == 600 and tuned["SECURE_HSTS_INCLUDE_SUBDOMAINS"]


def test_plain_http_is_redirected_and_https_gets_hsts(https_on) -> None:
    values = {k: v for k, v in https_on.items() if k != "SECURE_PROXY_SSL_HEADER"}
    values["SECURE_PROXY_SSL_HEADER"] = tuple(https_on["SECURE_PROXY_SSL_HEADER"])
    with override_settings(**values):
        client = Client()
        response = client.get("/leaderboard/?sort=recall")
        assert response.status_code == 301
        assert response["Location"] == "https://testserver/leaderboard/?sort=recall"
        # Behind the proxy, a request that came in over HTTPS is served, with HSTS.
        response = client.get("/leaderboard/", headers={"X-Forwarded-Proto": "https"})
        assert response.status_code == 200
        assert response["Strict-Transport-Security"] == "max-age=31536000"
        # The load balancer's plain-HTTP health check is answered, not redirected.
        assert client.get("/healthz").status_code in (200, 503)


def test_every_page_carries_the_content_security_policy(client: Client) -> None:
    for path in ("/", "/leaderboard/", "/accounts/login/", "/api/docs/"):
        policy = client.get(path)["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "style-src 'self'" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy


def test_the_api_docs_start_from_a_script_file(client: Client) -> None:
    page = client.get("/api/docs/").text
    assert "<style>" not in page and re.search(r"<script>\s*\S", page) is None
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.text


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an inline event handler"),
    (re.compile(r"\sstyle\s*=", re.I), "an inline style attribute"),
    (re.compile(r"<style\b", re.I), "an inline <style>"),
    (re.compile(r"\shx-on(:|-)", re.I), "an htmx inline handler"),
]


COMMENT = re.compile(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}", re.S)


def test_no_template_needs_an_inline_script_or_style() -> None:
    found = []
    for path in sorted((REPO / "templates").rglob("*.html")):
        # Comments blanked, keeping line numbers.
        text = COMMENT.sub(lambda m: "\n" * m.group().count("\n"), path.read_text())
        for pattern, what in INLINE:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(REPO)}:{line}: {what}")
    assert found == []
