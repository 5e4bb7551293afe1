"""Accounts that explain themselves and the team features, in a real browser at 1440 px and
390 px (tests/browser/pagecheck.py): signing up and confirming the email address without
JavaScript; asking for test-split approval and being approved, the
menu's counts and the notifications, emails sent through Django's email framework; assigning
tables and the queue that serves them first; discussing a table with an @mention, through
htmx and without JavaScript."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from playwright.sync_api import Browser, Page, expect

from accounts.mail import email_send
from accounts.models import Account, OutgoingEmail
from annotation.models import Assignment
from discussion.models import Comment
from leaderboard import services as leaderboard
from tests.browser.pagecheck import check_page
from tests.browser.test_annotation_tools import log_in
from tests.factories import QuestionFactory, TableFactory, UserFactory
from tests.leaderboard.conftest import submit

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def _send_waiting_emails() -> None:
    """What the default worker does: send each email waiting."""
    for email_id in OutgoingEmail.objects.filter(status="waiting").values_list("pk", flat=True):
        email_send(email_id=email_id)


def _log_out(page: Page) -> None:
    page.context.clear_cookies()


def test_signing_up_and_confirming_the_address_without_javascript(
    live_server, page: Page, browser: Browser, tmp_path
) -> None:
    page.console.expect(r"status of 400 ")  # a spoiled confirmation link, on purpose
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{live_server.url}/accounts/sign-up/")
    page.get_by_label("Username").fill("newton")
    page.get_by_label("Email").fill("newton@example.org")
    page.locator("#id_password1").fill("a-Long-password-1")
    page.locator("#id_password2").fill("a-Long-password-1")
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile("/accounts/$"))
    state = page.locator("#email-state")
    expect(state).to_contain_text("Unconfirmed — we sent a link to newton@example.org")
    expect(page.locator("#approval-needs-confirmation")).to_contain_text(
        "confirm your email address first"
    )
    expect(page.get_by_role("button", name="Ask for approval")).to_have_count(0)
    check_page(page, "account-unconfirmed", tmp_path, controls=("#email-state button",))
    # Again at once: refused, saying when.
    page.get_by_role("button", name="Send it again").click()
    expect(page.locator(".messages")).to_contain_text("ask for another after")

    _send_waiting_emails()
    [message] = mail.outbox
    assert message.to == ["newton@example.org"]
    found = re.search(r"http://localhost:8000(/accounts/emails/confirm/\S+/)", message.body)
    assert found is not None
    link = live_server.url + found.group(1)
    page.goto(link[:-3] + "xx/")  # cut short
    expect(page.locator("#confirm-error")).to_contain_text("This link is not valid")
    check_page(page, "confirm-invalid", tmp_path)
    page.goto(link)
    check_page(page, "confirm", tmp_path, controls=("#confirm-form button",))

    # The link's page confirms without JavaScript.
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 800})
    plain = context.new_page()
    try:
        log_in(plain, live_server.url, "newton")
        plain.goto(link)
        plain.get_by_role("button", name="Confirm my address").click()
        expect(plain.locator(".messages")).to_contain_text("newton@example.org is confirmed")
        expect(plain.locator("#email-state")).to_contain_text("newton@example.org · confirmed")
    finally:
        context.close()
    page.goto(f"{live_server.url}/accounts/")
    expect(state).to_contain_text("newton@example.org · confirmed")
    expect(page.get_by_role("button", name="Ask for approval")).to_be_visible()
    check_page(page, "account-confirmed", tmp_path, controls=("#approval-form button",))
    page.goto(link)
    expect(page.locator("#confirm-done")).to_contain_text("This link was used already")


def test_asking_for_approval_being_approved_and_told(live_server, page: Page, tmp_path) -> None:
    UserFactory(username="eve", role="researcher", test_split_approved=False)
    UserFactory(username="boss", role="admin", email="boss@example.org")
    table = TableFactory(id="pak--1--1", source="pak", split="test")
    gold = {
        QuestionFactory(table=table, id=f"pak--1--1--M{k}", gold_answer=f"{{a{k}}}").id: (
            f"{{a{k}}}"
        )
        for k in range(12)
    }

    # Eve, on a phone: the submit page points her to the button, the account page has it.
    page.set_viewport_size({"width": 390, "height": 800})
    log_in(page, live_server.url, "eve")
    page.goto(f"{live_server.url}/leaderboard/submit/")
    page.locator("#test-allowance a").click()
    expect(page).to_have_url(re.compile("/accounts/#approval-form$"))
    expect(page.locator("#test-split-status")).not_to_contain_text("write to the platform")
    check_page(page, "account-unapproved", tmp_path, controls=("#approval-form button",))
    page.get_by_label("A short note for the admins").fill(
        "Eve Example, Example Lab; <b>TableLlama</b> on the test split."
    )
    page.get_by_label("When a submission or inference run of mine is scored or fails").check()
    page.get_by_role("button", name="Save email choices").click()
    expect(page.locator(".messages")).to_contain_text("emails go to eve@example.org")
    page.get_by_label("A short note for the admins").fill(
        "Eve Example, Example Lab; <b>TableLlama</b> on the test split."
    )
    page.get_by_role("button", name="Ask for approval").click()
    expect(page.locator("#approval-waiting")).to_contain_text("is with the admins")
    expect(page.get_by_role("button", name="Ask for approval")).to_have_count(0)
    check_page(page, "account-waiting", tmp_path, controls=("#approval-waiting",))
    _send_waiting_emails()
    [to_admin] = mail.outbox
    assert to_admin.to == ["boss@example.org"]
    assert "<b>TableLlama</b>" in to_admin.body and "/accounts/approval-requests/" in to_admin.body

    # The admin sees the request on the hub, and its count in the menu, folded on a phone.
    _log_out(page)
    log_in(page, live_server.url, "boss")
    expect(page).to_have_url(re.compile("/annotate/$"))
    summary = page.locator(".nav-menu > summary")
    expect(summary.locator(".count-badge")).to_have_text(re.compile(r"1$"))  # the request
    request_card = page.locator("#hub-approval-requests")
    expect(request_card).to_contain_text("<b>TableLlama</b>")  # shown as text, escaped
    check_page(
        page, "hub-requests", tmp_path, controls=("#hub-approval-requests button[value=approve]",)
    )
    page.set_viewport_size({"width": 1440, "height": 900})
    expect(page.locator("#menu-approval-requests")).to_contain_text("Approval requests 1")
    page.get_by_role("button", name="Approve eve").click()
    expect(page.locator(".messages")).to_contain_text("The request of eve is approved")
    expect(page.locator("#menu-approval-requests")).to_have_count(0)
    page.goto(f"{live_server.url}/accounts/approval-requests/")
    expect(page.locator("table.listing")).to_contain_text("Approved")
    check_page(page, "approval-requests", tmp_path)
    assert Account.objects.get(user__username="eve").test_split_approved

    # Eve is told in the menu and by email; her submit page counts today's test submissions.
    _send_waiting_emails()
    assert mail.outbox[-1].to == ["eve@example.org"]
    assert "approved your account" in mail.outbox[-1].subject
    _log_out(page)
    log_in(page, live_server.url, "eve")
    page.goto(f"{live_server.url}/leaderboard/submit/")
    expect(page.locator("#test-allowance")).to_contain_text("5 of 5 test submissions left today")
    expect(page.locator("#menu-notifications .count-badge")).to_contain_text("1")
    # A scored submission is one more notice, and an email since she asked for one.
    eve = Account.objects.get(user__username="eve").user
    submission = submit(eve, gold, model_name="TableLlama-7B", split="test")
    leaderboard.submission_score(submission_id=submission.pk)
    page.reload()
    expect(page.locator("#test-allowance")).to_contain_text("4 of 5 test submissions left today")
    page.locator("#menu-notifications").click()
    expect(page.locator(".notification.unread")).to_have_count(2)
    check_page(page, "notifications", tmp_path, controls=(".notification a",))
    page.get_by_role("link", name=re.compile("is scored: recall 100.0% on 12 questions")).click()
    expect(page).to_have_url(re.compile(f"/leaderboard/submissions/{submission.pk}/$"))
    expect(page.locator("#menu-notifications .count-badge")).to_contain_text("1")
    _send_waiting_emails()
    assert "is scored" in mail.outbox[-1].subject and mail.outbox[-1].to == ["eve@example.org"]


def test_assigning_tables_and_the_queue_that_serves_them_first(
    live_server, page: Page, tmp_path
) -> None:
    page.console.expect(r"status of 400 ")  # an assignment refused on purpose
    UserFactory(username="judge", role="adjudicator")
    UserFactory(username="ann", role="annotator")
    UserFactory(username="rita", role="researcher")
    for n in range(1, 4):
        TableFactory(id=f"psa--1--{n}")
    log_in(page, live_server.url, "judge")
    page.get_by_role("link", name="Assign tables").click()
    expect(page).to_have_url(re.compile("/annotate/assignments/$"))
    expect(page.locator("#assign-form")).not_to_contain_text("rita")  # not an annotator
    page.get_by_label("ann").check()
    page.get_by_label("Table ids").fill("psa--1--3 psa--1--2")
    check_page(page, "assignments-form", tmp_path, controls=("#assign",))
    page.get_by_role("button", name="Assign", exact=True).click()
    expect(page.locator(".messages")).to_contain_text(
        "Assigned 2 tables to 1 annotator: 2 new assignments."
    )
    row = page.locator("#assignment-overview tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("ann")
    check_page(page, "assignments", tmp_path, controls=("#assignment-overview button",))
    # A list with an unknown id is refused, and nothing is written.
    page.get_by_label("ann").check()
    page.get_by_label("Table ids").fill("psa--1--1 nope--9")
    page.get_by_role("button", name="Assign", exact=True).click()
    expect(page.locator("#form-problems")).to_contain_text("Nothing was assigned")
    expect(page.locator(".field-error")).to_contain_text("No table has the id nope--9")
    assert Assignment.objects.count() == 2

    _log_out(page)
    log_in(page, live_server.url, "ann")
    expect(page.locator("#hub-assigned")).to_contain_text("Table properties: 2 assigned · 0 done")
    check_page(page, "hub-assigned", tmp_path, controls=("#hub-assigned a",))
    page.get_by_role("link", name="Start annotating").click()
    # psa--1--1 is the lightest table, but her assignments come first, oldest first.
    expect(page).to_have_url(re.compile("/annotate/properties/psa--1--(2|3)/$"))


def test_discussing_a_table_with_a_mention_through_htmx_and_without_javascript(
    live_server, page: Page, browser: Browser, tmp_path
) -> None:
    UserFactory(username="ann", role="annotator")
    UserFactory(username="bob", role="annotator")
    table = TableFactory(id="psa--1--1")
    QuestionFactory(table=table, id="psa--1--1--M0", text="How many women lived in the South?")
    log_in(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/tables/psa--1--1/")
    page.locator(".discussion-link").click()
    expect(page).to_have_url(re.compile("/discussion/tables/psa--1--1/$"))
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    page.get_by_label("Add a comment").fill("Row 3 looks merged, @bob <i>check</i>")
    page.get_by_role("button", name="Post the comment").click()
    comment = page.locator(".comment").first
    expect(comment).to_contain_text("Row 3 looks merged, @bob <i>check</i>")
    expect(comment.locator(".mention")).to_have_text("@bob")
    expect(page.locator("#thread [role=status]")).to_contain_text("Told: bob.")
    expect(page.get_by_label("Add a comment")).to_have_value("")
    assert navigations == []  # swapped in place by htmx
    check_page(page, "table-thread", tmp_path, controls=(".comment-form button",))
    # A question's thread, from the table's: the question, its gold answer, the form.
    page.get_by_role("link", name="How many women lived in the South?").click()
    expect(page).to_have_url(re.compile("/discussion/questions/psa--1--1--M0/$"))
    expect(page.locator(".question-text")).to_have_text("How many women lived in the South?")
    check_page(page, "question-thread", tmp_path, controls=(".comment-form button",))
    page.go_back()

    # Without JavaScript the same form posts and the page comes back at the comment.
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    try:
        log_in(plain, live_server.url, "ann")
        plain.goto(f"{live_server.url}/discussion/tables/psa--1--1/")
        plain.get_by_label("Add a comment").fill("And the total row, @bob.")
        plain.get_by_role("button", name="Post the comment").click()
        last = Comment.objects.latest("pk")
        expect(plain).to_have_url(
            re.compile(f"/discussion/tables/psa--1--1/\\?page=1#c-{last.pk}$")
        )
        expect(plain.locator(".messages")).to_contain_text("Told: bob.")
    finally:
        context.close()

    # Bob, mentioned twice on the thread, has one notice (a thread tells once until read),
    # and follows it to the latest comment.
    _log_out(page)
    log_in(page, live_server.url, "bob")
    page.set_viewport_size({"width": 390, "height": 800})
    expect(page.locator(".nav-menu > summary .count-badge")).to_have_text(re.compile(r"1$"))
    page.get_by_text("Menu").click()
    page.locator("#menu-notifications").click()
    page.get_by_role("link", name=re.compile("ann mentioned you on table psa--1--1")).first.click()
    expect(page).to_have_url(re.compile(r"/discussion/tables/psa--1--1/\?page=1#c-\d+$"))
    check_page(page, "table-thread-bob", tmp_path, controls=("#comment-body",))
