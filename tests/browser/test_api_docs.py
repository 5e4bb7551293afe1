"""The API docs (/api/docs/): Swagger UI with the platform's settings and styles passes the
same checks as the site's own pages (tests/browser/pagecheck.py), closed and with an
operation opened."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pagecheck import check_page

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_the_api_docs_pass_axe_at_both_widths(live_server, page: Page, tmp_path) -> None:
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("HCT-QA platform API")
    check_page(
        page, "api-docs", tmp_path, controls=(".swagger-ui .btn.authorize", ".api-docs-nav a")
    )
    # An operation opened: its parameters, responses and "Try it out".
    page.locator(".opblock-summary-control").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    check_page(page, "api-docs-operation", tmp_path, controls=(".try-out__btn",))
    # The way back to the site.
    page.get_by_role("link", name="HCT-QA platform").click()
    expect(page).to_have_url(f"{live_server.url}/")
