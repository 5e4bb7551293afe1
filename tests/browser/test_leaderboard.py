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
    names = page.locator("table.board tbody tr td:nth-child(3) > a")
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
    expect(
        page.get_by_text("No model on the real tables' board matches these filters yet.")
    ).to_be_visible()


def test_the_vision_board_is_separate(live_server, page: Page, board: None) -> None:
    SubmissionFactory(
        model_name="seeing-eye", modality="vision", table_format="image", precision=None, f1=None
    )
    page.goto(f"{live_server.url}/leaderboard/")
    page.get_by_role("link", name="Vision-language models").click()
    names = page.locator("table.board tbody tr td:nth-child(3) > a")
    expect(names).to_have_text(["seeing-eye"])
    expect(page.locator("table.board thead")).not_to_contain_text("Precision")


def test_a_reader_chooses_the_question_set_and_the_rules_version(
    live_server, page: Page, board: None
) -> None:
    SubmissionFactory(
        kind="reported", owner=None, model_name="paper-row", recall=0.5, rules=("2025-05",)
    )
    SubmissionFactory(model_name="on-the-test-split", split="test", recall=0.7)
    newer = SubmissionFactory(model_name="newer-rules", recall=0.1, rules=("2025-05",))
    newer.scores.create(rules="2025-10", recall=0.95)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto(f"{live_server.url}/leaderboard/")
    names = page.locator("table.board tbody tr td:nth-child(3) > a")
    shows = page.locator("#board-shows")
    expect(shows).to_contain_text("All questions on real tables, scored with the 2025-05 rules")
    expect(names).to_have_text(
        ["beta-closed", "paper-row", "gamma-medium", "alpha-small", "newer-rules"]
    )
    expect(page.locator("tr.reported-row")).to_contain_text("reported in paper · 2025-05")

    # The 2025-10 rules: the same question set, its own figures, and no paper rows. On a
    # phone the filters open from their one control.
    page.locator("#board-filters-box > summary").click()
    page.select_option("#id_rules", "2025-10")
    expect(shows).to_contain_text("scored with the 2025-10 rules")
    expect(shows).to_contain_text("The paper's rows are 2025-05 figures")
    expect(names).to_have_text(["newer-rules", "beta-closed", "gamma-medium", "alpha-small"])
    expect(page).to_have_url(re.compile(r"rules=2025-10"))

    # The test split: only rows scored on it.
    page.select_option("#id_split", "test")
    expect(shows).to_contain_text("Test split on real tables, scored with the 2025-10 rules")
    expect(names).to_have_text(["on-the-test-split"])
    # The exports follow the choice.
    expect(page.get_by_role("link", name="CSV")).to_have_attribute(
        "href", re.compile(r"split=test.*rules=2025-10|rules=2025-10.*split=test")
    )
    # A model page opened from the board shows the version it was chosen under.
    names.first.click()
    expect(page.locator("#rules-shown")).to_contain_text("under the 2025-10 rules")
