"""A release's Hugging Face folder loads with datasets.load_dataset(<folder>), offline, with
the counts and records the platform holds; its Parquet copies hold the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dataset.models import Question, Table

# No network at test time, ever: the library must read the folder alone.
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("edition", ["public", "full"])
def test_the_folder_loads_with_datasets(
    dataset: dict, cut, releases_root: Path, tmp_path: Path, edition: str
) -> None:
    import datasets

    release, printed = cut("2026.11")
    folder = releases_root / "2026.11" / edition / "hf"
    if edition == "public":
        assert printed.strip().splitlines()[-1] == str(folder)
    cache = tmp_path / "hf-cache"
    questions = datasets.load_dataset(str(folder), cache_dir=str(cache))
    verified = Question.objects.filter(status="verified").select_related("table")
    for split in ("train", "validation", "test"):
        expected = verified.filter(table__split=split)
        assert (
            questions[split].num_rows
            == expected.count()
            == release.counts["questions_by_split"][split]
        )
        record = questions[split][0]
        q = expected.order_by("table_id", "id").first()
        assert record["question_id"] == q.id and record["question"] == q.text
        assert record["table"] == q.table.canonical_csv and record["split"] == split
        hidden = edition == "public" and split == "test"
        assert record["answer"] == ("" if hidden else q.gold_answer)
        assert set(record["query_properties"]) >= {"row_filter", "aggregation"}
    features = questions["train"].features
    assert features["template_number"].dtype == "int32"
    assert features["table_properties"]["row_nesting"].dtype == "bool"

    tables = datasets.load_dataset(str(folder), "tables", cache_dir=str(cache))
    assert sum(tables[s].num_rows for s in tables) == Table.objects.count()

    parquet = datasets.load_dataset(
        "parquet",
        data_files={s: str(folder / f"data/{s}.parquet") for s in ("train", "validation", "test")},
        cache_dir=str(cache),
    )
    for split in ("train", "validation", "test"):
        assert parquet[split].to_list() == questions[split].to_list()
