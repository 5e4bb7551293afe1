from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hctqa.core.splits import (
    SplitsFileError,
    assign_splits,
    read_splits_file,
    split_for_table,
    split_rest_by_hash,
)

# Pinned: a change here would move tables between splits and invalidate old submissions.
PINNED = {
    "psa--4--1": "validation",
    "arxiv--1--1118": "train",
    "pak--1--726": "train",
    "psa--1--8": "test",
}


def test_the_split_of_a_table_is_pinned() -> None:
    assert {t: split_for_table(t) for t in PINNED} == PINNED


def test_the_split_is_the_same_in_another_process_with_another_hash_seed() -> None:
    code = (
        "from hctqa.core.splits import split_for_table;"
        f"print(','.join(split_for_table(t) for t in {list(PINNED)!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.strip()
    assert out.split(",") == list(PINNED.values())


def test_the_real_tables_split_about_80_10_10(release_tables: list) -> None:
    counts = Counter(split_for_table(t.id) for t in release_tables)
    total = sum(counts.values())
    assert 0.77 < counts["train"] / total < 0.83
    assert 0.08 < counts["validation"] / total < 0.12
    assert 0.08 < counts["test"] / total < 0.12


# --- A splits file (the official test split) ------------------------------------------------

TABLES = {
    "psa--1--1": ["psa--1--1--M0", "psa--1--1--A1"],
    "psa--1--2": ["psa--1--2--M0"],
    "pak--1--1": ["pak--1--1--M0"],
    **{f"arxiv--9--{i}": [f"arxiv--9--{i}--M0"] for i in range(18)},
}


def test_a_splits_file_names_tables_and_questions(tmp_path: Path) -> None:
    rows = read_splits_file(
        b"\xef\xbb\xbftable_id,split\npsa--1--1,test\n\npak--1--1--M0,validation\n"
    )
    assert [(r.id, r.split, r.line) for r in rows] == [
        ("psa--1--1", "test", 2),
        ("pak--1--1--M0", "validation", 4),
    ]
    splits = assign_splits(TABLES, given={}, rows=rows)
    assert splits["psa--1--1"] == "test" and splits["pak--1--1"] == "validation"
    # The rest: train and validation only, 8 : 1, by the stable hash.
    rest = [t for t in TABLES if t not in ("psa--1--1", "pak--1--1")]
    assert Counter(splits[t] for t in rest) == {"train": 17, "validation": 2}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"psa--1--1,holdout\n", "Line 1: the split should be one of train, validation, test"),
        (b"psa--1--1\n", "Line 1: expected two cells"),
        (b"psa--1--1,test\npsa--1--1,test\n", "Line 2: psa--1--1 is named again (first on line 1)"),
        (b"table_id,split\n", "The file names no table or question"),
        (b"\xff\xfe,test\n", "Not UTF-8 text"),
    ],
)
def test_a_bad_splits_file_is_refused_with_its_line(text: bytes, message: str) -> None:
    with pytest.raises(SplitsFileError, match=re.escape(message)):
        read_splits_file(text)


def test_a_file_that_does_not_fit_the_import_is_refused() -> None:
    unknown = read_splits_file(b"psa--7--7,test\n")
    with pytest.raises(SplitsFileError, match="Line 1: psa--7--7 is neither a table nor"):
        assign_splits(TABLES, given={}, rows=unknown)
    split_table = read_splits_file(b"psa--1--1--M0,test\npsa--1--1--A1,train\n")
    with pytest.raises(SplitsFileError, match="a table's questions share its split"):
        assign_splits(TABLES, given={}, rows=split_table)
    against_input = read_splits_file(b"psa--1--2,test\n")
    with pytest.raises(SplitsFileError, match="the release gives it the train split"):
        assign_splits(TABLES, given={"psa--1--2": "train"}, rows=against_input)


def test_a_split_in_the_input_still_wins_over_the_hash() -> None:
    rows = read_splits_file(b"psa--1--1,test\n")
    splits = assign_splits(TABLES, given={"psa--1--2": "test"}, rows=rows)
    assert splits["psa--1--2"] == "test"
    assert assign_splits(TABLES, given={"psa--1--2": "test"})["psa--1--2"] == "test"
    # Without a file: the 80/10/10 hash, as before.
    assert assign_splits(TABLES, given={})["psa--1--1"] == split_for_table("psa--1--1")


def test_the_rest_splits_the_same_whatever_the_order() -> None:
    ids = [f"census--{i}--1" for i in range(90)]
    forward = split_rest_by_hash(ids)
    assert forward == split_rest_by_hash(list(reversed(ids)))
    assert Counter(forward.values()) == {"train": 80, "validation": 10}


def test_the_official_file_leaves_1504_train_and_188_validation_tables(
    release_tables: list, data_dir: Path
) -> None:
    rows = read_splits_file((data_dir / "hctqa-real" / "official-test-tables.csv").read_bytes())
    splits = assign_splits(
        {t.id: [q.id for q in t.questions] for t in release_tables}, given={}, rows=rows
    )
    assert Counter(splits.values()) == {"train": 1504, "validation": 188, "test": 188}
