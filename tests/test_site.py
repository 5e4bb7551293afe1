"""Site-wide behaviour: the 403 page, how refusals are logged, the favicon, the menu."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from annotation.models import VerifierStanding
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/annotate/", "/annotate/properties/", "/annotate/agreement/"])
def test_a_researcher_on_an_annotation_tool_gets_a_styled_403_saying_why(
    client: Client, path: str
) -> None:
    client.force_login(UserFactory(username="rita", role="researcher"))
    response = client.get(path)
    assert response.status_code == 403
    page = response.content.decode()
    assert '<link rel="stylesheet"' in page and 'class="nav"' in page
    assert "This page is not open to your account" in page
    assert (
        "Why:</strong> The annotation tools are for annotators" in page
        or ("Why:</strong> Your role does not include this tool" in page)
        or "Why:</strong> Only adjudicators" in page
    )
    assert '<span class="tag">researcher</span>' in page
    assert 'href="/leaderboard/submissions/">Go to your workspace' in page


def test_a_removed_verifier_is_told_why_and_who_can_reinstate_them(client: Client) -> None:
    UserFactory(username="boss", role="admin")
    annotator = UserFactory(role="annotator")
    VerifierStanding.objects.create(
        user=annotator,
        removed_at="2026-11-20T10:00:00Z",
        reason="flagged 1 correct gold answer as wrong",
    )
    client.force_login(annotator)
    refused = client.get("/annotate/verify/")
    assert refused.status_code == 403
    page = refused.content.decode()
    assert "You left the verification pool on 2026-11-20: you flagged 1 correct gold answer" in page
    assert "Only an admin (boss) can put you back in the pool" in page
    hub = client.get("/annotate/").content.decode()
    assert "You are out of the verification pool." in hub
    assert "Only an admin (boss) can put you back" in hub
    assert "Start verifying" not in hub and "Start annotating" in hub


def test_expected_refusals_are_logged_as_one_info_line_without_a_traceback(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    client.force_login(UserFactory(role="researcher"))
    with caplog.at_level(logging.INFO, logger="django.request"):
        assert client.get("/annotate/").status_code == 403
    refusals = [r for r in caplog.records if r.name == "django.request"]
    assert refusals, "the 403 is still logged, as INFO"
    assert all(r.levelno == logging.INFO and r.exc_info is None for r in refusals)
    assert "Traceback" not in caplog.text


def test_an_anonymous_403_offers_to_log_in(client: Client, rf) -> None:
    from django.contrib.auth.models import AnonymousUser
    from django.core.exceptions import PermissionDenied

    from hctqa.views import permission_denied

    request = rf.get("/annotate/gold/")
    request.user = AnonymousUser()
    response = permission_denied(request, PermissionDenied("only admins see the gold pool"))
    page = response.content.decode()
    assert response.status_code == 403
    assert "Only admins see the gold pool" in page
    assert "/accounts/login/?next=/annotate/gold/" in page


def test_every_page_links_a_real_favicon(client: Client) -> None:
    page = client.get("/").content.decode()
    assert '<link rel="icon" type="image/png" href="/static/favicon.png">' in page
    icon = finders.find("favicon.png")
    assert icon and Path(icon).read_bytes().startswith(b"\x89PNG")
    legacy = client.get("/favicon.ico")
    assert legacy.status_code == 301 and legacy["Location"] == "/static/favicon.png"


def test_the_menu_folds_into_a_details_element_that_needs_no_script(client: Client) -> None:
    page = client.get("/").content.decode()
    assert '<details class="nav-menu">' in page and "<summary>Menu</summary>" in page
    assert "Sign up" in page.split('<details class="nav-menu">')[1]


def test_the_admin_says_daily_limit_entries(admin_client: Client) -> None:
    page = admin_client.get("/admin/").content.decode()
    assert "Daily limit entries" in page and "entrys" not in page


def test_a_form_refused_by_the_csrf_check_gets_a_page_saying_what_to_do() -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(role="researcher"))
    no_cookie = client.post("/leaderboard/submit/", {"model_name": "m"})
    assert no_cookie.status_code == 403
    page = no_cookie.content.decode()
    assert '<link rel="stylesheet"' in page  # the site's page, not Django's bare one
    assert "That form was out of date, so nothing was saved" in page
    assert "did not send this site&#x27;s security cookie" in page

    client.get("/leaderboard/submit/")  # sets the cookie; the form below carries a stale token
    stale = client.post("/leaderboard/submit/", {"csrfmiddlewaretoken": "x" * 64})
    assert stale.status_code == 403
    assert "security token no longer matches your session" in stale.content.decode()
    assert "Go back, reload the page and send it again" in stale.content.decode()
