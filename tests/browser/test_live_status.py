"""Pages that show work in progress follow it live (htmx polling) until its final state, and
stop asking then: the inference run page up to its board entry's score, the ingest page's
documents, and the releases page's build."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from ingest import services as ingest_services
from releases import services as release_services
from tests.browser.test_annotation_tools import log_in
from tests.factories import (
    CollectionFactory,
    InferenceRunFactory,
    QuestionFactory,
    SubmissionFactory,
    TableFactory,
    UserFactory,
)
from tests.ingest.pdfs import TOTAL_ROWS, table_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def queued_document(print_pdf, settings, tmp_path: Path) -> Any:
    """A PDF a judge uploaded, waiting for the ingest worker."""
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    return ingest_services.document_upload(
        user=UserFactory(username="judge", role="adjudicator"),
        collection=CollectionFactory(code="census", name="US Census"),
        file_name="abstract.pdf",
        chunks=[table_pdf(print_pdf, TOTAL_ROWS)],
        enqueue=False,
    )


@pytest.fixture
def queued_build(settings, tmp_path: Path) -> Any:
    """Release 2026.11, asked for by an admin, waiting for a worker."""
    settings.RELEASES_ROOT = tmp_path / "releases"
    settings.RELEASE_BUILD_PROCESSES = 1
    QuestionFactory(table=TableFactory(id="psa--7--1", split="train"))
    return release_services.release_build_start(
        user=UserFactory(username="root", role="admin"),
        version="2026.11",
        title="November",
        enqueue=False,
    )


def polling(page: Page, selector: str) -> bool:
    return page.locator(selector).get_attribute("hx-trigger") is not None


def test_the_run_page_follows_the_run_and_its_board_entry_until_scored(
    live_server, page: Page
) -> None:
    rita = UserFactory(username="rita", role="researcher")
    run = InferenceRunFactory(created_by=rita, status="running", total=10, answered=4)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    expect(page.locator("#run-counts")).to_have_text("4 of 10 answered")

    # The worker finishes: the run is done and its board entry is being scored.
    entry = SubmissionFactory(owner=rita, model_name=run.model_name, status="scoring", recall=None)
    run.status, run.answered, run.finished_at, run.submission = "done", 10, timezone.now(), entry
    run.save()
    expect(page.locator("#run-progress")).to_contain_text(
        f"Leaderboard entry: {run.model_name} (scoring)"
    )
    assert polling(page, "#run-progress")  # the entry is not scored yet

    entry.status = "scored"
    entry.save()
    expect(page.locator("#run-progress")).to_contain_text(f"{run.model_name} (scored)")
    page.wait_for_timeout(1500)
    assert not polling(page, "#run-progress")  # final: nothing more to ask


def test_the_runs_list_follows_a_board_entry_until_scored(live_server, page: Page) -> None:
    rita = UserFactory(username="rita", role="researcher")
    entry = SubmissionFactory(owner=rita, status="scoring", recall=None)
    InferenceRunFactory(created_by=rita, status="done", submission=entry)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboard/inference/")
    rows = page.locator("#run-rows")
    expect(rows).to_contain_text("Scoring")
    entry.status = "scored"
    entry.save()
    expect(rows).to_contain_text("Scored", timeout=5000)
    page.wait_for_timeout(2500)
    assert not polling(page, "#run-rows")


def test_the_ingest_page_follows_each_document_until_it_is_done(
    live_server, page: Page, queued_document
) -> None:
    document = queued_document
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}/ingest/")
    row = page.locator("#document-rows tr", has_text="census--1")
    expect(row).to_contain_text("Queued (0%)")
    ingest_services.document_extract(document_id=document.pk)  # what the ingest worker does
    expect(row).to_contain_text("Done")
    expect(row).to_contain_text("1 of 1")  # one table to review
    page.wait_for_timeout(2500)
    assert not polling(page, "#document-rows")


def test_the_releases_page_follows_a_build_until_the_release_is_ready(
    live_server, page: Page, queued_build
) -> None:
    build = queued_build
    log_in(page, live_server.url, "root")
    page.goto(f"{live_server.url}/releases/")
    expect(page.locator("#active-build")).to_contain_text("Release 2026.11 is being built")
    cut = page.get_by_role("button", name="Cut the release")
    expect(cut).to_be_disabled()

    release_services.release_build_run(build_id=build.pk)  # what the worker does
    # The page follows: the notice goes, the release is listed, the next one can be cut.
    expect(page.locator("#active-build")).to_have_count(0)
    expect(page.locator("#release-2026\\.11")).to_be_visible()
    expect(cut).to_be_enabled()
    expect(page.get_by_text(re.compile("is being built"))).to_have_count(0)


def settled_like_a_fresh_load(page: Page, section: str) -> None:
    """Once the live section has stopped asking, the page reads exactly as the same page
    loaded afresh: nothing outside the section still says how things were."""
    page.wait_for_timeout(2500)
    assert not polling(page, section)
    live = page.locator("main").inner_text()
    page.reload()
    assert page.locator("main").inner_text() == live


def test_the_document_page_says_nothing_stale_once_done(
    live_server, page: Page, queued_document
) -> None:
    document = queued_document
    log_in(page, live_server.url, "judge")
    page.goto(f"{live_server.url}{document.get_absolute_url()}")
    expect(page.locator("#document-progress")).to_contain_text("waiting for the ingest worker")
    ingest_services.document_extract(document_id=document.pk)
    expect(page.locator("#document-progress")).to_contain_text("Done: 1 of 1 page read.")
    settled_like_a_fresh_load(page, "#document-progress")


def test_the_build_page_says_nothing_stale_once_the_release_is_ready(
    live_server, page: Page, queued_build
) -> None:
    build = queued_build
    log_in(page, live_server.url, "root")
    page.goto(f"{live_server.url}{build.get_absolute_url()}")
    expect(page.locator("#build-progress")).to_contain_text("Queued")
    release_services.release_build_run(build_id=build.pk)
    expect(page.locator("#build-progress")).to_contain_text("Release 2026.11 is ready")
    expect(page.locator(".breadcrumbs")).not_to_contain_text("building")
    settled_like_a_fresh_load(page, "#build-progress")
