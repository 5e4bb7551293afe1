"""Cutting a release: what it holds, both editions, hashes, changelog, immutability, and
refusals that leave nothing behind."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from dataset.models import Question, Table
from releases.build import parquet_copy
from releases.models import BuildStatus, Release, ReleaseBuild
from tests.releases.conftest import released_questions

pytestmark = pytest.mark.django_db


def files_on_disk(root: Path, release: Release) -> dict[tuple[str, str], str]:
    folder = root / release.version
    return {
        (f["edition"], f["path"]): hashlib.sha256(
            (folder / f["edition"] / f["path"]).read_bytes()
        ).hexdigest()
        for f in release.files
    }


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_command_builds_both_editions_and_prints_the_public_folder_last(
    dataset: dict, cut, releases_root: Path
) -> None:
    release, printed = cut("2026.11", "--notes", "The first cut.")
    assert printed.strip().splitlines()[-1] == str(releases_root / "2026.11" / "public" / "hf")
    assert release.title == "HCT-QA 2026.11" and release.notes == "The first cut."

    # Every file recorded is on disk with its SHA-256, read-only; SHA256SUMS says the same.
    on_disk = files_on_disk(releases_root, release)
    assert on_disk == {(f["edition"], f["path"]): f["sha256"] for f in release.files}
    for edition in ("public", "full"):
        folder = releases_root / "2026.11" / edition
        sums = dict(
            reversed(line.split("  ", 1))
            for line in (folder / "SHA256SUMS").read_text().splitlines()
        )
        assert sums == {p: h for (e, p), h in on_disk.items() if e == edition and p != "SHA256SUMS"}
        for path in (
            "hf/README.md",
            "hf/data/train.jsonl",
            "hf/data/test.parquet",
            "prompts/paper.jsonl.gz",
            "prompts/latex.jsonl.gz",
            "alpaca/dataset_info.json",
            "alpaca/hctqa_real_only_train.json",
            "alpaca/hctqa_real_and_synthetic_test.json",
            "tables.tar.gz",
            "changelog.json",
            "release.json",
        ):
            assert (folder / path).is_file(), (edition, path)
        assert not os.access(folder / "hf/data/train.jsonl", os.W_OK) or os.geteuid() == 0
        assert (folder / "hf/data/train.jsonl").stat().st_mode & 0o222 == 0

    # Exactly the verified questions, and every table.
    full = releases_root / "2026.11" / "full" / "hf"
    ids = {
        r["question_id"]
        for s in ("train", "validation", "test")
        for r in jsonl(full / f"data/{s}.jsonl")
    }
    assert ids == released_questions()
    assert {dataset["verified"].id} <= ids
    assert not ids & {dataset[k].id for k in ("unverified", "waiting", "dropped")}
    assert release.counts["questions"] == len(ids)
    assert release.counts["tables"] == Table.objects.count() == 15
    assert (
        release.counts["questions_by_origin"]["model"]
        == Question.objects.filter(origin="model", status="verified").count()
    )
    assert set(release.counts["questions_by_split"]) == {"train", "validation", "test"}
    assert release.commit == "" or len(release.commit) == 40

    # The tables archive holds every table as CSV and HTML.
    with tarfile.open(releases_root / "2026.11" / "public" / "tables.tar.gz") as archive:
        names = archive.getnames()
        csv_text = archive.extractfile("tables/csv/psa--1--102.csv").read().decode()
    assert csv_text == Table.objects.get(pk="psa--1--102").canonical_csv
    assert sum(n.startswith("tables/html/") for n in names) == 15


def test_a_tables_title_and_notes_are_columns_of_both_configurations(
    dataset: dict, cut, releases_root: Path
) -> None:
    import pyarrow.parquet as pq

    Table.objects.filter(pk="psa--1--102").update(
        title="Table 12. Births <by> sex", notes="Source: Planning & Statistics Authority."
    )
    cut("2026.11")
    hf = releases_root / "2026.11" / "public" / "hf"
    for config in ("data", "tables"):
        records = [r for r in jsonl(hf / f"{config}/train.jsonl") if r["table_id"] == "psa--1--102"]
        assert records
        for record in records:
            assert record["table_title"] == "Table 12. Births <by> sex"
            assert record["table_notes"] == "Source: Planning & Statistics Authority."
        others = [r for r in jsonl(hf / f"{config}/train.jsonl") if r["table_id"] != "psa--1--102"]
        assert {(r["table_title"], r["table_notes"]) for r in others} == {("", "")}
        columns = pq.read_table(hf / f"{config}/train.parquet").column_names
        assert {"table_title", "table_notes"} <= set(columns)
    assert "| `table_title` |" in (hf / "README.md").read_text()


def test_the_public_edition_shares_every_file_without_test_gold(
    dataset: dict, cut, releases_root: Path
) -> None:
    release, _ = cut("1.0.0")
    folder = releases_root / "1.0.0"
    by_path = {}
    for f in release.files:
        by_path.setdefault(f["path"], {})[f["edition"]] = f["sha256"]
    # Each edition's one download is its own (named after it).
    own = {p: e for p, e in by_path.items() if p.startswith("hctqa-1.0.0-")}
    assert own == {
        f"hctqa-1.0.0-{edition}.tar.gz{suffix}": {edition: by_path[name][edition]}
        for edition in ("public", "full")
        for suffix in ("", ".sha256")
        for name in [f"hctqa-1.0.0-{edition}.tar.gz{suffix}"]
    }
    differ = sorted(p for p, e in by_path.items() if p not in own and e["public"] != e["full"])
    assert differ == [
        "SHA256SUMS",
        "alpaca/hctqa_real_and_synthetic_test.json",
        "alpaca/hctqa_real_only_test.json",
        "hf/README.md",
        "hf/data/test.jsonl",
        "hf/data/test.parquet",
        "hf/tables/test.jsonl",
        "hf/tables/test.parquet",
        "release.json",
        "tables.tar.gz",
    ]
    # The shared ones are one file on disk.
    a, b = folder / "full/prompts/paper.jsonl.gz", folder / "public/prompts/paper.jsonl.gz"
    assert a.stat().st_ino == b.stat().st_ino
    public_test = jsonl(folder / "public/hf/data/test.jsonl")
    full_test = {r["question_id"]: r for r in jsonl(folder / "full/hf/data/test.jsonl")}
    assert public_test and all(r["answer"] == "" and r["sql"] == "" for r in public_test)
    assert all(full_test[r["question_id"]]["answer"] for r in public_test)
    assert [r["question"] for r in public_test] == [
        full_test[r["question_id"]]["question"] for r in public_test
    ]


def test_prompt_files_are_what_export_prompts_writes(
    dataset: dict, cut, releases_root: Path, tmp_path: Path
) -> None:
    cut("2026.11")
    for table_format in ("paper", "nonsensical_csv", "html"):
        exported = tmp_path / f"{table_format}.jsonl"
        call_command(
            "export_prompts", "--format", table_format, "--out", str(exported), stdout=io.StringIO()
        )
        with gzip.open(
            releases_root / f"2026.11/public/prompts/{table_format}.jsonl.gz", "rt"
        ) as f:
            released = [line for line in f if not line.startswith('{"qa_id": "synthetic--')]
        assert released == exported.read_text().splitlines(keepends=True), table_format


def test_alpaca_files_match_the_benchmarks_conversion_on_hand_checked_questions(
    dataset: dict, cut, releases_root: Path, tmp_path: Path
) -> None:
    cut("2026.11")
    folder = releases_root / "2026.11/full/alpaca"
    exported = tmp_path / "paper.jsonl"
    call_command(
        "export_prompts", "--format", "paper", "--out", str(exported), stdout=io.StringIO()
    )
    prompts = {r["qa_id"]: r["prompt"] for r in map(json.loads, exported.read_text().splitlines())}
    train = json.loads((folder / "hctqa_real_only_train.json").read_text())
    validation = json.loads((folder / "hctqa_real_only_validation.json").read_text())
    by_instruction = {r["instruction"]: r for r in train + validation}
    # The outputs the benchmark's script makes of these released gold answers:
    # {Psychology | 86} || {Linguistics | 90}, {FP16 || 6.61} || {W3A16 g128 | 6.76} || …,
    # {3 | 0.06} || {4 | 0.05 } and {L0 | 58.33} || {L1 | 58.33}.
    checked = {
        "arxiv--1--1118--M0": "Psychology || 86 || Linguistics || 90",
        "arxiv--1--2803--M0": "FP16 || 6.61 || W3A16 g128 || 6.76 || W4A8 g128 || 5.73",
        "arxiv--1--307--M0": "3 || 0.06 || 4 || 0.05",
        "arxiv--1--3232--M0": "L0 || 58.33 || L1 || 58.33",  # validation split
    }
    for qid, output in checked.items():
        system, user = prompts[qid]
        record = by_instruction[user["content"]]
        assert record == {
            "instruction": user["content"],
            "system": system["content"],
            "output": output,
        }
    info = json.loads((folder / "dataset_info.json").read_text())
    assert info["hctqa_real_only"]["file_name"] == "hctqa_real_only_train.json"
    assert (
        info["hctqa_real_and_synthetic_test"]["file_name"] == "hctqa_real_and_synthetic_test.json"
    )
    for entry in info.values():
        assert (folder / entry["file_name"]).is_file()
    both = json.loads((folder / "hctqa_real_and_synthetic_train.json").read_text())
    real = len(train)
    assert (
        len(both)
        == real
        + Question.objects.filter(
            status="verified", table__source="synthetic", table__split="train"
        ).count()
    )
    public_test = json.loads(
        (releases_root / "2026.11/public/alpaca/hctqa_real_only_test.json").read_text()
    )
    assert public_test and all(r["output"] == "" for r in public_test)


def _text_of(name: str, data: bytes) -> str:
    """A file's every byte as text: gzip members unpacked, every archive member read (the
    archive's own archives too), a Parquet file's rows."""
    import pyarrow.parquet as pq

    if name.endswith(".tar.gz"):
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            return "\n".join(
                _text_of(member.name, archive.extractfile(member).read())
                for member in archive.getmembers()
                if member.isfile()
            )
    if name.endswith(".gz"):
        return gzip.decompress(data).decode()
    if name.endswith(".parquet"):
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
        return json.dumps(rows, ensure_ascii=False)
    return data.decode("utf-8", errors="replace")


def edition_text(folder: Path) -> str:
    """Every byte of an edition's folder, as text (``_text_of`` each file)."""
    return "\n".join(
        _text_of(path.name, path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    )


def test_the_public_edition_never_holds_a_test_split_gold_answer(
    dataset: dict, cut, releases_root: Path
) -> None:
    secrets = {}
    for q in Question.objects.filter(status="verified", table__split="test"):
        secrets[q.id] = f"SECRET-GOLD-{len(secrets):04d}"
        q.gold_answer = "{" + secrets[q.id] + "}"
        if q.sql:
            q.sql = f"SELECT SECRET_SQL_{len(secrets):04d}"
        q.save()
    table = Table.objects.get(pk="synthetic--Number_of_students_set112_3")
    table.synthetic.relational_csv = "Sector,N\nsector,n\nSECRET-ROWS,1\n"
    table.synthetic.save()
    assert len(secrets) >= 10
    cut("2026.11")
    public = edition_text(releases_root / "2026.11" / "public")
    full = edition_text(releases_root / "2026.11" / "full")
    for secret in [*secrets.values(), "SECRET_SQL_", "SECRET-ROWS"]:
        assert secret not in public, secret
        assert secret in full, secret  # the crawl is not blind


def test_a_release_never_changes_when_the_data_does(
    dataset: dict, cut, releases_root: Path
) -> None:
    first, _ = cut("2026.11")
    before = files_on_disk(releases_root, first)
    # Edit a gold answer and a table, remove a table, add a question, move a table's split.
    q = Question.objects.get(pk="arxiv--1--1118--M0")
    q.gold_answer = "{Psychology | 87}"
    q.save()
    Table.objects.filter(pk="psa--1--102").update(canonical_csv="a,b\n1,2\n")
    removed = set(
        Question.objects.filter(table_id="pak--1--1030", status="verified").values_list(
            "id", flat=True
        )
    )
    Table.objects.filter(pk="pak--1--1030").delete()
    Question.objects.create(
        id="psa--1--16--M99",
        table_id="psa--1--16",
        text="New?",
        gold_answer="{1}",
        origin="human",
        status="verified",
    )
    Table.objects.filter(pk="census--1--1026").update(split="test")

    assert files_on_disk(releases_root, first) == before
    first.refresh_from_db()
    assert files_on_disk(releases_root, first) == {
        (f["edition"], f["path"]): f["sha256"] for f in first.files
    }

    second, _ = cut("2026.12")
    log = second.changelog
    assert log["previous"] == "2026.11" and second.previous == first
    assert log["tables_removed"] == ["pak--1--1030"] and log["tables_added"] == []
    assert log["questions_added"] == ["psa--1--16--M99"]
    assert log["questions_removed"] == sorted(removed) and removed
    assert log["gold_changed"] == ["arxiv--1--1118--M0"]
    assert log["splits_changed"] == [
        {"table_id": "census--1--1026", "before": "train", "after": "test"}
    ]
    assert second.changelog_preview["counts"] == log["counts"]
    assert json.loads((releases_root / "2026.12/public/changelog.json").read_text()) == log
    assert files_on_disk(releases_root, first) == before  # the new release touched none of it


def test_a_version_that_exists_is_refused_and_nothing_changes(
    dataset: dict, cut, releases_root: Path
) -> None:
    release, _ = cut("2026.11")
    before = files_on_disk(releases_root, release)
    builds = ReleaseBuild.objects.count()
    with pytest.raises(CommandError, match="2026.11 exists"):
        cut("2026.11")
    assert ReleaseBuild.objects.count() == builds
    assert files_on_disk(releases_root, release) == before


def test_a_release_while_another_is_built_is_refused(
    dataset: dict, cut, releases_root: Path
) -> None:
    ReleaseBuild.objects.create(
        version="2026.10", title="x", status=BuildStatus.BUILDING, heartbeat_at=timezone.now()
    )
    with pytest.raises(CommandError, match="2026.10 is being built"):
        cut("2026.11")
    assert not Release.objects.exists() and not (releases_root / "2026.11").exists()


def test_a_build_whose_worker_died_is_failed_and_cleared_for_the_next(
    dataset: dict, cut, releases_root: Path
) -> None:
    stale = ReleaseBuild.objects.create(
        version="2026.10",
        title="x",
        status=BuildStatus.BUILDING,
        heartbeat_at=timezone.now() - timezone.timedelta(hours=1),
    )
    leftover = releases_root / f".build-{stale.pk}-abc"
    leftover.mkdir(parents=True)
    (leftover / "half.jsonl").write_text("{")
    release, _ = cut("2026.11")
    stale.refresh_from_db()
    assert stale.status == BuildStatus.FAILED and "worker" in stale.error
    assert not leftover.exists() and release.version == "2026.11"


def test_an_empty_release_is_refused(releases_root: Path, cut) -> None:
    with pytest.raises(CommandError, match="no verified questions"):
        cut("2026.11")
    assert not ReleaseBuild.objects.exists()
    assert not releases_root.exists() or not any(releases_root.iterdir())


@pytest.mark.parametrize("version", ["latest", "2026.13", "../2026.11"])
def test_a_bad_version_is_refused(dataset: dict, cut, version: str) -> None:
    with pytest.raises(CommandError, match="Not a version"):
        cut(version)
    assert not ReleaseBuild.objects.exists()


def _nothing_left(root: Path) -> None:
    assert not Release.objects.exists()
    assert list(root.iterdir()) == [] if root.exists() else True
    build = ReleaseBuild.objects.get()
    assert build.status == BuildStatus.FAILED and build.active is None and build.error


def test_a_failure_half_way_leaves_nothing(
    dataset: dict, cut, releases_root: Path, monkeypatch
) -> None:
    calls = []

    def fail_on_the_third(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return parquet_copy(*args, **kwargs)

    monkeypatch.setattr("releases.build.parquet_copy", fail_on_the_third)
    with pytest.raises(OSError, match="No space"):
        cut("2026.11")
    _nothing_left(releases_root)
    assert "internal error" in ReleaseBuild.objects.get().error


def test_a_failure_after_the_folder_moved_into_place_removes_it(
    dataset: dict, cut, releases_root: Path, monkeypatch
) -> None:
    def refuse(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr("releases.services.Release.objects.create", refuse)
    with pytest.raises(RuntimeError):
        cut("2026.11")
    _nothing_left(releases_root)


def test_an_unreadable_table_image_stops_the_build_and_names_the_table(
    dataset: dict, cut, releases_root: Path
) -> None:
    Table.objects.filter(pk="psa--1--122").update(image="tables/missing.png")
    with pytest.raises(CommandError, match="psa--1--122"):
        cut("2026.11")
    _nothing_left(releases_root)
