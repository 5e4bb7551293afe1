"""Every main page of every role works under the Content-Security-Policy: Chromium reports
any refused script, style, image or connection, and the test fails on it and on any other
console error."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.factories import QuestionFactory, SubmissionFactory, TableFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def violations(page: Page) -> list[str]:
    """What the page reported so far (the ``page`` fixture watches every page, and fails the
    test on anything left at its end)."""
    return page.console.problems


@pytest.fixture
def site() -> dict[str, object]:
    table = TableFactory(id="psa--1--1")
    TableFactory(id="psa--1--2", split="train")
    QuestionFactory(table=table)
    researcher = UserFactory(username="rita", role="researcher")
    breakdowns = {
        "table_properties": [
            {"code": "multi_level_column", "label": "Multi-level columns", "recall": 0.4, "n": 40}
        ],
        "query_properties": [],
        "templates": [],
        "min_group": 1,
    }
    own = SubmissionFactory(owner=researcher, model_name="rita-7b", breakdowns=breakdowns)
    return {"table": table, "submission": own}


def visit(page: Page, base: str, paths: list[str]) -> None:
    for path in paths:
        response = page.goto(base + path)
        assert response is not None and response.status < 400, (path, response)
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")


def log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill("a-Long-password-1")
    page.locator("#id_password").press("Enter")
    # Each role lands on its own workspace.
    expect(page).not_to_have_url(re.compile("/accounts/login/"))


def log_out(page: Page) -> None:
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()


def test_the_listener_catches_a_violation(live_server, page: Page, violations: list) -> None:
    page.goto(f"{live_server.url}/")
    page.console.expect("style-src")  # made on purpose: the test would fail on it otherwise
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<b style=\"color:red\">x</b>')")
    page.wait_for_timeout(200)
    assert any("style-src" in v for v in violations), violations


def test_htmx_injects_no_style_and_its_indicator_is_styled_by_the_site(
    live_server, page: Page, violations: list
) -> None:
    page.goto(f"{live_server.url}/dataset/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.evaluate("() => htmx.config.includeIndicatorStyles") is False
    assert page.evaluate("() => document.querySelectorAll('style').length") == 0
    opacity = """html => {
        const box = document.createElement("div");
        box.innerHTML = html;
        document.body.append(box);
        return getComputedStyle(box.querySelector(".htmx-indicator")).opacity;
    }"""
    assert page.evaluate(opacity, '<span class="htmx-indicator">…</span>') == "0"
    shown = '<div class="htmx-request"><span class="htmx-indicator">…</span></div>'
    page.wait_for_function(f"() => ({opacity})({shown!r}) === '1'")
    assert violations == []


def test_every_role_s_main_pages_run_under_the_policy(
    live_server, page: Page, violations: list, site: dict
) -> None:
    base = live_server.url
    submission = site["submission"]
    visit(
        page,
        base,
        [
            "/",
            "/dataset/",
            "/dataset/coverage/",
            "/tables/psa--1--1/",
            "/leaderboard/",
            "/leaderboard/vision/",
            f"/leaderboard/submissions/{submission.pk}/",
            "/leaderboard/compare/",
            "/leaderboard/regression/",
            "/releases/",
            "/accounts/login/",
            "/accounts/sign-up/",
        ],
    )
    # Swagger UI starts (its script is a file, its styles are no inline block).
    page.goto(f"{base}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("HCT-QA platform API")
    assert violations == []

    log_in(page, base, "rita")
    visit(
        page,
        base,
        [
            "/accounts/",
            "/leaderboard/submit/",
            "/leaderboard/submissions/",
            "/leaderboard/inference/",
            "/leaderboard/inference/new/",
            f"/leaderboard/submissions/{submission.pk}/",
        ],
    )
    # The breakdown bars are <meter>s, drawn with no inline style.
    expect(page.locator("section.chart meter.bar")).to_have_attribute("value", "0.400000")
    # Deleting asks first (a script file, not an inline handler): dismissed, nothing happens.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="rita-7b")).to_be_visible()
    log_out(page)

    UserFactory(username="ann", role="annotator")
    log_in(page, base, "ann")
    visit(
        page,
        base,
        [
            "/annotate/",
            "/annotate/properties/psa--1--1/",
            "/annotate/questions/psa--1--2/",
            "/annotate/verify/",
            "/annotate/mine/",
        ],
    )
    log_out(page)

    admin = UserFactory(username="ada", role="admin", is_superuser=True)
    log_in(page, base, "ada")
    visit(
        page,
        base,
        [
            "/annotate/gold/",
            "/annotate/generation/",
            "/annotate/verification/",
            "/annotate/synthetic/",
            "/annotate/agreement/",
            "/annotate/flags/",
            "/releases/",
            "/admin/",
            "/admin/accounts/account/",
            f"/admin/accounts/account/{admin.pk}/change/",
            f"/admin/leaderboard/submission/{submission.pk}/change/",
            "/admin/auth/user/add/",
        ],
    )
    assert violations == []


def test_a_comment_posted_from_a_resized_box_sets_no_inline_style(
    live_server, page: Page, violations: list
) -> None:
    # Dragging a text box's corner writes its height into a style attribute; htmx used to copy
    # it onto the swapped-in box while settling, which the policy refuses.
    UserFactory(username="ann", role="annotator", password="a-Long-password-1")
    TableFactory(id="psa--1--1")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/discussion/tables/psa--1--1/")
    assert "style" not in page.evaluate("() => htmx.config.attributesToSettle")
    box = page.get_by_label("Add a comment")
    edge = box.bounding_box()
    assert edge is not None
    page.mouse.move(edge["x"] + edge["width"] - 3, edge["y"] + edge["height"] - 3)
    page.mouse.down()
    page.mouse.move(edge["x"] + edge["width"] - 3, edge["y"] + edge["height"] + 80)
    page.mouse.up()
    assert "height" in (box.get_attribute("style") or "")
    box.fill("Row 3 looks merged.")
    page.get_by_role("button", name="Post the comment").click()
    expect(page.locator(".comment").first).to_contain_text("Row 3 looks merged.")
    page.wait_for_timeout(500)  # the settle, after the swap
    assert violations == []
