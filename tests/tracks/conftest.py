"""Each test its own track files; the real data imported as tests need it: a slice of a
released synthetic family (with its questions) and the ICDAR 2013 EU set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings


@pytest.fixture(autouse=True)
def _track_files(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "track-files"
    with override_settings(
        TRACK_FILES_ROOT=root,
        INGEST_FILES_ROOT=tmp_path / "ingest",
        MEDIA_ROOT=tmp_path / "media",
        PRIVATE_FILES_ROOT=tmp_path / "private",
    ):
        yield root


def pick_tables(synthetic_tables: list, per_split: int = 4) -> list:
    """A few released tables of each split, the same ones every run."""
    from hctqa.core.splits import split_for_table

    chosen: dict[str, list] = {"train": [], "validation": [], "test": []}
    for table in synthetic_tables:
        split = split_for_table(table.id)
        if len(chosen[split]) < per_split:
            chosen[split].append(table)
    return [t for tables in chosen.values() for t in tables]


@pytest.fixture
def synthetic_dataset(db, synthetic_tables: list) -> list:
    """Twelve released synthetic tables (four of each split) with their questions."""
    from dataset.services import release_import

    tables = pick_tables(synthetic_tables)
    release_import(tables=tables)
    return tables


@pytest.fixture
def built(synthetic_dataset: list):
    """The tracks' items built from them."""
    from tracks.services.items import items_build

    return items_build()


# A test and a validation share of the set's 27 documents (the stable hash puts none of
# them in test); the others take the hash.
ICDAR_SPLITS = {
    **dict.fromkeys(("eu-001", "eu-002", "eu-003", "eu-004"), "test"),
    **dict.fromkeys(("eu-005", "eu-006", "eu-007"), "validation"),
}


@pytest.fixture
def icdar_set(db, data_dir: Path):
    from tracks.services.groundtruth import ground_truth_import

    gt_set, _ = ground_truth_import(
        user=None,
        code="icdar-eu",
        name="ICDAR 2013 (EU half)",
        folder=data_dir / "icdar2013-eu",
        document_splits=ICDAR_SPLITS,
    )
    return gt_set
