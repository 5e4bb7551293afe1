"""The researcher's and reader's leaderboard pages in a real browser: the board (own rows,
compare ticks, columns in the URL, the size chart), the compare page, a model page (its
charts beside the board's median), the regression page, the submit form and the inference
form. Each is checked at 1440 px and 390 px wide (screenshots under the test's tmp dir), with
no page-level sideways scroll, its key controls in view, and no serious or critical axe-core
violation (tests/browser/pagecheck.py)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from leaderboard import services
from leaderboard.models import Submission
from tests.browser.pagecheck import check_page
from tests.browser.test_annotation_tools import log_in
from tests.factories import SubmissionFactory, UserFactory
from tests.leaderboard.inference_helpers import registered
from tests.leaderboard.test_board_pages import property_tables, scored

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def board() -> dict[str, Submission]:
    """Thirty real tables (half with row-group labels), one question each; two researchers'
    scored rows with real per-question answers, one other row and a paper row; the
    regression over them."""
    gold = property_tables()
    rita = UserFactory(username="rita", role="researcher")
    other = UserFactory(username="olaf", role="researcher")
    rows = {
        "mine": scored(rita, gold, right=20, model_name="rita-table-lm-7b-instruct"),
        "theirs": scored(other, gold, right=11, model_name="olaf-13b", parameters_billions=13),
        "paper": SubmissionFactory(
            kind="reported",
            owner=None,
            model_name="Llama-3.1-70B (paper)",
            parameters_billions=70,
            recall=0.55,
            rules=("2025-05",),
        ),
        "big": SubmissionFactory(model_name="large-70b", parameters_billions=70, recall=0.62),
    }
    services.property_regression_refresh()
    return rows


def test_the_board_marks_own_rows_compares_two_and_keeps_columns_in_the_url(
    live_server, page: Page, board: dict[str, Submission], tmp_path
) -> None:
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboard/")
    mine = page.locator("tr.own-row")
    expect(mine).to_have_count(1)
    expect(mine).to_contain_text("rita-table-lm-7b-instruct")
    expect(mine.locator(".badge.own")).to_have_text("yours")
    # The paper's row offers no tick and says why; the chart is drawn, its figures in a table.
    paper = page.locator("tr.reported-row")
    expect(paper.locator('input[name="pick"]')).to_have_count(0)
    expect(paper.locator(".pick")).to_contain_text("the paper gives no per-question answers")
    assert page.evaluate("() => Boolean(window.Chart && Chart.getChart('size-chart'))")
    expect(page.locator("#size-chart-table tbody tr")).to_have_count(4)
    check_page(page, "board", tmp_path, controls=("#compare-button", "#size-chart"))

    # Columns: hiding one drops it from the table and keeps the choice in the URL.
    page.locator("#columns-chooser summary").click()
    page.get_by_role("checkbox", name="CC").uncheck()
    expect(page).to_have_url(re.compile(r"cols=1"))
    expect(page.locator("table.board thead")).not_to_contain_text("CC")
    page.reload()
    expect(page.locator("table.board thead")).not_to_contain_text("CC")
    expect(page.locator("table.board thead")).to_contain_text("Recall")

    # Two ticks, and the button compares them.
    button = page.locator("#compare-button")
    expect(button).to_be_disabled()
    page.locator(f'input[name="pick"][value="{board["mine"].pk}"]').check()
    page.locator(f'input[name="pick"][value="{board["theirs"].pk}"]').check()
    expect(button).to_be_enabled()
    expect(page.locator(f'input[name="pick"][value="{board["big"].pk}"]')).to_be_disabled()
    button.click()
    expect(page).to_have_url(re.compile(r"/leaderboard/compare/\?"))
    expect(page.get_by_role("heading", level=2)).to_contain_text(
        "rita-table-lm-7b-instruct vs olaf-13b"
    )
    expect(page.locator("#comparison-table")).to_contain_text("Recall")
    check_page(page, "compare", tmp_path, controls=("#comparison-table",))


def test_on_a_phone_the_board_opens_on_its_rows_with_name_and_recall_in_view(
    live_server, page: Page, board: dict[str, Submission], tmp_path
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/leaderboard/")
    first = page.locator("table.board tbody tr").first
    # The first row starts on the first screen: the filters are folded behind one control.
    box = first.bounding_box()
    assert box is not None and box["y"] < 844, box
    search = page.locator("#id_q")
    expect(search).to_be_hidden()
    # Its model name and its recall (the board's main score) without scrolling sideways.
    for cell in (first.locator("td.model-cell a"), first.locator("td.main-score")):
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    expect(first.locator("td.main-score")).to_have_text(re.compile(r"^0\.\d\d"))
    # One control opens the filters; they work as on a wide screen.
    page.locator("#board-filters-box > summary").click()
    expect(search).to_be_visible()
    search.fill("olaf")
    expect(page.locator("table.board tbody tr")).to_have_count(1)
    check_page(page, "board-phone-filters", tmp_path, widths=(390,), controls=("#id_q",))
    # On a wide screen the filters are simply there.
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/leaderboard/")
    expect(page.locator("#id_q")).to_be_visible()
    expect(page.locator("#board-filters-box > summary")).to_be_hidden()


def test_a_model_page_charts_its_groups_beside_the_boards_median(
    live_server, page: Page, board: dict[str, Submission], tmp_path
) -> None:
    page.goto(f"{live_server.url}{board['mine'].get_absolute_url()}")
    table = page.locator("#by-table-property-table")
    expect(table.locator("thead")).to_contain_text("Board median")
    expect(table.locator("tbody tr")).not_to_have_count(0)
    assert page.evaluate("() => Boolean(window.Chart && Chart.getChart('by-table-property-chart'))")
    controls = ("#by-table-property-chart", "#by-table-property-table")
    check_page(page, "model-page", tmp_path, controls=controls)


def test_the_regression_page_charts_the_coefficients_with_their_intervals(
    live_server, page: Page, board: dict[str, Submission], tmp_path
) -> None:
    page.goto(f"{live_server.url}/leaderboard/regression/")
    expect(page.locator("#coefficients-table")).to_contain_text("Row group label")
    expect(page.locator("#coefficients-table thead")).to_contain_text("95% interval")
    assert page.evaluate("() => Boolean(window.Chart && Chart.getChart('coefficients-chart'))")
    check_page(page, "regression", tmp_path, controls=("#coefficients-chart",))


def test_the_submit_and_inference_forms_show_every_problem_at_once(
    live_server, page: Page, tmp_path
) -> None:
    page.console.expect(r"status of 400 ")  # the forms are sent with problems on purpose
    UserFactory(username="rita", role="researcher")
    registered("http://127.0.0.1:9/v1", name="lab-vllm")
    log_in(page, live_server.url, "rita")

    page.goto(f"{live_server.url}/leaderboard/submit/")
    submit = "form.stacked button[type=submit]"
    check_page(page, "submit", tmp_path, controls=("#id_model_name", submit))
    page.locator(submit).click()
    summary = page.locator("#form-problems")
    expect(summary).to_contain_text("fix what is marked")
    # The model name, the weights and the file at once, not one per try.
    expect(page.locator(".errorlist, .field-error")).not_to_have_count(0)
    assert page.locator("[aria-invalid=true]").count() >= 3
    check_page(page, "submit-errors", tmp_path, controls=("#form-problems",))

    page.goto(f"{live_server.url}/leaderboard/inference/new/")
    check_page(page, "inference-new", tmp_path, controls=("#id_model_name",))
    page.get_by_role("button", name="Start the run").click()
    expect(page.locator("#form-problems")).to_contain_text("Nothing was started")
    assert page.locator("[aria-invalid=true]").count() >= 2
    check_page(page, "inference-new-errors", tmp_path, controls=("#form-problems",))
