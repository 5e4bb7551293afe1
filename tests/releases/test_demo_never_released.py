"""The demo tables (made up to try the platform, ``manage.py load_demo``) never enter a
release: not its records, counts, changelog, Hugging Face folder, archives, alpaca files or
prompts, in either edition."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from dataset.models import Question, QuestionStatus, Table
from tests.factories import ModelQuestionFactory
from tests.releases.test_cut_release import edition_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> dict[str, list[str]]:
    """The demo data, and one more demo question verified by hand; their ids and tables."""
    call_command("load_demo", "--no-users", stdout=io.StringIO())
    table = Table.objects.filter(source="demo").order_by("id").first()
    ModelQuestionFactory(
        table=table,
        id=f"{table.id}--A90",
        text="A verified demo question?",
        gold_answer="{DEMO-GOLD}",
        status=QuestionStatus.VERIFIED,
    )
    tables = Table.objects.filter(source="demo")
    questions = Question.objects.filter(table__source="demo")
    assert tables.count() == 6 and questions.filter(status="verified").count() >= 37
    return {
        "tables": list(tables.values_list("id", flat=True)),
        "csvs": list(tables.values_list("canonical_csv", flat=True)),
        "questions": list(questions.values_list("id", flat=True)),
    }


def test_a_release_holds_none_of_the_demo_data(
    dataset: dict, demo: dict, cut, releases_root: Path, client: Client
) -> None:
    first, _ = cut("2026.11")
    # More demo work between two releases: a question verified, a table moved to the test split.
    table = Table.objects.get(pk=demo["tables"][1])
    ModelQuestionFactory(
        table=table, id=f"{table.id}--A91", text="Later?", status=QuestionStatus.VERIFIED
    )
    Table.objects.filter(pk=table.pk).update(split="test")
    second, _ = cut("2026.12")

    real = Table.objects.exclude(source="demo")
    for release in (first, second):
        counts = release.counts
        assert (
            "demo" not in counts["questions_by_source"] and "demo" not in counts["tables_by_source"]
        )
        assert counts["tables"] == real.count()
        assert counts["questions"] == (
            Question.objects.filter(status="verified").exclude(table__source="demo").count()
        )
        assert not any(key.endswith("/demo") for key in release.question_set_digests)
        for edition in ("public", "full"):
            folder = releases_root / release.version / edition
            text = edition_text(folder)  # every file, every archive member, every Parquet row
            assert text.count(dataset["verified"].id) > 0  # the crawl is not blind
            for name in [*demo["tables"], *demo["questions"], "DEMO-GOLD", *demo["csvs"]]:
                assert name not in text, (release.version, edition, name)
            assert '"source": "demo"' not in text and '"demo"' not in text
    assert second.changelog["questions_added"] == []
    assert second.changelog["splits_changed"] == []
    assert second.changelog["counts"] == {k: 0 for k in second.changelog["counts"]}

    page = client.get("/releases/2026.12/").content.decode()
    assert "demo" not in page.lower()


def test_a_dataset_of_demo_data_only_has_nothing_to_release(demo: dict, cut) -> None:
    with pytest.raises(CommandError, match="no verified questions"):
        cut("2026.11")


def test_the_demo_questions_are_not_in_the_loaded_dataset(
    dataset: dict, demo: dict, cut, releases_root: Path, tmp_path: Path, monkeypatch
) -> None:
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    cut("2026.11")
    loaded = datasets.load_dataset(
        str(releases_root / "2026.11/public/hf"), cache_dir=str(tmp_path / "cache")
    )
    sources = {s for split in loaded.values() for s in split["source"]}
    assert "demo" not in sources and sources >= {"psa", "synthetic"}
    ids = {i for split in loaded.values() for i in split["question_id"]}
    assert not ids & set(demo["questions"])
    assert json.loads((releases_root / "2026.11/public/release.json").read_text())["counts"][
        "questions"
    ] == len(ids)
