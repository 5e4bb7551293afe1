from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.factories import SubmissionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def board() -> None:
    SubmissionFactory(model_name="alpha-small", parameters_billions=7, recall=0.3, precision=0.9)
    SubmissionFactory(
        model_name="beta-closed",
        parameters_billions=None,
        weights="closed",
        recall=0.6,
        precision=0.2,
    )
    SubmissionFactory(model_name="gamma-medium", parameters_billions=30, recall=0.45, precision=0.5)


def test_a_reader_sorts_and_filters_the_board(live_server, page: Page, board: None) -> None:
    page.goto(f"{live_server.url}/leaderboard/")
    names = page.locator("table.board tbody tr td:nth-child(2) > a")
    expect(names).to_have_text(["beta-closed", "gamma-medium", "alpha-small"])

    # A column header sorts in place, descending first, then ascending.
    page.locator("thead").get_by_role("link", name=re.compile("^Precision")).click()
    expect(names).to_have_text(["alpha-small", "gamma-medium", "beta-closed"])
    expect(page.locator('th[aria-sort="descending"]')).to_contain_text("Precision")
    page.locator("thead").get_by_role("link", name=re.compile("^Precision")).click()
    expect(names).to_have_text(["beta-closed", "gamma-medium", "alpha-small"])
    expect(page).to_have_url(re.compile(r"sort=precision"))

    # A filter narrows the board and keeps the sort.
    page.select_option("#id_weights", "open")
    expect(names).to_have_text(["gamma-medium", "alpha-small"])
    expect(page).to_have_url(
        re.compile(r"weights=open.*sort=precision|sort=precision.*weights=open")
    )
    page.select_option("#id_size_class", "small")
    expect(names).to_have_text(["alpha-small"])
    page.fill("#id_q", "gamma")
    expect(page.locator("table.board")).to_have_count(0)
    expect(page.get_by_text("No model matches these filters yet.")).to_be_visible()


def test_the_vision_board_is_separate(live_server, page: Page, board: None) -> None:
    SubmissionFactory(
        model_name="seeing-eye", modality="vision", table_format="image", precision=None, f1=None
    )
    page.goto(f"{live_server.url}/leaderboard/")
    page.get_by_role("link", name="Vision-language models").click()
    names = page.locator("table.board tbody tr td:nth-child(2) > a")
    expect(names).to_have_text(["seeing-eye"])
    expect(page.locator("table.board thead")).not_to_contain_text("Precision")
