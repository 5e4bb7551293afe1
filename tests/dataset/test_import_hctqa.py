from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Max

from dataset import services
from dataset.models import Question, Table
from hctqa.core.release import ReleaseQuestion, ReleaseTable
from hctqa.core.splits import split_for_table

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_hctqa", *args, stdout=out)
    return out.getvalue()


@pytest.fixture(scope="module")
def first_import(django_db_setup, django_db_blocker, data_dir: Path):
    """The whole release imported once for this module (committed), with the command output."""
    real = data_dir / "hctqa-real"
    with django_db_blocker.unblock():
        output = run("--qaps", str(real / "qaps.json.gz"), "--csvs", str(real / "csvs.tar.gz"))
    yield output
    with django_db_blocker.unblock():
        Table.objects.all().delete()


def test_it_imports_every_table_and_question(first_import: str) -> None:
    assert Table.objects.count() == 1880
    assert Question.objects.count() == 9835
    origins = Counter(Question.objects.values_list("origin", flat=True))
    assert origins == {"human": 3248, "model": 6587}
    assert all(
        qid.rsplit("--", 1)[1].startswith("M")
        for qid in Question.objects.filter(origin="human").values_list("id", flat=True)
    )
    sources = Counter(Table.objects.values_list("source", flat=True))
    assert sources == {"psa": 958, "arxiv": 575, "census": 219, "pak": 128}


def test_it_shows_progress_and_a_summary(first_import: str) -> None:
    assert (
        "1,880 tables; 9,835 questions, 3,248 human-written, 6,587 model-generated" in first_import
    )
    assert "100% (11,715/11,715)" in first_import
    assert "Tables: 1,880 created, 0 updated, 0 unchanged." in first_import
    assert "Questions: 9,835 created, 0 updated, 0 unchanged." in first_import
    assert "arxiv--21--9631, census--8--3175" in first_import


def test_a_second_run_changes_nothing_and_says_so(first_import: str, data_dir: Path) -> None:
    before = (
        Table.objects.aggregate(t=Max("updated_at"))["t"],
        Question.objects.aggregate(q=Max("updated_at"))["q"],
    )
    real = data_dir / "hctqa-real"
    output = run("--qaps", str(real / "qaps.json.gz"), "--csvs", str(real / "csvs.tar.gz"))
    assert (
        "Nothing changed: the database already holds these 1,880 tables and 9,835 questions."
        in output
    )
    after = (
        Table.objects.aggregate(t=Max("updated_at"))["t"],
        Question.objects.aggregate(q=Max("updated_at"))["q"],
    )
    assert before == after


def test_splits_are_assigned_per_table_by_a_stable_hash(first_import: str) -> None:
    for table_id, split in Table.objects.values_list("id", "split"):
        assert split == split_for_table(table_id)
    counts = Counter(Table.objects.values_list("split", flat=True))
    assert counts["train"] > 1400 and counts["validation"] > 150 and counts["test"] > 150


def test_the_raw_canonical_csv_is_stored(first_import: str) -> None:
    # The raw CSV keeps "N/A" that pandas' re-written copy in qaps.json turned into "".
    assert "N/A" in Table.objects.get(pk="arxiv--10--4250").canonical_csv


def test_a_malformed_file_changes_nothing_and_names_the_record(
    first_import: str, data_dir: Path, tmp_path: Path
) -> None:
    records = json.loads(gzip.decompress((data_dir / "hctqa-real" / "qaps.json.gz").read_bytes()))
    old_id = records[0]["table_id"]
    records[0]["table_id"] = "psa--999--1"  # a new table that must not be written
    for q in records[0]["questions"]:
        q["question_id"] = q["question_id"].replace(old_id, "psa--999--1")
    victim = records[1000]["questions"][2]
    del victim["gt"]
    path = tmp_path / "qaps.json"
    path.write_text(json.dumps(records))
    with pytest.raises(CommandError) as info:
        run("--qaps", str(path))
    assert str(info.value) == f"Nothing was imported. {victim['question_id']}: missing 'gt'"
    assert not Table.objects.filter(pk="psa--999--1").exists()
    assert Table.objects.count() == 1880


def test_check_validates_without_writing(tmp_path: Path, data_dir: Path) -> None:
    records = json.loads(gzip.decompress((data_dir / "hctqa-real" / "qaps.json.gz").read_bytes()))[
        :5
    ]
    path = tmp_path / "qaps.json"
    path.write_text(json.dumps(records))
    before = Table.objects.count()
    output = run("--qaps", str(path), "--check")
    assert "The files are valid; nothing was written (--check)." in output
    assert Table.objects.count() == before


def test_a_missing_file_is_refused() -> None:
    with pytest.raises(CommandError, match="no-such.json: no such file"):
        run("--qaps", "no-such.json")


def test_a_folder_is_refused_with_the_file_to_give(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=f"is a folder: .* --qaps {tmp_path}/qaps.json.gz"):
        run("--qaps", str(tmp_path))


def _table(table_id: str, n_questions: int) -> ReleaseTable:
    return ReleaseTable(
        id=table_id,
        source="psa",
        canonical_csv="a,b\n1,2\n",
        table_properties={},
        questions=tuple(
            ReleaseQuestion(f"{table_id}--M{i}", "Q?", "{1}", "human", {})
            for i in range(n_questions)
        ),
    )


def test_a_failure_while_writing_leaves_nothing_half_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = Question.objects.count()
    real_bulk_create = Question.objects.bulk_create
    batches: list[int] = []

    def fail_on_second_batch(rows: list, *args: object, **kwargs: object) -> list:
        batches.append(len(rows))
        if len(batches) == 2:
            raise RuntimeError("disk full")
        return real_bulk_create(rows, *args, **kwargs)

    monkeypatch.setattr(Question.objects, "bulk_create", fail_on_second_batch)
    with pytest.raises(RuntimeError, match="disk full"):
        services.release_import(tables=[_table("psa--998--1", 700)])
    assert batches == [500, 200]
    assert not Table.objects.filter(pk="psa--998--1").exists()
    assert Question.objects.count() == before


def test_a_split_in_the_input_is_kept() -> None:
    table = _table("psa--997--1", 1)
    services.release_import(tables=[ReleaseTable(**{**table.__dict__, "split": "test"})])
    assert Table.objects.get(pk="psa--997--1").split == "test"
