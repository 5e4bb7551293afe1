from __future__ import annotations

import base64
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from PIL import Image

from dataset.models import Question, Split, Table
from dataset.selectors.prompts import prompt_questions
from hctqa.core import prompts as core_prompts
from hctqa.core.images import render_table_png
from hctqa.core.prompts import SYSTEM_PROMPT
from leaderboard.selectors import benchmark_questions
from tests.core.test_prompts import (
    INNER_WHITESPACE,
    RELEASE_TEXT_DEFECTS,
    compare_with_release,
    released_prompts,
)
from tests.factories import NESTED_CSV, SIMPLE_CSV, QuestionFactory, TableFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def release(django_db_setup, django_db_blocker, data_dir: Path):
    """The real release imported once for this module (committed), with the import command."""
    real = data_dir / "hctqa-real"
    with django_db_blocker.unblock():
        call_command(
            "import_hctqa",
            "--qaps",
            str(real / "qaps.json.gz"),
            "--csvs",
            str(real / "csvs.tar.gz"),
            stdout=io.StringIO(),
        )
    yield
    with django_db_blocker.unblock():
        Table.objects.all().delete()


def export(out: Path, *args: str) -> tuple[str, list[dict]]:
    stdout = io.StringIO()
    call_command("export_prompts", "--out", str(out), *args, stdout=stdout)
    lines = out.read_text(encoding="utf-8").splitlines()
    return stdout.getvalue(), [json.loads(line) for line in lines]


def synthetic_question(split: str = Split.TEST, csv_text: str = NESTED_CSV, **table: object):
    """A verified synthetic question: the synthetic scope holds nothing else, so an export of
    it is one line, however much of the real release is in the database."""
    t = TableFactory(source="synthetic", split=split, canonical_csv=csv_text, **table)
    return QuestionFactory(
        table=t,
        id=f"{t.id}--T1",
        origin=Question.Origin.SYNTHETIC,
        template_number=1,
        text="What is the number of Male students in North in 2019?",
        gold_answer="{1}",
    )


def test_paper_export_is_the_released_prompts(release: None, data_dir: Path, tmp_path: Path):
    out = tmp_path / "paper.jsonl"
    stdout, records = export(out, "--format", "paper")
    assert "Wrote 9,835 prompts to" in stdout
    assert len(records) == 9835
    # Only these keys: no gold answer leaves through an export.
    assert {tuple(r) for r in records} == {("qa_id", "table_id", "prompt")}
    ids = [(r["table_id"], r["qa_id"]) for r in records]
    assert ids == sorted(ids)
    ours = {r["qa_id"]: r for r in records}
    lines = dict(zip(ours, out.read_text(encoding="utf-8").splitlines(), strict=True))
    texts = dict(Question.objects.values_list("id", "text"))
    kinds: Counter[str] = Counter()
    others = set()
    for released in released_prompts(data_dir):
        record = ours[released["qa_id"]]
        assert record["table_id"] == released["table_id"]
        kind = compare_with_release(record["prompt"], texts[released["qa_id"]], released)
        kinds[kind] += 1
        if kind == "exact":
            # The line itself is the released line without its gold answer, byte for byte.
            del released["gt"]
            assert lines[released["qa_id"]] == json.dumps(released)
        if kind in ("whitespace", "defect"):
            others.add(released["qa_id"])
    assert kinds["exact"] == 9835 - 559
    assert kinds["trailing"] == 552
    assert others == INNER_WHITESPACE | set(RELEASE_TEXT_DEFECTS)


def test_the_export_selects_what_the_leaderboard_scores(release: None) -> None:
    synthetic_question()
    for split in ("test", "validation", "train", "all"):
        for scope in ("real", "synthetic"):
            ours = set(prompt_questions(split=split, data_scope=scope).values_list("id"))
            theirs = set(benchmark_questions(split=split, data_scope=scope).values_list("id"))
            assert ours == theirs, (split, scope)
    assert prompt_questions(split="test", data_scope="real").count() > 0


def test_unverified_questions_are_left_out(tmp_path: Path) -> None:
    question = synthetic_question()
    QuestionFactory(table=question.table, status=Question.Status.DROPPED)
    _stdout, records = export(tmp_path / "p.jsonl", "--format", "csv", "--scope", "synthetic")
    assert [r["qa_id"] for r in records] == [question.id]


def test_an_image_line_has_a_png_data_url_of_the_drawn_table(tmp_path: Path) -> None:
    question = synthetic_question()
    stdout, records = export(tmp_path / "img.jsonl", "--format", "image", "--scope", "synthetic")
    assert "Wrote 1 prompt to" in stdout
    [record] = records
    assert record["qa_id"] == question.id
    system, user = record["prompt"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    text, image = user["content"]
    assert text["type"] == "text" and question.text in text["text"]
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == render_table_png(NESTED_CSV)


def test_an_image_line_uses_the_tables_own_image_as_png(tmp_path: Path, settings) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    question = synthetic_question()
    jpeg = io.BytesIO()
    Image.new("RGB", (30, 20), (0, 128, 255)).save(jpeg, format="JPEG")
    question.table.image.save("own.jpg", ContentFile(jpeg.getvalue()))
    _stdout, records = export(tmp_path / "i.jsonl", "--format", "image", "--scope", "synthetic")
    url = records[0]["prompt"][1]["content"][1]["image_url"]["url"]
    png = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert png.format == "PNG" and png.size == (30, 20)


def test_an_image_that_cannot_be_read_stops_the_export(tmp_path: Path, settings) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    question = synthetic_question()
    question.table.image.save("own.png", ContentFile(b"not an image at all"))
    with pytest.raises(CommandError, match="Nothing was written. The image of table"):
        export(tmp_path / "i.jsonl", "--format", "image", "--scope", "synthetic")
    assert not (tmp_path / "i.jsonl").exists()


def test_without_a_system_role_there_is_one_user_message(tmp_path: Path) -> None:
    synthetic_question()
    _stdout, records = export(
        tmp_path / "p.jsonl", "--format", "markdown", "--scope", "synthetic", "--no-system-role"
    )
    [message] = records[0]["prompt"]
    assert message["role"] == "user" and message["content"].startswith(SYSTEM_PROMPT + "\n\n")


def test_one_shot_takes_its_example_from_another_train_table(tmp_path: Path) -> None:
    small = synthetic_question(split=Split.TRAIN, csv_text=SIMPLE_CSV)
    other = synthetic_question(split=Split.TRAIN)
    _stdout, records = export(
        tmp_path / "p.jsonl", "--format", "csv", "--scope", "synthetic", "--style", "one_shot"
    )
    by_id = {r["qa_id"]: r["prompt"] for r in records}
    assert [m["role"] for m in by_id[other.id]] == ["system", "user", "assistant", "user"]
    # The smallest train table is the example, except for its own questions.
    assert "Region,Male,Female" in by_id[other.id][1]["content"]
    assert by_id[other.id][2]["content"] == small.gold_answer
    assert "Region,2019,,2020," in by_id[small.id][1]["content"]


def test_one_shot_without_train_questions_is_refused(tmp_path: Path) -> None:
    synthetic_question()
    with pytest.raises(CommandError, match="One_shot prompts need verified train-split"):
        export(
            tmp_path / "p.jsonl", "--format", "csv", "--scope", "synthetic", "--style", "one_shot"
        )


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="invalid choice: 'yaml'"):
        export(tmp_path / "p.jsonl", "--format", "yaml")
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing/p.jsonl", "does not exist"),
        ("a-file/p.jsonl", "does not exist"),
        ("a-folder", "is a folder"),
    ],
)
def test_an_unwritable_path_is_refused(tmp_path: Path, where: str, message: str) -> None:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-folder").mkdir()
    with pytest.raises(CommandError, match=message):
        export(tmp_path / where, "--format", "csv")


def test_a_failure_part_way_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synthetic_question()
    synthetic_question()
    out = tmp_path / "p.jsonl"
    out.write_text("the previous export\n")
    real = core_prompts.prompt_messages
    calls = []

    def fail_on_second(**kwargs: object) -> list[dict]:
        calls.append(1)
        if len(calls) == 2:
            raise core_prompts.PromptError("The table cannot be read: boom")
        return real(**kwargs)

    monkeypatch.setattr("hctqa.core.prompts.prompt_messages", fail_on_second)
    with pytest.raises(CommandError, match="Nothing was written. The table cannot be read"):
        export(out, "--format", "csv", "--scope", "synthetic")
    assert out.read_text() == "the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]
