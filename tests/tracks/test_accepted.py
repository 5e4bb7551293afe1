"""Accepted tables as extraction items: a real government PDF ingested, its tables found by
the platform's extractor, corrected and accepted by a reviewer; the page and region as the
item, the reviewed grid as its gold, the accepted source on the board."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset.models import Collection, Table
from hctqa.core.extraction.grid import grid_from_canonical
from ingest import services as ingest
from ingest.models import CandidateStatus
from tests.factories import UserFactory
from tracks import files
from tracks.models import TrackItem
from tracks.services.items import items_build

pytestmark = pytest.mark.django_db


def _state(canonical: str) -> dict:
    grid = grid_from_canonical(canonical)
    return {**grid.as_json(), "header_rows": 1, "header_columns": 1}


def test_accepted_tables_are_region_and_page_items_with_the_reviewed_grid(
    data_dir: Path,
) -> None:
    reviewer = UserFactory(role="adjudicator")
    collection = Collection.objects.create(code="eu-stats", name="EU statistics")
    data = (data_dir / "icdar2013-eu" / "eu-004.pdf").read_bytes()
    document = ingest.document_upload(
        user=reviewer, collection=collection, file_name="eu-004.pdf", chunks=[data]
    )
    ingest.document_extract(document_id=document.pk)
    candidates = list(document.candidates.order_by("number"))
    assert candidates
    first, *others = candidates
    # The reviewer corrects the first table's top-left cell, accepts it, and decides the rest.
    corrected = first.machine_csv.replace(first.machine_csv.split(",", 1)[0], "Corrected label", 1)
    ingest.candidate_accept(
        editor=reviewer, candidate=first, state=_state(corrected), base_version=first.version
    )
    for other in others:
        ingest.candidate_accept(
            editor=reviewer,
            candidate=other,
            state=_state(other.machine_csv),
            base_version=other.version,
        )
    items_build(tracks=["extraction"])
    table = Table.objects.get(pk=f"eu-stats--{document.number}--{first.number}")
    region = TrackItem.objects.get(track="extraction", item_id=f"{table.pk}--region")
    assert (region.source, region.mode, region.table_id) == ("accepted", "region", table.pk)
    assert region.inputs["bbox"] == [round(v, 2) for v in first.bbox]
    assert region.inputs["page"] == first.page and region.inputs["kind"] == "pdf"
    assert files.path_of(region.inputs["file"]).read_bytes() == data
    assert "Corrected label" in {c["text"] for c in region.gold["cells"]}
    # Every table of the page was accepted: the page is an item, with each table's box.
    page = TrackItem.objects.get(
        track="extraction", item_id=f"eu-stats--{document.number}--p{first.page}--page"
    )
    on_page = [c for c in candidates if c.page == first.page]
    assert len(page.gold["tables"]) == len(on_page)
    # One split for the document's items: its most hidden table's.
    items = TrackItem.objects.filter(source="accepted")
    splits = set(items.values_list("split", flat=True))
    tables = set(Table.objects.filter(source="eu-stats").values_list("split", flat=True))
    order = ["train", "validation", "test"]
    assert splits == {max(tables, key=order.index)}


def test_a_page_with_a_table_still_to_review_has_no_page_item(data_dir: Path) -> None:
    reviewer = UserFactory(role="adjudicator")
    collection = Collection.objects.create(code="eu-stats", name="EU statistics")
    # Page 1 of eu-003 holds two tables.
    data = (data_dir / "icdar2013-eu" / "eu-003.pdf").read_bytes()
    document = ingest.document_upload(
        user=reviewer, collection=collection, file_name="eu-003.pdf", chunks=[data]
    )
    ingest.document_extract(document_id=document.pk)
    first = document.candidates.order_by("number").first()
    ingest.candidate_accept(
        editor=reviewer, candidate=first, state=_state(first.machine_csv), base_version=1
    )
    pending = document.candidates.filter(status=CandidateStatus.PENDING, page=first.page)
    items_build(tracks=["extraction"])
    assert pending.exists()
    assert TrackItem.objects.filter(source="accepted", mode="region").count() == 1
    assert not TrackItem.objects.filter(source="accepted", mode="page").exists()
