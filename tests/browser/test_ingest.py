"""A PDF ingested, its table corrected and accepted in headless Chromium: upload with the form,
then the review page with the keyboard only (the page says it works so)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from dataset.models import Table
from ingest import services
from ingest.models import Candidate, Document
from tests.browser.pagecheck import check_page
from tests.browser.test_annotation_tools import log_in
from tests.conftest import DATA_DIR
from tests.factories import CollectionFactory, UserFactory
from tests.ingest.pdfs import TOTAL_ROWS, table_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_ingest_correct_and_accept_with_the_keyboard(
    live_server, page: Page, print_pdf, settings, tmp_path: Path
) -> None:
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    UserFactory(username="adj", role="adjudicator")
    CollectionFactory(code="census", name="US Census")
    pdf = tmp_path / "abstract.pdf"
    pdf.write_bytes(table_pdf(print_pdf, TOTAL_ROWS))

    log_in(page, live_server.url, "adj")
    page.goto(f"{live_server.url}/ingest/")
    page.locator("#id_collection").select_option("census")
    page.locator("#files").set_input_files(str(pdf))
    page.get_by_role("button", name="Upload").click()
    expect(page).to_have_url(re.compile(r"/ingest/documents/\d+/$"))
    expect(page.locator("#document-progress")).to_contain_text("Queued")
    document = Document.objects.get()
    services.document_extract(document_id=document.pk)  # what the ingest worker does
    # The page polls: the candidate appears without a reload.
    link = page.get_by_role("link", name=re.compile(r"census--\d+--1"))
    expect(link).to_be_visible()
    link.click()
    expect(page.locator("#editor")).to_be_visible()
    expect(page.locator(".boxes .box.current")).to_be_visible()
    expect(page.locator("#preview table.hct")).to_be_visible()

    # The page image: the box grows by a point with Shift+arrow, x extracts it again.
    page.locator("#page-panel").focus()
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("x")
    expect(page.locator("#page-status")).to_contain_text("Extracted again")
    candidate = Candidate.objects.get()
    assert candidate.version == 2 and candidate.box_adjusted

    # The grid: arrows, typing, merge, split, undo, rows.
    page.locator("#edit-grid td[tabindex='0']").focus()
    page.keyboard.press("ArrowDown")  # North
    page.keyboard.type("North Qatar")  # typing replaces the cell
    page.keyboard.press("Enter")
    expect(page.locator('#edit-grid td[data-row="1"][data-col="0"]')).to_have_text("North Qatar")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowRight")  # Male
    page.keyboard.press("Shift+ArrowRight")  # and Female
    page.keyboard.press("Alt+m")
    merged = page.locator('#edit-grid td[colspan="2"]')
    expect(merged).to_have_text("Male Female")
    expect(page.locator('#preview th[colspan="2"]')).to_have_text("Male Female")
    page.keyboard.press("Alt+s")
    expect(page.locator('#edit-grid td[colspan="2"]')).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(merged).to_have_text("Male Female")
    page.keyboard.press("Control+z")
    expect(page.locator('#edit-grid td[data-row="0"][data-col="2"]')).to_have_text("Female")
    page.keyboard.press("Alt+ArrowDown")
    expect(page.locator("#edit-grid tr")).to_have_count(5)
    page.keyboard.press("Alt+Backspace")
    expect(page.locator("#edit-grid tr")).to_have_count(4)
    expect(page.locator("#save-status")).to_have_text("Draft kept")

    # Title and notes: typed in, kept in the draft, accepted with the table.
    page.locator("#table-title").fill("Table 7. Population by region <2020>")
    page.locator("#table-notes").fill("Source: Planning Council.\nFigures in thousands.")
    expect(page.locator("#save-status")).to_have_text("Draft kept")
    draft = candidate.drafts.get()
    assert draft.state["title"] == "Table 7. Population by region <2020>"

    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile(rf"/ingest/documents/{document.pk}/$"))
    table = Table.objects.get(pk=f"census--{document.number}--1")
    assert table.canonical_csv == TOTAL_ROWS.replace("North,", "North Qatar,")
    assert table.title == "Table 7. Population by region <2020>"
    assert table.notes == "Source: Planning Council.\nFigures in thousands."
    assert table.image
    candidate.refresh_from_db()
    assert candidate.status == "accepted" and candidate.exact is False


def test_an_image_upload_becomes_an_accepted_table(
    live_server, page: Page, settings, tmp_path: Path
) -> None:
    """A screenshot of a table (PNG): uploaded with the form, read through OCR, checked
    beside what OCR read, and accepted as it came."""
    from hctqa.core.images import render_table_png

    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    UserFactory(username="adj", role="adjudicator")
    CollectionFactory(code="scans", name="Scanned yearbooks")
    picture = tmp_path / "screenshot.png"
    picture.write_bytes(render_table_png(TOTAL_ROWS))

    log_in(page, live_server.url, "adj")
    page.goto(f"{live_server.url}/ingest/")
    page.locator("#id_collection").select_option("scans")
    page.locator("#files").set_input_files(str(picture))
    page.get_by_role("button", name="Upload").click()
    expect(page).to_have_url(re.compile(r"/ingest/documents/\d+/$"))
    document = Document.objects.get()
    assert document.kind == "image"
    services.document_extract(document_id=document.pk)  # what the ingest worker does
    expect(page.locator("#ocr-pages")).to_contain_text("Read through OCR")
    page.get_by_role("link", name=re.compile(r"scans--\d+--1")).click()
    expect(page.locator("#ocr-text")).to_contain_text("North 10 12 22")
    expect(page.locator("#ocr-crop")).to_be_visible()
    check_page(page, "ocr-review", tmp_path, controls=("#ocr-text", "#accept"))
    expect(page.locator("#preview table.hct")).to_contain_text("Female")
    page.get_by_role("button", name=re.compile("Accept into the dataset")).click()
    expect(page).to_have_url(re.compile(rf"/ingest/documents/{document.pk}/$"))
    table = Table.objects.get(pk=f"scans--{document.number}--1")
    assert table.canonical_csv == TOTAL_ROWS
    assert table.image
    assert Candidate.objects.get().exact is True


def test_the_review_grid_marks_where_to_look_on_a_real_page(
    live_server, page: Page, settings, tmp_path: Path
) -> None:
    """Table 324 of the US Statistical Abstract, read by the ingest worker: its flagged cells
    are marked in the grid (not by colour alone: a badge, and why in words), with a legend,
    at 390 px too; a cell once edited loses its mark."""
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    adjudicator = UserFactory(username="adj", role="adjudicator")
    collection = CollectionFactory(code="census", name="US Census")
    data = (DATA_DIR / "real-pdfs" / "12s0324.pdf").read_bytes()
    document = services.document_upload(
        user=adjudicator, collection=collection, file_name="12s0324.pdf", chunks=[data]
    )
    services.document_extract(document_id=document.pk)
    candidate = document.candidates.get(number=1)
    flagged = len(candidate.cell_flags)
    assert flagged >= 3

    log_in(page, live_server.url, "adj")
    page.goto(f"{live_server.url}{candidate.get_absolute_url()}")
    marks = page.locator("#edit-grid td.flagged")
    expect(marks).to_have_count(flagged)
    murder = page.locator("#edit-grid td.flagged", has_text="Murder and nonnegligent")
    expect(murder).to_have_attribute("title", "Check: text joined from several lines")
    expect(murder).to_have_attribute(
        "aria-label", "Murder and nonnegligent manslaughter (check: text joined from several lines)"
    )
    badge = murder.evaluate("td => getComputedStyle(td, '::after').content")
    assert badge == '"?"'
    expect(page.locator("#flag-legend")).to_be_visible()
    expect(page.locator("#flag-legend summary")).to_have_text(f"{flagged} cells to check")
    expect(page.locator("#table-title")).to_have_value(candidate.title)
    check_page(page, "review-flags", tmp_path, controls=("#table-title", "#flag-legend", "#accept"))

    murder.dblclick()
    page.keyboard.press("Control+a")
    page.keyboard.type("Murder")
    page.keyboard.press("Enter")
    expect(marks).to_have_count(flagged - 1)
    expect(page.locator("#flag-legend summary")).to_have_text(f"{flagged - 1} cells to check")
