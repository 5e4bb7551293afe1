"""The generator against the released families, and the SQL executor against their answers.

Every released table is compared in all ten file kinds (about 10 s); the same comparison
prints its figures in ``benchmarks/synthetic_release_check.py``.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from hctqa.core.synthgen.params import read_params
from hctqa.core.synthgen.pipeline import ALL_KINDS, RELEASE_NONSEM_OFFSETS, generate
from hctqa.core.synthgen.questions import Database, format_result

FAMILIES = ("Number_of_students", "Number_of_accidents")
RELEASED_TABLES = {"Number_of_students": 234, "Number_of_accidents": 464}


def release_matches(generation, data_dir: Path) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for family in FAMILIES:
        archive = zipfile.ZipFile(data_dir / "hctqa-synthetic" / f"{family}.zip")
        names = set(archive.namelist())
        counts: Counter[str] = Counter()
        for table in (t for t in generation.tables if t.family == family):
            for kind in ALL_KINDS:
                name = table.file_name(kind)
                counts[kind] += name in names and archive.read(name) == table.file_bytes(kind)
        out[family] = counts
    return out


def test_both_families_are_byte_equal_in_every_file_kind(data_dir: Path) -> None:
    params = read_params(data_dir / "hctqa-synthetic")
    generation = generate(params, FAMILIES, nonsense_offsets=RELEASE_NONSEM_OFFSETS)
    # The seven families' tables and questions, as the specification reconstructs them (§9).
    assert generation.kept_per_family == {
        "Evolution_of_pollution_in_percent": [888, 12877],
        "Number_of_students": [234, 3361],
        "Number_of_graduations": [552, 7976],
        "Food_import-export_in_tons": [835, 12107],
        "Weather_statistics": [830, 12024],
        "Number_of_accidents": [464, 6704],
        "Number_of_constructions": [863, 12509],
    }
    matches = release_matches(generation, data_dir)
    for family, released in RELEASED_TABLES.items():
        print(family, dict(matches[family]))
        assert matches[family] == Counter({k: released for k in ALL_KINDS}), family


def _released_db(text: str) -> tuple[list[str], list[list[str]], list[float]]:
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    names = lines[1].split(",")[:-1]
    rows = [line.split(",") for line in lines[2:]]
    return names, [r[:-1] for r in rows], [float(r[-1]) for r in rows]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_released_sql_gives_the_released_answer(data_dir: Path, family: str) -> None:
    archive = zipfile.ZipFile(data_dir / "hctqa-synthetic" / f"{family}.zip")
    exceptions = []
    checked = 0
    for name in sorted(n for n in archive.namelist() if n.endswith("_QandA.json")):
        stem = name[: -len("_QandA.json")]
        names, rows, values = _released_db(archive.read(f"{stem}_DB.csv").decode())
        db = Database(names, rows, values)
        for question in json.loads(archive.read(name))["questions"]:
            got = format_result(db.run(question["sql"]))
            checked += 1
            if got != question["sqlResult"]:
                exceptions.append(
                    f"{stem} {question['name']}: {got!r} != {question['sqlResult']!r}"
                )
        db.close()
    print(f"{family}: {checked - len(exceptions)}/{checked} released answers reproduced")
    assert exceptions == []
    assert checked == {"Number_of_students": 3361, "Number_of_accidents": 6704}[family]
