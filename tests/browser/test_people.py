"""The people's side in a real browser: each page this work changed, at 1440 px and 390 px
wide (screenshots kept under the test's tmp dir), with no sideways scroll, its key controls
in view, and no serious or critical axe-core violation (tests/browser/pagecheck.py)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Page, expect

from annotation import services
from annotation.models import Flag, PropertyAnnotation, VerificationOutcome, VerifierStanding
from dataset.models import Question
from tests.browser.pagecheck import check_page
from tests.browser.test_annotation_tools import log_in
from tests.factories import LOOKUP_PROPERTIES as LOOKUP
from tests.factories import ModelQuestionFactory, QuestionFactory, TableFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture(autouse=True)
def _no_gold(settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0


def test_the_menu_folds_on_a_phone_and_the_403_page_says_why(
    live_server, page: Page, tmp_path
) -> None:
    page.console.expect(r"status of 403 ")  # the 403 page is what the test looks at
    UserFactory(username="rita", role="researcher")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{live_server.url}/")
    sign_up = page.get_by_role("link", name="Sign up")
    expect(sign_up).to_be_hidden()
    page.get_by_text("Menu").click()  # a <details>: no script needed
    expect(sign_up).to_be_visible()
    box = sign_up.bounding_box()
    assert box and box["x"] + box["width"] <= 390
    check_page(page, "home", tmp_path, controls=(".nav .brand",))
    page.set_viewport_size({"width": 1440, "height": 900})
    page.reload()
    expect(page.get_by_text("Menu")).to_be_hidden()
    expect(sign_up).to_be_visible()  # a row of links on a wide screen

    log_in(page, live_server.url, "rita")
    expect(page).to_have_url(re.compile("/leaderboard/submissions/$"))  # her workspace
    # Forms with fieldsets fit a phone too (a fieldset is as wide as its content by default).
    page.goto(f"{live_server.url}/leaderboard/submit/")
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    page.set_viewport_size({"width": 1280, "height": 900})
    response = page.goto(f"{live_server.url}/annotate/properties/")
    assert response is not None and response.status == 403
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "This page is not open to your account"
    )
    expect(page.locator(".refusal")).to_contain_text("Why: Your role does not include this tool")
    check_page(
        page, "forbidden", tmp_path, controls=(".refusal a[href='/leaderboard/submissions/']",)
    )


def test_a_removed_verifier_sees_why_on_the_hub_and_no_start_button(
    live_server, page: Page, tmp_path
) -> None:
    UserFactory(username="boss", role="admin")
    ann = UserFactory(username="ann", role="annotator")
    VerifierStanding.objects.create(
        user=ann,
        removed_at=datetime(2026, 11, 20, tzinfo=UTC),
        reason="flagged 1 correct gold answer as wrong",
    )
    TableFactory(id="psa--1--1")
    log_in(page, live_server.url, "ann")
    expect(page).to_have_url(re.compile("/annotate/$"))
    notice = page.locator("#pool-removal")
    expect(notice).to_contain_text("you flagged 1 correct gold answer as wrong")
    expect(notice).to_contain_text("Only an admin (boss) can put you back")
    expect(page.get_by_role("link", name="Start verifying")).to_have_count(0)
    check_page(page, "hub-removed", tmp_path, controls=("#pool-removal", ".card progress"))


def test_the_property_tool_keeps_save_in_view_and_opens_its_sheet_with_a_question_mark(
    live_server, page: Page, tmp_path
) -> None:
    UserFactory(username="ann", role="annotator")
    TableFactory(id="psa--1--1")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/properties/psa--1--1/")
    save = page.locator("#save")
    # The panel is longer than the window, and "Save and next" is still on screen.
    assert page.locator(".annotate-panel .ptree").bounding_box()["height"] > 900
    box = save.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 900
    page.locator(".annotate-panel").evaluate("panel => panel.scrollTo(0, 400)")
    box = save.bounding_box()
    assert box and box["y"] + box["height"] <= 900
    expect(page.locator(".progress-line progress").first).to_be_visible()

    sheet = page.locator("#shortcut-sheet")
    expect(sheet).to_be_hidden()
    page.keyboard.press("?")
    expect(sheet).to_be_visible()
    expect(sheet).to_contain_text("save and open the next table")
    expect(sheet).to_contain_text("Standard relational table")
    page.keyboard.press("t")  # a property key does nothing while the sheet is open
    expect(page.locator('input[data-code="standard_relational_table"]')).not_to_be_checked()
    page.screenshot(path=str(tmp_path / "shortcut-sheet.png"))
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    page.get_by_role("button", name="Keys").click()
    expect(sheet).to_be_visible()
    page.keyboard.press("?")
    expect(sheet).to_be_hidden()
    check_page(page, "properties", tmp_path, controls=("#save", "#skip", ".keys-button"))


def test_the_question_tool_lists_existing_questions_warns_on_a_near_duplicate_and_marks_cells(
    live_server, page: Page, tmp_path
) -> None:
    page.console.expect(r"status of 400 ")  # the near duplicate is refused until confirmed
    UserFactory(username="ann", role="annotator")
    table = TableFactory(id="psa--1--1")
    QuestionFactory(
        table=table, id="psa--1--1--M0", text="How many women lived in the South in 2020?"
    )
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/questions/psa--1--1/")
    expect(page.locator("#existing-questions")).to_contain_text(
        "How many women lived in the South in 2020?"
    )
    page.locator("#template").select_option("lookup")
    depth = page.locator('input[data-code="returned_columns_max_depth"]')
    expect(depth).to_have_value("1")
    cell = page.locator('.annotate-table td[data-row="3"][data-col="4"]')  # South, 2020, Female
    cell.click()
    expect(page.locator("#gold_answer")).to_have_value("{8}")
    expect(cell).to_have_class(re.compile("in-answer"))
    expect(depth).to_have_value("2")  # under "2020" and "Female": two header levels
    page.locator("#gold_answer").fill("{7}")
    expect(cell).not_to_have_class(re.compile("in-answer"))
    page.locator("#gold_answer").fill("{8}")
    page.locator("#text").fill("In 2020, how many women lived in the south?")
    check_page(page, "questions", tmp_path, controls=("#save", "#text", "#template"))

    page.keyboard.press("Control+Enter")
    warning = page.locator("#near-duplicate")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("nearly the same as psa--1--1--M0")
    assert Question.objects.count() == 1
    page.keyboard.press("Control+Enter")  # kept anyway
    expect(page).to_have_url(re.compile("/annotate/$"))
    kept = Question.objects.exclude(id="psa--1--1--M0").get()
    assert kept.query_properties["returned_columns_max_depth"] == 2


def test_the_verify_page_has_a_full_width_growing_rewrite_box(
    live_server, page: Page, tmp_path
) -> None:
    UserFactory(username="ann", role="annotator")
    ModelQuestionFactory(table=TableFactory(id="psa--7--1"), gold_answer="{7}")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/verify/")
    page.keyboard.press("a")
    rewrite = page.locator("#rewritten_question")
    expect(rewrite).to_be_focused()
    panel = page.locator("#verify-form").bounding_box()
    box = rewrite.bounding_box()
    assert box and panel and box["width"] >= 0.9 * panel["width"]
    rewrite.fill("\n".join(f"Line {n} of a long rewrite." for n in range(8)))
    grown = rewrite.bounding_box()
    assert grown and grown["height"] > box["height"] * 1.5
    check_page(
        page, "verify", tmp_path, controls=("#submit", "#rewritten_question", ".keys-button")
    )


def test_adjudication_has_the_verify_keys_and_says_what_is_missing(
    live_server, page: Page, tmp_path
) -> None:
    question = ModelQuestionFactory(table=TableFactory(id="psa--7--1"), gold_answer="{7}")
    first, second = UserFactory(role="annotator"), UserFactory(role="annotator")
    for person, verdict in (
        (first, services.Verdict("good", True)),
        (second, services.Verdict("good", False, corrected_answer="{8}")),
    ):
        slot = services.verification_claim(annotator=person)
        services.verification_submit(annotator=person, slot_id=slot.pk, verdict=verdict)
    UserFactory(username="judge", role="adjudicator")
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/annotate/adjudication/")
    check_page(page, "adjudication-queue", tmp_path)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.get_by_role("link", name="Decide").click()
    page.wait_for_load_state("networkidle")
    assert not errors, errors
    page.keyboard.press("Enter")  # nothing chosen yet
    expect(page.locator("#violations")).to_contain_text("Choose a decision first")
    check_page(page, "adjudicate", tmp_path, controls=("#decide", ".keys-button"))
    page.keyboard.press("?")
    expect(page.locator("#shortcut-sheet")).to_contain_text("keep the proposed answer")
    page.keyboard.press("Escape")
    page.keyboard.press("w")
    expect(page.locator("#answer")).to_be_focused()
    page.keyboard.press("Escape")
    page.locator('.annotate-table td[data-row="3"][data-col="4"]').click()
    expect(page.locator("#answer")).to_have_value("{7 | 8}")
    page.keyboard.press("y")  # back to the proposed answer
    expect(page.locator("#answer")).to_have_value("{7}")
    page.keyboard.press("g")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text(f"Decided {question.pk}")
    assert Question.objects.get(pk=question.pk).status == "verified"


def test_the_resolve_page_says_truthfully_what_is_ticked_and_fits_its_panel(
    live_server, page: Page, tmp_path
) -> None:
    table = TableFactory(id="psa--1--1")
    for name, props in (
        ("alice", {"multi_level_column": True}),
        ("bob", {"row_group_label": True}),
    ):
        PropertyAnnotation.objects.create(
            table=table,
            annotator=UserFactory(username=name, role="annotator"),
            properties=props,
            version=1,
            saved_at=datetime(2026, 11, 20, tzinfo=UTC),
        )
    UserFactory(username="judge", role="adjudicator")
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/annotate/agreement/psa--1--1/")
    expect(page.locator("#prefill-note")).to_contain_text("2 properties are a tie")
    expect(page.locator("tr.tie-row")).to_have_count(2)
    header = page.get_by_role("columnheader", name="Decision").bounding_box()
    panel = page.locator(".annotate-panel").bounding_box()
    assert header and panel and header["x"] + header["width"] <= panel["x"] + panel["width"]
    label = page.locator(".resolve-grid tbody th").first.bounding_box()
    assert label and label["height"] < 56  # a property name on one line, not three
    check_page(page, "resolve", tmp_path, controls=("#resolve-form button[type=submit]",))


def test_the_dashboard_draws_outcome_shares_over_time_beside_its_table(
    live_server, page: Page, tmp_path
) -> None:
    for day, rating in ((20, "good"), (20, "nonsensical"), (21, "ambiguous"), (22, "good")):
        question = ModelQuestionFactory(status="verified")
        VerificationOutcome.objects.create(
            question=question,
            rating=rating,
            answer_corrected=False,
            original_text=question.text,
            original_answer=question.gold_answer,
            decided_at=datetime(2026, 11, day, 12, tzinfo=UTC),
        )
    UserFactory(username="judge", role="adjudicator")
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/annotate/verification/")
    canvas = page.locator("#outcome-shares-chart")
    expect(canvas).to_have_attribute("aria-hidden", "true")  # the table speaks for it
    page.wait_for_function("() => window.Chart && Chart.getChart('outcome-shares-chart')")
    drawn = page.evaluate(
        "() => Chart.getChart('outcome-shares-chart').data.datasets.map(d => [d.label, d.data])"
    )
    assert drawn[0] == ["Good", [50, 0, 100]]
    bar = page.locator("progress").first.bounding_box()
    assert bar and bar["width"] > 200  # not the 28 px stub
    check_page(page, "dashboard", tmp_path, controls=("#outcome-shares-chart",))


def test_recent_work_reopens_a_question_and_a_flag_reaches_the_queue(
    live_server, page: Page, tmp_path
) -> None:
    ann = UserFactory(username="ann", role="annotator")
    table = TableFactory(id="psa--1--1")
    question = services.question_write(
        annotator=ann,
        table=table,
        client_key=uuid.uuid4(),
        text="Which region had the most women in 2020?",
        gold_answer="{South}",
        query_properties=LOOKUP,
    )
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/mine/")
    check_page(page, "recent-work", tmp_path, controls=(".recent-work a.button",))
    page.locator(".recent-work a.button").first.click()
    expect(page).to_have_url(re.compile(f"/annotate/mine/questions/{question.pk}/$"))
    check_page(page, "question-change", tmp_path, controls=("#save",))
    page.locator("#text").fill("Which region had the fewest men in 2019?")
    page.get_by_role("button", name="Save the change").click()
    expect(page.locator(".messages")).to_contain_text(f"Saved your change to {question.pk}")
    question.refresh_from_db()
    assert question.text == "Which region had the fewest men in 2019?"

    page.goto(f"{live_server.url}/annotate/properties/psa--1--1/")
    page.get_by_text("Flag a problem").click()
    page.get_by_role("radio", name="Other").check()
    page.get_by_role("textbox", name="Note").fill("The totals row is cut off.")
    page.get_by_role("button", name="Send the flag").click()
    expect(page).to_have_url(re.compile("/annotate/properties/psa--1--1/$"))
    expect(page.locator(".messages")).to_contain_text("Flagged psa--1--1")
    assert Flag.objects.filter(raised_by=ann, reason="other").exists()

    UserFactory(username="judge", role="adjudicator")
    page.context.clear_cookies()
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/annotate/flags/")
    expect(page.locator(".flag-item")).to_contain_text("The totals row is cut off.")
    check_page(page, "flags", tmp_path, controls=(".flag-item button",))
    page.get_by_label("What was done").fill("Asked for a new extraction.")
    page.get_by_role("button", name="Resolve the flag").click()
    expect(page.locator(".messages")).to_contain_text("Flag resolved.")
    expect(page.get_by_text("No open flags.")).to_be_visible()


def test_the_dataset_list_numbers_its_pages_and_shows_each_hit(
    live_server, page: Page, tmp_path
) -> None:
    TableFactory.create_batch(120)
    other = TableFactory(id="arxiv--2--2", canonical_csv="Model,Score\nResNet,0.9\n")
    QuestionFactory(table=other, text="Which model scores best on ImageNet?")
    page.goto(f"{live_server.url}/dataset/")
    numbers = page.locator(".page-numbers")
    expect(numbers.locator("a[aria-current=page]")).to_have_text("Page 1")
    numbers.get_by_role("link", name="Page 3").click()
    expect(numbers.locator("a[aria-current=page]")).to_have_text("Page 3")
    check_page(page, "dataset", tmp_path, controls=(".page-numbers", "#id_q"))
    page.locator("#id_q").fill("imagenet")
    hit = page.locator(".search-hit")
    expect(hit).to_have_count(1)
    expect(hit.locator("mark")).to_have_text("ImageNet")
    check_page(page, "dataset-search", tmp_path, controls=(".search-hit",))
    page.goto(f"{live_server.url}/tables/arxiv--2--2/")
    check_page(page, "table", tmp_path, controls=(".table-scroll",))


def test_a_flag_sent_without_its_note_comes_back_open_with_the_reason_kept(
    live_server, page: Page
) -> None:
    ann = UserFactory(username="ann", role="annotator")
    TableFactory(id="psa--1--1")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/properties/psa--1--1/")
    page.get_by_text("Flag a problem").click()
    page.get_by_role("radio", name="Other").check()
    page.get_by_role("button", name="Send the flag").click()
    # Refused (Other needs a note): the form is open, Other still chosen, the reason shown.
    expect(page).to_have_url(re.compile("/annotate/properties/psa--1--1/"))
    note = page.get_by_role("textbox", name="Note")
    expect(note).to_be_visible()
    expect(page.get_by_role("radio", name="Other")).to_be_checked()
    expect(page.locator("#flag-note-error")).to_have_text("Say what is wrong in the note.")
    expect(note).to_have_attribute("aria-invalid", "true")
    note.fill("The totals row is cut off.")
    page.get_by_role("button", name="Send the flag").click()
    expect(page.locator(".messages")).to_contain_text("Flagged psa--1--1")
    assert Flag.objects.filter(raised_by=ann, reason="other").exists()
    # Another page of the same tool starts with a closed, empty form.
    page.reload()
    expect(note).to_be_hidden()
