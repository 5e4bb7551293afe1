from __future__ import annotations

import copy
import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from hctqa.core.release import (
    ReleaseError,
    parse_qaps,
    question_counts,
    read_bytes,
    read_csvs_tar,
    read_synthetic_zip,
)

TABLE = {
    "table_id": "psa--1--1",
    "table_info": {
        "table_image_url": "https://example.org/psa_1_1.jpg",
        "table_properties": {"Standard Relational Table": True},
        "table_formats": {"csv": ",0,1\n0,Year,Value\n1,2020,5\n"},
    },
    "questions": [
        {
            "question_id": "psa--1--1--M0",
            "question": "What is the value in 2020?",
            "gt": "{5}",
            "question_properties": {"Row Filter": True},
        }
    ],
}


def qaps(*tables: dict) -> bytes:
    return json.dumps(list(tables)).encode()


def broken(path: str, value: object) -> dict:
    """TABLE with the value at a dotted path replaced (or removed when value is ...)."""
    table = copy.deepcopy(TABLE)
    *parents, last = path.split(".")
    node = table
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return table


def test_it_reads_a_well_formed_table() -> None:
    [table] = parse_qaps(qaps(TABLE))
    assert table.id == "psa--1--1" and table.source == "psa"
    assert table.canonical_csv == "Year,Value\n2020,5\n"
    assert table.table_properties["standard_relational_table"] is True
    [question] = table.questions
    assert (question.origin, question.gold_answer) == ("human", "{5}")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (broken("questions.0.gt", ...), "psa--1--1--M0: missing 'gt'"),
        (
            broken("questions.0.question_id", "psa--1--1--X0"),
            "psa--1--1--X0: question_id should be",
        ),
        (
            broken("questions.0.question_id", "psa--1--2--M0"),
            "question_id should be psa--1--1--M<k>",
        ),
        (broken("questions.0.question", "  "), "psa--1--1--M0: the question text is empty"),
        (broken("table_id", "nasa--1--1"), "nasa--1--1: table_id should look like"),
        (broken("table_info.table_properties", {"Wavy": True}), "Unknown table property 'Wavy'"),
        (broken("table_info.table_formats.csv", "Year,Value\n"), "psa--1--1: canonical CSV"),
        (broken("questions.0.question_properties", {"Rank Report Top": "x"}), "Rank Report Top"),
        (broken("questions", "none"), "'questions' should be list, not str"),
        (
            broken("table_info.table_image_url", "javascript:alert(1)"),
            "table_image_url should start with http:// or https://",
        ),
    ],
)
def test_it_names_the_offending_record(table: dict, message: str) -> None:
    with pytest.raises(ReleaseError) as info:
        parse_qaps(qaps(TABLE | {"table_id": "psa--1--0", "questions": []}, table))
    assert message in str(info.value)


def test_it_refuses_duplicate_tables_and_questions() -> None:
    with pytest.raises(ReleaseError, match="psa--1--1: appears twice"):
        parse_qaps(qaps(TABLE, TABLE))
    twice = copy.deepcopy(TABLE)
    twice["questions"].append(twice["questions"][0])
    with pytest.raises(ReleaseError, match="psa--1--1--M0: appears twice"):
        parse_qaps(qaps(twice))


def test_it_reports_invalid_json_with_its_line() -> None:
    with pytest.raises(ReleaseError, match="not valid JSON at line 2"):
        parse_qaps(b'[\n{"table_id": }]')
    with pytest.raises(ReleaseError, match="not UTF-8"):
        parse_qaps(b"\xff\xfe[]")
    with pytest.raises(ReleaseError, match="holds no tables"):
        parse_qaps(b"[]")


def test_a_given_split_is_kept_and_a_bad_one_refused() -> None:
    [table] = parse_qaps(qaps(TABLE | {"split": "test"}))
    assert table.split == "test"
    with pytest.raises(ReleaseError, match="split should be one of"):
        parse_qaps(qaps(TABLE | {"split": "dev"}))


def test_raw_csvs_replace_the_embedded_copy(tmp_path: Path) -> None:
    archive = tmp_path / "csvs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"0,1\nYear,Value\n2020,N/A\n"
        info = tarfile.TarInfo("csvs/psa_1_1.csv")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    raw = read_csvs_tar(archive)
    [table] = parse_qaps(qaps(TABLE), raw_csvs=raw)
    assert table.canonical_csv == "Year,Value\n2020,N/A\n"
    with pytest.raises(ReleaseError, match="psa--1--1: no CSV for this table"):
        parse_qaps(qaps(TABLE), raw_csvs={"psa--1--2": "0\nx\n"})


def test_a_corrupt_archive_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "csvs.tar.gz"
    bad.write_bytes(b"not a tar")
    with pytest.raises(ReleaseError, match="not a readable tar archive"):
        read_csvs_tar(bad)
    gz = tmp_path / "qaps.json.gz"
    gz.write_bytes(gzip.compress(b"[]")[:-4])
    with pytest.raises(ReleaseError, match="not a readable gzip file"):
        read_bytes(gz)


def test_the_real_release_has_the_published_counts(release_tables: list) -> None:
    assert question_counts(release_tables) == {
        "tables": 1880,
        "questions": 9835,
        "human": 3248,
        "model": 6587,
        "synthetic": 0,
    }


def test_a_synthetic_family_reads_with_templates_and_sql(data_dir: Path) -> None:
    tables = read_synthetic_zip(data_dir / "hctqa-synthetic" / "Number_of_students.zip")
    assert question_counts(tables)["tables"] == 234
    assert question_counts(tables)["synthetic"] == 3361
    first = next(t for t in tables if t.id == "synthetic--Number_of_students_set1_1")
    q1 = next(q for q in first.questions if q.template_number == 1)
    assert q1.id == "synthetic--Number_of_students_set1_1--T1"
    assert q1.gold_answer == "{53}"
    assert q1.sql.startswith("SELECT Value FROM DBdata")
    assert first.synthetic.relational_csv.startswith("Nationality,School type,Value")
    assert first.canonical_csv == ",Qatari,Non-Qatari\nGovernment,53,60\nPrivate,94,76\n"


def test_synthetic_tables_get_structural_properties(data_dir: Path) -> None:
    tables = {
        t.id: t
        for t in read_synthetic_zip(data_dir / "hctqa-synthetic" / "Number_of_accidents.zip")
    }
    props = tables["synthetic--Number_of_accidents_set174_2"].table_properties
    on = {k for k, v in props.items() if v is True}
    assert {
        "multi_level_column",
        "row_nesting",
        "column_aggregation",
        "global_column_aggregation",
        "local_column_group_aggregation",
        "row_aggregation",
        "global_row_aggregation",
        "local_row_group_aggregation",
    } <= on


def test_a_zip_without_synthetic_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(ReleaseError, match="no <family>_set<i>_<j>_HCT.html files"):
        read_synthetic_zip(path)
    path.write_bytes(b"garbage")
    with pytest.raises(ReleaseError, match="not a readable zip archive"):
        read_synthetic_zip(path)
