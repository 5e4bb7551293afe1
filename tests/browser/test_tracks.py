"""The tracks in a real browser: /tracks/ (the four tracks), a track's board (sorted, its
figures on one table property through htmx, the baselines marked), a submission's page
followed while it is scored, and the submit form; each at 1440 px and 390 px wide with no
sideways scroll, its key controls in view and no serious axe-core violation."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from dataset.services import release_import
from leaderboard import services
from tests.browser.pagecheck import check_page
from tests.browser.test_annotation_tools import log_in
from tests.factories import UserFactory
from tests.tracks.conftest import pick_tables
from tests.tracks.helpers import gold_predictions, submit_track
from tracks.services.items import items_build

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def boards(synthetic_tables: list, settings, tmp_path: Path) -> dict:
    settings.TRACK_FILES_ROOT = tmp_path / "track-files"
    release_import(tables=pick_tables(synthetic_tables, per_split=6))
    items_build()
    rita = UserFactory(username="rita", role="researcher")
    gold = gold_predictions("sql", "test")
    half = {k: (v if n % 2 else "SELECT 1") for n, (k, v) in enumerate(sorted(gold.items()))}
    rows = {
        "best": submit_track(rita, "sql", gold, split="test", model_name="sql-coder-13b-instruct"),
        "half": submit_track(rita, "sql", half, split="test", model_name="half-right"),
    }
    call_command("score_baselines", "--track", "transformation", stdout=io.StringIO())
    return rows


def test_the_tracks_page_and_a_board(live_server, page: Page, boards: dict, tmp_path) -> None:
    page.goto(f"{live_server.url}/tracks/")
    for name in ("Question answering", "Table extraction", "Table transformation", "NL-to-SQL"):
        expect(page.get_by_role("heading", name=name)).to_be_visible()
    check_page(page, "tracks", tmp_path, controls=("#track-sql .track-links a",))

    page.goto(f"{live_server.url}/leaderboard/tracks/sql/")
    rows = page.locator("table.track-board tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("sql-coder-13b-instruct")
    check_page(page, "sql-board", tmp_path, controls=("table.track-board",))
    # The board starts on execution accuracy, best first; a click turns it round (htmx), and
    # the URL keeps it.
    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_role("link", name="Execution accuracy ▼").click()
    expect(rows.first).to_contain_text("half-right")
    expect(page).to_have_url(re.compile(r"sort=execution_accuracy"))
    # Figures on one item source instead of all items.
    page.locator("#id_group").select_option("source:synthetic")
    expect(page.locator("#board-shows")).to_contain_text("synthetic tables")
    expect(rows).to_have_count(2)

    page.goto(f"{live_server.url}/leaderboard/tracks/transformation/")
    expect(page.locator("tr.baseline-row .badge.baseline")).to_have_text("baseline")
    check_page(page, "transformation-board", tmp_path, controls=("table.track-board",))


def test_submitting_to_a_track_and_following_the_scoring(
    live_server, page: Page, boards: dict, tmp_path
) -> None:
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboard/tracks/extraction/submit/")
    check_page(
        page, "extraction-submit", tmp_path, controls=("#id_mode", "main button[type=submit]")
    )
    best = boards["best"]
    page.goto(f"{live_server.url}{best.get_absolute_url()}")
    expect(page.locator("#track-figures")).to_contain_text("Execution accuracy")
    check_page(page, "sql-submission", tmp_path, controls=("#track-figures",))
    # A new one is queued: its page follows the scoring live, then shows the figures.
    queued = submit_track(
        UserFactory(username="sam", role="researcher"),
        "transformation",
        gold_predictions("transformation", "validation"),
        score=False,
    )
    page.context.clear_cookies()
    log_in(page, live_server.url, "sam")
    page.goto(f"{live_server.url}{queued.get_absolute_url()}")
    expect(page.locator("#submission-status-line")).to_contain_text("Queued")
    services.submission_score(submission_id=queued.pk)
    expect(page.locator("#track-figures")).to_contain_text("Row F1", timeout=10_000)
