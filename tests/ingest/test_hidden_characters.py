"""Hidden characters (controls such as NUL, which PostgreSQL refuses in text, and format
characters such as a right-to-left override) never reach a candidate, a draft or a table:
extraction and the review page drop them from cells, title and notes; line breaks in the
notes stay."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dataset.models import Collection, Table
from hctqa.core.extraction.grid import Grid, GridCell
from ingest import services
from ingest.models import CandidateDraft
from ingest.services.extraction import extracted_fields
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

HIDDEN = "\x00\x07\x1b\u202e\u2066\u200b\u200d\ufeff\u00ad"


def _hidden_in(text: str) -> list[str]:
    return [c for c in HIDDEN if c in text]


@pytest.fixture
def adjudicator():
    return UserFactory(role="adjudicator")


@pytest.fixture
def candidate(adjudicator):
    collection = Collection.objects.create(code="web-2024", name="Web pages")
    page = (
        "<html><body><table><tr><th>Re\u202egion<th>Men\u200b"
        "<tr><td>North\u2066<td>1\ufeff0</table></body></html>"
    ).encode()
    document = services.document_upload(
        user=adjudicator, collection=collection, file_name="p\x00age.html", chunks=[page]
    )
    services.document_extract(document_id=document.pk)
    document.refresh_from_db()
    assert document.file_name == "page.html"
    return document.candidates.get()


def test_extraction_drops_hidden_characters(candidate) -> None:
    assert candidate.machine_csv == "Region,Men\nNorth,10\n"
    assert not _hidden_in(str(candidate.machine_grid))
    found = SimpleNamespace(
        strategy="lines",
        bbox=None,
        cell_boxes=[],
        grid=Grid(1, 1, (GridCell(0, 0, 1, 1, "a\x00b\u202ec"),)),
        title="Table 1.\x00 Men\u202e and women",
        notes="Source:\x00 FBI.\u200b\nX Not\x1b applicable.",
        cell_flags=[],
    )
    fields = extracted_fields(found)
    assert fields["machine_csv"] == "abc\n"
    assert fields["title"] == "Table 1. Men and women"
    assert fields["notes"] == "Source: FBI.\nX Not applicable."


def test_the_review_page_drops_them_from_drafts_and_accepted_tables(candidate, adjudicator) -> None:
    state = {
        "n_rows": 2,
        "n_cols": 2,
        "cells": [
            [0, 0, 1, 1, "Reg\x00ion"],
            [0, 1, 1, 1, "Men\u202e"],
            [1, 0, 1, 1, "\u2066North"],
            [1, 1, 1, 1, "1\x070"],
        ],
        "header_rows": 1,
        "header_columns": 1,
        "title": "Men\x00 by\u200b region",
        "notes": "Source:\ufeff census.\r\n\tTotals\x00 rounded\x0cto\tunits.",
    }
    services.candidate_draft_save(
        editor=adjudicator, candidate=candidate, state=state, base_version=1, client_ms=1
    )
    draft = CandidateDraft.objects.get()
    assert not _hidden_in(str(draft.state))
    assert draft.state["cells"][0][4] == "Region"
    assert draft.state["notes"] == "Source: census.\r\n\tTotals rounded\x0cto\tunits."
    accepted = services.candidate_accept(
        editor=adjudicator, candidate=candidate, state=state, base_version=1
    )
    table = Table.objects.get(pk=accepted.table_id)
    assert table.canonical_csv == "Region,Men\nNorth,10\n"
    assert table.title == "Men by region"
    assert table.notes == "Source: census.\nTotals rounded\nto units."


def test_a_rejection_reason_drops_them(candidate, adjudicator) -> None:
    rejected = services.candidate_reject(
        editor=adjudicator, candidate=candidate, reason="not\x00 a \u202etable"
    )
    assert rejected.reject_reason == "not a table"
