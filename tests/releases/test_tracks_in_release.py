"""Releases carry each track's items: train and validation with their gold, the test split
without, in both editions, with the files they name and a section of the dataset card each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dataset.models import Question, Table
from tests.releases.test_cut_release import edition_text
from tracks.models import TrackItem
from tracks.services.items import items_build

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _track_files(tmp_path: Path, settings) -> None:
    settings.TRACK_FILES_ROOT = tmp_path / "track-files"


def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_track_s_items_are_released_with_public_gold_only(
    dataset: dict, cut, releases_root: Path
) -> None:
    # The test table's relational rows, SQL and result are the tracks' hidden gold (its
    # attributes' values are in its schema, an input; the Value column is not).
    table = Table.objects.get(pk="synthetic--Number_of_students_set112_3")
    table.synthetic.relational_csv = "Sector,Value\nsector,Value\nPrivate,987654.25\n"
    table.synthetic.save()
    for n, q in enumerate(Question.objects.filter(table=table).exclude(sql="")):
        q.sql = f"SELECT SECRET_SQL_{n:04d}"
        q.gold_answer = f"{{SECRET-RESULT-{n:04d}}}"
        q.save()
    items_build()
    cut("2026.12")
    for edition in ("public", "full"):
        folder = releases_root / "2026.12" / edition
        tracks = folder / "tracks"
        for track in ("extraction", "transformation", "sql"):
            for split in ("train", "validation", "test"):
                records = _items(tracks / track / split / "items.jsonl")
                assert len(records) == TrackItem.objects.filter(track=track, split=split).count()
                assert all(("gold" in r) == (split != "test") for r in records), (track, split)
        validation = _items(tracks / "transformation" / "validation" / "items.jsonl")
        stored = dict(
            TrackItem.objects.filter(track="transformation", split="validation").values_list(
                "item_id", "gold"
            )
        )
        assert {r["id"]: r["gold"] for r in validation} == stored
        for record in _items(tracks / "extraction" / "test" / "items.jsonl"):
            assert (tracks / "extraction" / "test" / record["file"]).is_file()
        text = edition_text(tracks)
        for secret in ("987654.25", "SECRET_SQL_", "SECRET-RESULT-"):
            assert secret not in text, (edition, secret)
        card = (folder / "hf" / "README.md").read_text()
        assert "## The tracks beside QA" in card
        for name in ("Table extraction", "Table transformation", "NL-to-SQL"):
            assert f"### {name}" in card
        assert "| test |" in card and "no (hidden)" in card
    # The files are listed, so the download view serves them.
    from releases.models import Release

    paths = {f["path"] for f in Release.objects.get(version="2026.12").files}
    assert "tracks/sql/validation/items.jsonl" in paths
    assert any(p.startswith("tracks/extraction/test/extraction/") for p in paths)
