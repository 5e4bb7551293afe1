"""Faults annotators hit during long sessions, in headless Chromium: the server failing for a
few saves, a verifier logged out mid-verdict, a lease lost while typing, the same question
changed on two devices, a plain form sent after the session ended. Nothing typed is lost."""

from __future__ import annotations

import re
import uuid

import pytest
from django.contrib.sessions.models import Session
from playwright.sync_api import Page, Route, expect

from annotation import services
from annotation.models import PropertyAnnotation, VerificationSlot
from dataset.models import Question
from ingest import services as ingest_services
from ingest.models import Candidate
from tests.browser.test_annotation_tools import log_in
from tests.browser.test_people import LOOKUP
from tests.factories import CollectionFactory, ModelQuestionFactory, TableFactory, UserFactory
from tests.ingest.pdfs import TOTAL_ROWS, table_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def fail_first(page: Page, pattern: str, times: int, status: int) -> list[int]:
    """The first ``times`` requests to ``pattern`` get ``status`` (a deploy restarting), as a
    proxy's HTML page; the rest go through. Returns the statuses given, in order."""
    given: list[int] = []

    def handle(route: Route) -> None:
        if len(given) < times:
            given.append(status)
            route.fulfill(status=status, content_type="text/html", body="<h1>Bad gateway</h1>")
        else:
            given.append(200)
            route.continue_()

    page.route(re.compile(pattern), handle)
    return given


def test_a_save_the_server_fails_is_sent_again(live_server, page: Page) -> None:
    page.console.expect(r"status of 502 ")  # the server fails the save on purpose
    annotator = UserFactory(username="ann", role="annotator")
    TableFactory(id="psa--1--1")
    TableFactory(id="psa--1--2")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/properties/psa--1--1/")
    given = fail_first(page, r"/save/$", times=2, status=502)
    for key in ("c", "2", "4"):
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_contain_text(
        "502: your work is kept on this device and will be sent again"
    )
    # Retried by itself, a little later each time, until the server is back.
    expect(page).to_have_url(re.compile("psa--1--2"), timeout=15_000)
    assert given == [502, 502, 200]
    row = PropertyAnnotation.objects.get(annotator=annotator, table_id="psa--1--1")
    assert row.version == 1 and row.properties["asymmetric_multi_level_column"]


def open_a_slot(page: Page, base: str) -> None:
    page.goto(f"{base}/annotate/verify/")
    expect(page).to_have_url(re.compile(r"/annotate/verify/[0-9a-f-]{36}/$"))


def rewrite(page: Page, text: str) -> None:
    page.keyboard.press("a")  # Ambiguous: the rewrite box takes the keys
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    page.keyboard.press("y")


def test_a_verdict_sent_after_the_session_ended_goes_once_logged_in_again(
    live_server, page: Page, settings
) -> None:
    page.console.expect(
        r"status of (401|503) "
    )  # the session ends and the server fails, on purpose
    settings.VERIFICATION_GOLD_PERCENT = 0
    ModelQuestionFactory(table=TableFactory(id="psa--7--1"))
    UserFactory(username="first", role="annotator")
    log_in(page, live_server.url, "first")
    open_a_slot(page, live_server.url)
    given = fail_first(page, r"/submit/$", times=1, status=503)
    rewrite(page, "How many women lived in the South region in 2020?")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_contain_text("503: your verdict is kept on this device")
    page.context.clear_cookies()  # logged out (in another tab) before the retry
    # The status says what to do, not DRF's "Authentication credentials were not provided".
    expect(page.locator("#save-status")).to_contain_text(
        "log in again in another tab; your verdict is kept", timeout=10_000
    )
    other = page.context.new_page()
    log_in(other, live_server.url, "first")
    other.close()
    expect(page).to_have_url(re.compile("/annotate/$"), timeout=20_000)
    assert given[0] == 503 and len(given) >= 3
    slot = VerificationSlot.objects.get(status="done")
    assert slot.rewritten_question == "How many women lived in the South region in 2020?"


def test_a_lease_lost_while_typing_says_so_and_keeps_the_text_in_view(
    live_server, page: Page, settings
) -> None:
    page.console.expect(r"status of 409 ")  # the lease is lost on purpose
    settings.VERIFICATION_GOLD_PERCENT = 0
    ModelQuestionFactory(table=TableFactory(id="psa--7--1"))
    UserFactory(username="first", role="annotator")
    log_in(page, live_server.url, "first")
    open_a_slot(page, live_server.url)
    page.keyboard.press("a")
    page.keyboard.type("Which region had the most women in 2020?")
    # The lease ran out while the page was away and another verifier took the question.
    VerificationSlot.objects.filter(status="leased").update(
        annotator=UserFactory(username="second", role="annotator")
    )
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # back: renews
    expect(page.locator("#conflict")).to_contain_text("went to someone else")
    expect(page.locator("#save-status")).to_have_text("No longer yours")
    expect(page.locator("#submit")).to_be_disabled()
    # What they typed stays on the page, to copy into a flag or the next question.
    expect(page.locator("#rewritten_question")).to_have_value(
        "Which region had the most women in 2020?"
    )


def written(username: str) -> Question:
    return services.question_write(
        annotator=UserFactory(username=username, role="annotator"),
        table=TableFactory(id="psa--1--1"),
        client_key=uuid.uuid4(),
        text="Which region had the most women in 2020?",
        gold_answer="{South}",
        query_properties=LOOKUP,
    )


def test_a_question_changed_on_two_devices_keeps_the_second_change_to_save_knowingly(
    live_server, page: Page, browser
) -> None:
    page.console.expect(r"status of 409 ")  # the second device's change is refused on purpose
    question = written("ann")
    url = f"{live_server.url}/annotate/mine/questions/{question.pk}/"
    log_in(page, live_server.url, "ann")
    page.goto(url)
    laptop = browser.new_context()  # the same annotator on another device
    other = laptop.new_page()
    log_in(other, live_server.url, "ann")
    other.goto(url)
    other.locator("#text").fill("Which region had the fewest women in 2020?")
    other.get_by_role("button", name="Save the change").click()
    expect(other.locator(".messages")).to_contain_text("Saved your change")
    laptop.close()

    page.locator("#text").fill("Which region had the most men in 2019?")
    page.get_by_role("button", name="Save the change").click()
    conflict = page.locator("#conflict")
    expect(conflict).to_contain_text("changed in another tab or window")
    expect(conflict).to_contain_text("Which region had the fewest women in 2020?")
    expect(page.locator("#text")).to_have_value("Which region had the most men in 2019?")
    assert Question.objects.get(pk=question.pk).text == "Which region had the fewest women in 2020?"
    # Saving again is a knowing choice: it replaces the other device's change.
    page.get_by_role("button", name="Save the change").click()
    expect(page.locator(".messages")).to_contain_text("Saved your change")
    assert Question.objects.get(pk=question.pk).text == "Which region had the most men in 2019?"


def test_a_change_sent_after_the_session_ended_comes_back_after_logging_in(
    live_server, page: Page
) -> None:
    question = written("ann")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/annotate/mine/questions/{question.pk}/")
    page.locator("#text").fill("Which region had the most men in 2019?")
    Session.objects.all().delete()  # the session ended (expired, logged out) while they typed
    page.get_by_role("button", name="Save the change").click()
    expect(page).to_have_url(re.compile("/accounts/login/"))
    page.locator("#id_username").fill("ann")
    page.locator("#id_password").fill("a-Long-password-1")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/annotate/mine/questions/{question.pk}/$"))
    expect(page.locator("#draft-restored")).to_contain_text("Restored what you typed here")
    expect(page.locator("#text")).to_have_value("Which region had the most men in 2019?")
    page.get_by_role("button", name="Save the change").click()
    expect(page.locator(".messages")).to_contain_text("Saved your change")
    assert Question.objects.get(pk=question.pk).text == "Which region had the most men in 2019?"
    # Saved: opening the page again shows the saved version, no stale copy.
    page.goto(f"{live_server.url}/annotate/mine/questions/{question.pk}/")
    expect(page.locator("#text")).to_have_value("Which region had the most men in 2019?")
    expect(page.locator("#draft-restored")).to_have_count(0)


def test_an_adjudication_sent_after_logging_in_again_in_another_tab_goes_through(
    live_server, page: Page, settings
) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    question = ModelQuestionFactory(table=TableFactory(id="psa--7--1"), gold_answer="{7}")
    for name, verdict in (
        ("first", services.Verdict("good", True)),
        ("second", services.Verdict("good", False, corrected_answer="{8}")),
    ):
        person = UserFactory(username=name, role="annotator")
        slot = services.verification_claim(annotator=person)
        services.verification_submit(annotator=person, slot_id=slot.pk, verdict=verdict)
    UserFactory(username="judge", role="adjudicator")
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/annotate/adjudication/{question.pk}/")
    page.keyboard.press("a")
    page.keyboard.type("How many women lived in the South region in 2020?")
    # Logging in again in another tab rotates the CSRF token this page was served with.
    other = page.context.new_page()
    log_in(other, live_server.url, "judge")
    other.close()
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messages")).to_contain_text(f"Decided {question.pk}")
    question.refresh_from_db()
    assert question.text == "How many women lived in the South region in 2020?"


def reviewing(live_server, page: Page, print_pdf, settings, tmp_path) -> Candidate:
    """A printed table extracted into one candidate, and an adjudicator logged in to review it."""
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    adjudicator = UserFactory(username="adj", role="adjudicator")
    document = ingest_services.document_upload(
        user=adjudicator,
        collection=CollectionFactory(code="census"),
        file_name="abstract.pdf",
        chunks=[table_pdf(print_pdf, TOTAL_ROWS)],
        enqueue=False,
    )
    ingest_services.document_extract(document_id=document.pk)
    log_in(page, live_server.url, "adj")
    return Candidate.objects.get()


def test_undo_brings_back_edits_after_extracting_again_and_a_reload(
    live_server, page: Page, print_pdf, settings, tmp_path
) -> None:
    candidate = reviewing(live_server, page, print_pdf, settings, tmp_path)
    page.goto(f"{live_server.url}/ingest/candidates/{candidate.pk}/")
    page.keyboard.press("ArrowDown")  # North
    page.keyboard.type("North Qatar")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text("Draft kept", timeout=10_000)
    # Extracting the box again replaces the grid; then the page is reloaded.
    page.locator("#page-panel").focus()
    page.keyboard.press("x")
    expect(page.locator("#page-status")).to_contain_text("Undo brings back your edits")
    expect(page.locator("#save-status")).to_have_text("Draft kept", timeout=10_000)
    page.reload()
    north = page.locator('#edit-grid td[data-row="1"][data-col="0"]')
    expect(north).to_have_text("North")
    page.locator("#edit-grid td[tabindex='0']").focus()
    page.keyboard.press("Control+z")
    expect(north).to_have_text("North Qatar")


def wait_for_count(page: Page, given: list[int], count: int) -> None:
    for _ in range(200):
        if len(given) >= count:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"{len(given)} requests, expected {count}")


def test_sending_by_hand_during_a_backoff_keeps_one_retry_going(
    live_server, page: Page, settings
) -> None:
    page.console.expect(r"status of 503 ")  # the server fails on purpose
    settings.VERIFICATION_GOLD_PERCENT = 0
    ModelQuestionFactory(table=TableFactory(id="psa--7--1"))
    UserFactory(username="first", role="annotator")
    log_in(page, live_server.url, "first")
    open_a_slot(page, live_server.url)
    given = fail_first(page, r"/submit/$", times=100, status=503)
    rewrite(page, "How many women lived in the South region in 2020?")
    for sent in range(1, 5):  # impatient: Enter again while the retry waits
        page.keyboard.press("Enter")
        wait_for_count(page, given, sent)
    # Four failures in a row: the one retry waits 16 s. Retries left over from the earlier
    # sends (due after 2, 4 and 8 s) would have gone meanwhile.
    page.wait_for_timeout(6000)
    assert len(given) == 4


def test_a_change_refused_as_outdated_is_kept_on_the_device_for_the_newer_version(
    live_server, page: Page, browser
) -> None:
    page.console.expect(r"status of 409 ")  # the outdated change is refused on purpose
    question = written("ann")
    url = f"{live_server.url}/annotate/mine/questions/{question.pk}/"
    log_in(page, live_server.url, "ann")
    page.goto(url)
    laptop = browser.new_context()
    other = laptop.new_page()
    log_in(other, live_server.url, "ann")
    other.goto(url)
    other.locator("#text").fill("Which region had the fewest women in 2020?")
    other.get_by_role("button", name="Save the change").click()
    expect(other.locator(".messages")).to_contain_text("Saved your change")
    laptop.close()

    page.locator("#text").fill("Which region had the most men in 2019?")
    page.get_by_role("button", name="Save the change").click()
    expect(page.locator("#conflict")).to_contain_text("changed in another tab or window")
    # The session ends before the knowing second save: it lands on the login page.
    Session.objects.all().delete()
    page.get_by_role("button", name="Save the change").click()
    expect(page).to_have_url(re.compile("/accounts/login/"))
    page.locator("#id_username").fill("ann")
    page.locator("#id_password").fill("a-Long-password-1")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/annotate/mine/questions/{question.pk}/$"))
    expect(page.locator("#draft-restored")).to_contain_text("Restored what you typed here")
    expect(page.locator("#text")).to_have_value("Which region had the most men in 2019?")


def test_an_adjudication_typed_by_one_adjudicator_is_not_shown_to_another(
    live_server, page: Page, settings
) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    question = ModelQuestionFactory(table=TableFactory(id="psa--7--1"), gold_answer="{7}")
    for name, verdict in (
        ("first", services.Verdict("good", True)),
        ("second", services.Verdict("good", False, corrected_answer="{8}")),
    ):
        person = UserFactory(username=name, role="annotator")
        slot = services.verification_claim(annotator=person)
        services.verification_submit(annotator=person, slot_id=slot.pk, verdict=verdict)
    UserFactory(username="judge", role="adjudicator")
    UserFactory(username="judge2", role="adjudicator")
    url = f"{live_server.url}/annotate/adjudication/{question.pk}/"
    log_in(page, live_server.url, "judge")
    page.goto(url)
    page.keyboard.press("a")
    page.keyboard.type("How many women lived in the South region in 2020?")
    page.goto(url)  # the copy is there for the one who typed it
    expect(page.locator("#draft-restored")).to_have_count(1)
    page.context.clear_cookies()
    log_in(page, live_server.url, "judge2")  # someone else on the same device
    page.goto(url)
    expect(page.locator("#text")).to_have_value("")
    expect(page.locator("#draft-restored")).to_have_count(0)


def test_undo_history_kept_on_the_device_is_capped_and_expires(
    live_server, page: Page, print_pdf, settings, tmp_path
) -> None:
    candidate = reviewing(live_server, page, print_pdf, settings, tmp_path)
    url = f"{live_server.url}/ingest/candidates/{candidate.pk}/"
    page.goto(url)
    key = f"hctqa:ingest-history:{candidate.pk}"
    # 50 large steps already kept for this version (5 MB), a copy for another version of a
    # candidate, and one left weeks ago by a candidate long since decided.
    keep = "([key, value]) => localStorage.setItem(key, JSON.stringify(value))"
    big = '{"cells": ["' + "x" * 100_000 + '"]}'
    now_ms = page.evaluate("Date.now()")
    page.evaluate(
        keep, [key, {"version": candidate.version, "saved_ms": now_ms, "undo": [big] * 50}]
    )
    old = {"version": 1, "saved_ms": now_ms - 30 * 86_400_000, "undo": [big]}
    page.evaluate(keep, ["hctqa:ingest-history:999999", old])
    page.reload()
    assert page.evaluate("localStorage.getItem('hctqa:ingest-history:999999')") is None
    page.keyboard.press("ArrowDown")
    page.keyboard.type("North Qatar")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text("Draft kept", timeout=10_000)
    kept = page.evaluate(f"JSON.parse(localStorage.getItem('{key}'))")
    assert len(page.evaluate(f"localStorage.getItem('{key}')")) < 1_100_000
    assert kept["version"] == candidate.version
    # The newest step (the grid before the edit) is kept; the oldest large ones are not.
    assert "North" in kept["undo"][-1] and "North Qatar" not in kept["undo"][-1]
    assert 1 <= len(kept["undo"]) < 12
    # A copy for another version of the candidate is not brought back, and rejecting drops it.
    page.evaluate(keep, [key, {"version": -1, "saved_ms": now_ms, "undo": ["{}"], "redo": []}])
    page.reload()
    expect(page.locator("#edit-grid")).to_be_visible()
    assert page.evaluate(f"localStorage.getItem('{key}')") is None
    page.keyboard.press("ArrowDown")
    page.keyboard.type("North Doha")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text("Draft kept", timeout=10_000)
    assert page.evaluate(f"localStorage.getItem('{key}')") is not None
    page.locator("#reason").fill("a duplicate of candidate 3")
    page.get_by_role("button", name="Reject").click()
    expect(page.locator(".messages")).to_contain_text("rejected")
    assert page.evaluate(f"localStorage.getItem('{key}')") is None
