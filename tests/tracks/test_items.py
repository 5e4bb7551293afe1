"""The tracks' items in the database from the real data: a synthetic family's tables and
questions, the ICDAR 2013 EU set imported as a ground-truth set, and accepted tables; their
splits, their files, and builds that write only what changed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pdfplumber
import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from dataset.models import Question, Table
from leaderboard.models import Submission
from tracks import files
from tracks.models import TrackItem
from tracks.services.items import items_build

pytestmark = pytest.mark.django_db


def test_every_track_has_items_from_the_synthetic_family(built, synthetic_dataset) -> None:
    tables = {t.id for t in synthetic_dataset}
    questions = Question.objects.filter(table_id__in=tables).exclude(sql="")
    assert built.by_track == {
        "transformation": len(tables),
        "sql": questions.count(),
        "extraction": 4 * len(tables),
    }
    # Each item takes its table's split, in every track.
    for item in TrackItem.objects.select_related("table"):
        assert item.split == item.table.split, item.item_id
    sql = TrackItem.objects.get(track="sql", item_id=questions.first().pk)
    assert sql.gold == questions.first().sql
    assert sql.reference["gold_answer"] == questions.first().gold_answer
    assert "Value" not in json.dumps(sql.inputs["schema"]["columns"][-1].get("values", []))
    transformation = TrackItem.objects.get(track="transformation", item_id=synthetic_dataset[0].id)
    assert set(transformation.inputs["hct"]) == {
        "csv",
        "html",
        "markdown",
        "json",
        "latex",
        "paper",
    }
    assert transformation.gold.splitlines()[0].endswith("Value")


def test_synthetic_tables_are_drawn_to_pdf_and_png_with_their_box(built, synthetic_dataset) -> None:
    table = synthetic_dataset[0]
    region = TrackItem.objects.get(track="extraction", item_id=f"{table.id}--pdf--region")
    assert region.mode == "region" and region.source == "synthetic"
    pdf = files.path_of(region.inputs["file"])
    with pdfplumber.open(pdf) as document:
        page = document.pages[0]
        words = {w["text"] for w in page.within_bbox(region.inputs["bbox"]).extract_words()}
    first_cells = {c["text"] for c in region.gold["cells"][:3]}
    assert any(text.split()[0] in words for text in first_cells)
    png = TrackItem.objects.get(track="extraction", item_id=f"{table.id}--png--page")
    with Image.open(files.path_of(png.inputs["file"])) as image:
        assert image.format == "PNG"
        x0, top, x1, bottom = png.gold["tables"][0]["bbox"]
        assert 0 <= x0 < x1 <= image.width and 0 <= top < bottom <= image.height


def test_a_second_build_draws_nothing_and_writes_nothing(built, synthetic_dataset) -> None:
    stamp = {r.pk: r.updated_at for r in TrackItem.objects.all()}
    again = items_build()
    assert (again.created, again.updated, again.deleted) == (0, 0, 0)
    assert again.unchanged == sum(built.by_track.values())
    assert {r.pk: r.updated_at for r in TrackItem.objects.all()} == stamp


def test_a_table_moved_to_another_split_moves_its_items_and_gone_ones_go(
    built, synthetic_dataset
) -> None:
    moved, gone = synthetic_dataset[0].id, synthetic_dataset[1].id
    Table.objects.filter(pk=moved).update(split="test")
    Table.objects.filter(pk=gone).delete()
    counts = items_build()
    assert set(TrackItem.objects.filter(table_id=moved).values_list("split", flat=True)) == {"test"}
    assert not TrackItem.objects.filter(table_key=gone).exists()
    assert counts.deleted == 0  # deleting the table deleted its items already
    # Its drawings are removed with its items.
    assert not files.path_of(f"extraction/{gone}.pdf").exists()


def test_the_icdar_set_imports_as_items_with_the_document_as_split_unit(icdar_set) -> None:
    items = TrackItem.objects.filter(ground_truth_set=icdar_set)
    assert icdar_set.tables == 76 and icdar_set.documents == 27
    region = items.filter(mode="region")
    assert region.count() > 60 and items.filter(mode="page").exists()
    by_document: dict[str, set[str]] = {}
    for item in items:
        by_document.setdefault(item.split_key, set()).add(item.split)
    assert all(len(splits) == 1 for splits in by_document.values())
    assert {s for splits in by_document.values() for s in splits} == {"train", "validation", "test"}
    one = region.first()
    assert one.source == "icdar-eu" and files.path_of(one.inputs["file"]).is_file()


def test_a_set_named_like_the_platform_s_sources_or_unreadable_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="names the platform's own items"):
        call_command("import_ground_truth", str(tmp_path), "--code", "synthetic")
    with pytest.raises(CommandError, match="holds no table"):
        call_command("import_ground_truth", str(tmp_path), "--code", "empty-set")
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4 broken")
    (tmp_path / "a-reg.xml").write_text("<document><table")
    (tmp_path / "a-str.xml").write_text("<document/>")
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_ground_truth", str(tmp_path), "--code", "broken")
    assert not TrackItem.objects.exists()


def test_track_items_writes_items_and_files_with_gold_only_for_public_splits(
    built, icdar_set, tmp_path: Path
) -> None:
    out = tmp_path / "validation"
    call_command("track_items", "--track", "extraction", "--split", "validation", "--out", str(out))
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert records and all("gold" in r for r in records)
    for record in records:
        assert (out / record["file"]).is_file()
    assert {r["source"] for r in records} == {"synthetic", "icdar-eu"}
    test_out = tmp_path / "test"
    for track in ("extraction", "transformation", "sql", "qa"):
        scope = ["--data-scope", "synthetic"] if track == "qa" else []
        call_command(
            "track_items", "--track", track, "--split", "test", "--out", str(test_out), *scope
        )
        lines = (test_out / "items.jsonl").read_text().splitlines()
        assert lines, track
        assert not any("gold" in json.loads(line) for line in lines), track
    # The SQL test items carry no result: the schema lists no values of Value.
    for line in (test_out / "items.jsonl").read_text().splitlines():
        assert "sqlResult" not in line


def test_score_track_refuses_the_test_split_and_prints_the_figures(built, tmp_path: Path) -> None:
    out = tmp_path / "items"
    call_command("track_items", "--track", "sql", "--split", "validation", "--out", str(out))
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    submission = tmp_path / "sql.jsonl"
    submission.write_text(
        "\n".join(json.dumps({"id": r["id"], "prediction": r["gold"]}) for r in records)
    )
    with pytest.raises(CommandError, match="hidden"):
        call_command("score_track", "--track", "sql", "--split", "test", str(submission))
    printed = io.StringIO()
    call_command(
        "score_track", "--track", "sql", "--split", "validation", str(submission), stdout=printed
    )
    result = json.loads(printed.getvalue())
    assert result["n"] == len(records)
    assert result["execution_accuracy"] == result["recall"] == 1.0
    assert not Submission.objects.exists()


def test_a_build_whose_worker_went_away_is_failed_by_the_sweeper_and_the_next_starts(
    settings,
) -> None:
    """The build is a kind of the one job lifecycle (plumbing.jobs): the sweeps worker's one
    task fails a build whose worker went silent, and one queued but never taken; the dead
    worker's claim can write nothing more; a new build starts."""
    from datetime import timedelta

    from django.utils import timezone

    from plumbing import jobs
    from plumbing.tasks import sweep_jobs
    from tracks.jobs import TRACK_ITEM_BUILD
    from tracks.models import ItemBuild
    from tracks.services.builds import item_build_start

    assert TRACK_ITEM_BUILD in jobs.kinds()
    build = item_build_start(user=None, enqueue=False)
    attempt = jobs.claim(TRACK_ITEM_BUILD, build.pk)
    assert attempt == 1
    assert jobs.claim(TRACK_ITEM_BUILD, build.pk) is None  # one worker at a time
    long_ago = timezone.now() - timedelta(seconds=settings.TRACK_BUILD_STALE_SECONDS + 5)
    ItemBuild.objects.filter(pk=build.pk).update(heartbeat_at=long_ago)
    assert sweep_jobs()["track-item-build"]["failed"] == [build.pk]
    build.refresh_from_db()
    assert build.status == "failed" and "went away" in build.error and build.active is None
    assert build.finished_at is not None
    assert not jobs.beat(TRACK_ITEM_BUILD, build.pk, attempt)  # the dead worker's claim
    queued = item_build_start(user=None, enqueue=False)
    assert queued.status == "queued"
    ItemBuild.objects.filter(pk=queued.pk).update(queued_at=long_ago)
    assert sweep_jobs()["track-item-build"]["failed"] == [queued.pk]
    assert item_build_start(user=None, enqueue=False).status == "queued"


def test_only_admins_build_the_items_or_import_sets_whoever_calls_the_service(
    tmp_path: Path,
) -> None:
    """The rules of tracks.permissions hold in the services, so a page, the API or a task
    calling them meets the same refusal; nothing is written."""
    from plumbing.errors import Forbidden
    from tests.factories import UserFactory
    from tracks.models import GroundTruthSet, ItemBuild
    from tracks.services.builds import item_build_start
    from tracks.services.groundtruth import ground_truth_import

    researcher = UserFactory(role="researcher")
    with pytest.raises(Forbidden, match="Only admins build the tracks' items"):
        item_build_start(user=researcher, enqueue=False)
    with pytest.raises(Forbidden, match="Only admins import ground-truth sets"):
        ground_truth_import(folder=tmp_path, code="some-set", name="A set", user=researcher)
    assert not ItemBuild.objects.exists() and not GroundTruthSet.objects.exists()
    assert item_build_start(user=UserFactory(role="admin"), enqueue=False).status == "queued"
