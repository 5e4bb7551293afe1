from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from hctqa.core.splits import split_for_table

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
