"""Title, notes and the cells to check (issue 21): kept from extraction, edited on the review
page, stored with the accepted table and shown on its pages. On a real page of the US
Statistical Abstract (tables 324 and 325), through the ingest worker."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.utils.html import escape
from rest_framework.authtoken.models import Token

from dataset.models import TABLE_NOTES_MAX_CHARS, TABLE_TITLE_MAX_CHARS, Table
from hctqa.core.extraction.grid import Grid
from hctqa.core.extraction.table import FLAG_JOINED_LINES, FLAG_NEAR_BOUNDARY, FLAGS
from ingest import services
from ingest.models import Candidate, CandidateDraft, CandidateStatus
from plumbing.errors import ApplicationError
from tests.conftest import DATA_DIR
from tests.factories import CollectionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

STATISTICAL_ABSTRACT = DATA_DIR / "real-pdfs" / "12s0324.pdf"


@pytest.fixture
def adjudicator():
    return UserFactory(role="adjudicator")


@pytest.fixture
def arrests(adjudicator) -> Candidate:
    """Table 324 ("Arrests by Sex and Age"), read by the ingest worker's own path."""
    if not STATISTICAL_ABSTRACT.is_file():
        pytest.fail(f"{STATISTICAL_ABSTRACT} is missing; set HCTQA_DATA_DIR.")
    collection = CollectionFactory(code="census", name="US Census")
    data = STATISTICAL_ABSTRACT.read_bytes()
    document = services.document_upload(
        user=adjudicator, collection=collection, file_name="12s0324.pdf", chunks=[data]
    )
    services.document_extract(document_id=document.pk)
    return document.candidates.get(number=1)


def state_of(candidate: Candidate, **changes) -> dict:
    return {**Grid.from_json(candidate.machine_grid).as_json(), **changes}


def cell_text(candidate: Candidate, row: int, col: int) -> str:
    (text,) = [c[4] for c in candidate.machine_grid["cells"] if (c[0], c[1]) == (row, col)]
    return text


def test_the_worker_keeps_title_notes_and_flags_at_the_cells_of_the_machine_grid(
    arrests: Candidate,
) -> None:
    assert arrests.title.startswith("Table 324. Arrests by Sex and Age: 2009 [In thousands")
    assert arrests.notes.startswith("– Represents zero. X Not applicable.")
    assert "Source: U.S. Department of Justice" in arrests.notes
    other = arrests.document.candidates.get(number=2)
    assert other.title.startswith("Table 325. Arrests by Race: 2009")
    # Each flag sits on the cell it was raised for, in the nested grid the review page edits
    # (row labels moved right by the nesting).
    flags = {(row, col): tuple(f) for row, col, f in arrests.cell_flags}
    assert all(f in FLAGS for found in flags.values() for f in found)
    joined = [cell_text(arrests, r, c) for (r, c), f in flags.items() if FLAG_JOINED_LINES in f]
    assert "Murder and nonnegligent manslaughter" in joined
    near = [cell_text(arrests, r, c) for (r, c), f in flags.items() if FLAG_NEAR_BOUNDARY in f]
    assert near and set(near) == {"(X)"}


def test_accepting_stores_the_edited_title_and_notes_on_the_table(
    arrests: Candidate, adjudicator
) -> None:
    accepted = services.candidate_accept(
        editor=adjudicator,
        candidate=arrests,
        state=state_of(
            arrests,
            title="  Table 324.   Arrests by Sex and Age: 2009\nIn thousands ",
            notes=" Source: FBI. \r\n\r\nX Not applicable.  ",
        ),
        base_version=arrests.version,
    )
    table = Table.objects.get(pk=accepted.table_id)
    assert table.title == "Table 324. Arrests by Sex and Age: 2009 In thousands"
    assert table.notes == "Source: FBI.\n\nX Not applicable."


@pytest.mark.parametrize(
    ("field", "length"),
    [("title", TABLE_TITLE_MAX_CHARS + 1), ("notes", TABLE_NOTES_MAX_CHARS + 1)],
)
def test_a_title_or_notes_too_long_is_refused_and_nothing_written(
    arrests: Candidate, adjudicator, field: str, length: int
) -> None:
    state = state_of(arrests, **{field: "x" * length})
    with pytest.raises(ApplicationError, match=f"the {field} has {length:,} characters") as error:
        services.candidate_accept(
            editor=adjudicator, candidate=arrests, state=state, base_version=1
        )
    assert error.value.field == field
    with pytest.raises(ApplicationError, match=f"the {field} has"):
        services.candidate_draft_save(
            editor=adjudicator, candidate=arrests, state=state, base_version=1, client_ms=1
        )
    arrests.refresh_from_db()
    assert arrests.status == CandidateStatus.PENDING
    assert not Table.objects.exists() and not CandidateDraft.objects.exists()
    with pytest.raises(ApplicationError, match="the title should be text"):
        services.edit_state(state_of(arrests, title=["a"]))
    with pytest.raises(ApplicationError, match="each flag"):
        services.edit_state(state_of(arrests, flags=[[0, 0, ["made_up"]]]))


def test_the_draft_keeps_title_notes_and_marks_and_the_review_page_restores_them(
    arrests: Candidate, adjudicator
) -> None:
    state = state_of(
        arrests, title="Arrests: 2009", notes="Source: FBI.", flags=[[4, 1, ["joined_lines"]]]
    )
    services.candidate_draft_save(
        editor=adjudicator, candidate=arrests, state=state, base_version=1, client_ms=5
    )
    client = Client()
    client.force_login(adjudicator)
    page = client.get(f"/ingest/candidates/{arrests.pk}/")
    payload = json.loads(
        re.search(rb'id="review-state" type="application/json">(.*?)</script>', page.content, re.S)
        .group(1)
        .decode()
    )
    assert payload["has_draft"]
    assert (payload["state"]["title"], payload["state"]["notes"]) == (
        "Arrests: 2009",
        "Source: FBI.",
    )
    assert payload["state"]["flags"] == [[4, 1, ["joined_lines"]]]


def test_the_review_page_marks_where_to_look(arrests: Candidate, adjudicator) -> None:
    client = Client()
    client.force_login(adjudicator)
    page = client.get(f"/ingest/candidates/{arrests.pk}/").content.decode()
    assert 'id="table-title"' in page and 'id="table-notes"' in page
    legend = page[page.index('id="flag-legend"') :]
    legend = legend[: legend.index("</div>")]
    assert f"{len(arrests.cell_flags)} cells to check" in legend
    assert "Murder and nonnegligent manslaughter" in legend
    assert FLAGS[FLAG_NEAR_BOUNDARY] in legend
    # The editor gets the marks and what each means.
    payload = json.loads(
        re.search(r'id="review-state" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert payload["state"]["flags"] == arrests.cell_flags
    assert payload["flag_labels"] == FLAGS
    assert payload["state"]["title"] == arrests.title


def test_extracting_the_box_again_refreshes_title_notes_and_flags(
    arrests: Candidate, adjudicator
) -> None:
    import pdfplumber

    from hctqa.core.extraction import pdf

    # Table 325's box with the source line below it, in place of table 324's.
    x0, top, x1, bottom = arrests.document.candidates.get(number=2).bbox
    box = [x0 - 2, top - 20, x1 + 2, bottom + 60]
    with pdfplumber.open(STATISTICAL_ABSTRACT) as document:
        expected = pdf.region_candidate(document.pages[0], 1, tuple(box))
    assert expected.notes.startswith("Source: U.S. Department of Justice")
    moved = services.candidate_reextract(
        editor=adjudicator, candidate=arrests, bbox=box, strategy="auto"
    )
    moved.refresh_from_db()
    assert moved.version == 2
    assert (moved.title, moved.notes) == (expected.title, expected.notes)
    assert moved.cell_flags == [[r, c, list(f)] for r, c, f in expected.cell_flags]
    assert (moved.title, moved.notes, moved.cell_flags) != (
        arrests.title,
        arrests.notes,
        arrests.cell_flags,
    )


def test_the_api_gives_title_notes_and_flags_and_accepts_them(
    arrests: Candidate, adjudicator
) -> None:
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=adjudicator).key}")
    work = client.get(f"/api/ingest/candidates/{arrests.pk}/").json()
    assert work["title"] == arrests.title and work["notes"] == arrests.notes
    assert work["flags"] == arrests.cell_flags and work["flag_labels"] == FLAGS
    refused = client.post(
        f"/api/ingest/candidates/{arrests.pk}/save/",
        {"state": {**work["state"], "title": "x" * 1001}, "base_version": 1},
        content_type="application/json",
    )
    assert (
        refused.status_code == 400 and "the title has 1,001 characters" in refused.json()["detail"]
    )
    saved = client.post(
        f"/api/ingest/candidates/{arrests.pk}/save/",
        {"state": {**work["state"], "title": "Arrests by sex and age"}, "base_version": 1},
        content_type="application/json",
    )
    assert saved.status_code == 200, saved.json()
    assert saved.json()["state"]["title"] == "Arrests by sex and age"
    assert saved.json()["state"]["notes"] == arrests.notes
    table = Table.objects.get(pk=saved.json()["table"])
    assert (table.title, table.notes) == ("Arrests by sex and age", arrests.notes)
    detail = client.get(f"/api/tables/{table.pk}/").json()
    assert (detail["title"], detail["notes"]) == (table.title, table.notes)


def test_the_table_pages_show_title_above_and_notes_below_escaped() -> None:
    table = TableFactory(
        title="Table 1. <script>alert(1)</script> & more",
        notes="Source: <b>us</b>\nX Not applicable.",
    )
    page = Client().get(table.get_absolute_url()).content.decode()
    title = escape("Table 1. <script>alert(1)</script> & more")
    assert f'<p class="table-title">{title}</p>' in page
    assert "<script>alert(1)" not in page and "<b>us</b>" not in page
    assert "Source: &lt;b&gt;us&lt;/b&gt;<br>X Not applicable." in page
    assert page.index(title) < page.index('id="table-view"') < page.index("Source: &lt;b&gt;")
    # The annotation tools' table panel shows them too.
    annotator = UserFactory(role="annotator")
    client = Client()
    client.force_login(annotator)
    tool = client.get(f"/annotate/properties/{table.pk}/")
    assert tool.status_code == 200
    assert title in tool.content.decode()


def test_the_database_refuses_a_title_or_notes_past_the_limit() -> None:
    from django.db import DataError, IntegrityError, transaction

    table = TableFactory()
    for field, limit in (("title", TABLE_TITLE_MAX_CHARS), ("notes", TABLE_NOTES_MAX_CHARS)):
        with pytest.raises((IntegrityError, DataError)), transaction.atomic():
            Table.objects.filter(pk=table.pk).update(**{field: "x" * (limit + 1)})
