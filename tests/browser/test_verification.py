"""One full verification in headless Chromium: two annotators disagree on the answer, the
second corrects it by clicking a cell, and an adjudicator decides."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import VerificationSlot
from dataset.models import Question
from tests.browser.test_annotation_tools import log_in
from tests.factories import ModelQuestionFactory, TableFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_verifying_with_the_keyboard_then_adjudicating(live_server, page: Page, settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    question = ModelQuestionFactory(
        table=TableFactory(id="psa--7--1"),
        text="How many women lived in the South in 2020?",
        gold_answer="{7}",
    )
    UserFactory(username="first", role="annotator")
    UserFactory(username="second", role="annotator")
    UserFactory(username="judge", role="adjudicator")

    # The first verifier agrees with everything: g, y, Enter.
    log_in(page, live_server.url, "first")
    page.goto(f"{live_server.url}/annotate/verify/")
    expect(page).to_have_url(re.compile(r"/annotate/verify/[0-9a-f-]{36}/$"))
    expect(page.locator("#question-text")).to_have_text(question.text)
    expect(page.locator("#proposed-answer")).to_have_text("{7}")
    expect(page.locator("#rewrite-field")).to_be_hidden()
    page.keyboard.press("Enter")  # refused: nothing rated yet
    expect(page.locator("#violations")).to_contain_text("Rate the question")
    page.keyboard.press("g")
    page.keyboard.press("y")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile("/annotate/$"))

    # The second finds the answer wrong and clicks the right cell instead.
    page.context.clear_cookies()
    log_in(page, live_server.url, "second")
    page.goto(f"{live_server.url}/annotate/verify/")
    page.keyboard.press("g")
    page.keyboard.press("w")
    expect(page.locator("#corrected_answer")).to_be_focused()
    page.locator("#corrected_answer").fill("")
    page.keyboard.press("Escape")
    page.locator('.annotate-table td[data-row="3"][data-col="4"]').click()  # South, 2020, Female
    expect(page.locator("#corrected_answer")).to_have_value("{8}")
    expect(page.locator("#answer-check")).to_have_text("Format OK")
    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile("/annotate/$"))
    assert Question.objects.get(pk=question.pk).status == "adjudication"
    assert VerificationSlot.objects.filter(question=question, status="done").count() == 2

    # The adjudicator sees both verdicts and decides.
    page.context.clear_cookies()
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/annotate/adjudication/")
    page.get_by_role("link", name="Decide").click()
    expect(page.locator(".annotate-panel")).to_contain_text("{8}")
    page.get_by_label("Good").check()
    page.locator("#answer").fill("{8}")
    page.get_by_role("button", name="Decide and next").click()
    expect(page.locator(".messages")).to_contain_text(f"Decided {question.pk}")
    question.refresh_from_db()
    assert (question.status, question.gold_answer) == ("verified", "{8}")


def test_the_lease_is_kept_while_the_page_is_open_then_let_go_when_idle(
    live_server, page: Page, settings
) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    ModelQuestionFactory(table=TableFactory(id="psa--7--2"))
    UserFactory(username="first", role="annotator")
    log_in(page, live_server.url, "first")
    page.clock.install()
    page.goto(f"{live_server.url}/annotate/verify/")
    expect(page).to_have_url(re.compile(r"/annotate/verify/[0-9a-f-]{36}/$"))

    def expiry():
        return VerificationSlot.objects.get(status="leased").lease_expires_at

    def settled() -> object:
        # Renewals are real requests, answered after the fake clock has moved on: wait until
        # the lease stops moving.
        last = expiry()
        for _ in range(30):
            page.wait_for_timeout(1000)
            now = expiry()
            if now == last:
                break
            last = now
        return last

    claimed = expiry()
    # The annotator looks something up in another tab: the page is hidden, the lease is kept.
    page.evaluate(
        "Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'));"
    )
    page.clock.run_for(61_000)
    renewed = settled()
    assert renewed > claimed
    # Left alone for over half an hour, the page stops renewing and the question can go.
    page.clock.run_for(31 * 60_000)
    idle = settled()
    page.clock.run_for(5 * 60_000)
    assert settled() == idle
