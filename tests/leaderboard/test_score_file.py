from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.leaderboard.conftest import answers

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("score_file", *args, stdout=out)
    return out.getvalue()


def write(tmp_path: Path, records: dict[str, str], *, zipped: bool = False) -> Path:
    data = "\n".join(json.dumps({"qa_id": q, "answer": a}) for q, a in records.items()).encode()
    path = tmp_path / ("p.jsonl.gz" if zipped else "p.jsonl")
    path.write_bytes(gzip.compress(data) if zipped else data)
    return path


def test_it_prints_the_figures_per_source(dataset, tmp_path: Path) -> None:
    output = run(str(write(tmp_path, answers(dataset, right=6))), "--modality", "text")
    assert "overall     0.500 [" in output
    assert "coverage: 100.0% of 12 questions" in output
    for source in ("psa", "pak", "census", "arxiv"):
        assert f"\n{source}" in output


def test_json_output_has_the_documented_shape(dataset, tmp_path: Path) -> None:
    body = json.loads(
        run(str(write(tmp_path, answers(dataset), zipped=True)), "--modality", "text", "--json")
    )
    assert set(body) == {"overall", "by_source", "coverage"}
    assert set(body["overall"]) == {"precision", "recall", "f1", "cc", "n", "ci"}
    assert body["overall"]["recall"] == 1.0 and body["coverage"] == 1.0
    assert body["by_source"]["psa"]["n"] == 3
    vision = json.loads(
        run(str(write(tmp_path, answers(dataset))), "--modality", "vision", "--json")
    )
    assert "precision" not in vision["overall"] and "f1" not in vision["overall"]


def test_a_split_scores_only_its_questions_and_reports_coverage(dataset, tmp_path: Path) -> None:
    partial = {q: a for q, a in answers(dataset).items() if not q.startswith("pak")}
    body = json.loads(
        run(str(write(tmp_path, partial)), "--modality", "text", "--split", "test", "--json")
    )
    assert (
        body["overall"]["n"] == 3 and body["coverage"] == 0.0 and body["overall"]["recall"] == 0.0
    )


def test_bad_input_is_named(dataset, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qa_id": "psa--1--1--M0", "answer": "x"}\nnot json\n')
    with pytest.raises(CommandError, match="bad.jsonl: line 2: not valid JSON"):
        run(str(bad), "--modality", "text")
    with pytest.raises(CommandError, match="nope.jsonl: no such file"):
        run(str(tmp_path / "nope.jsonl"), "--modality", "text")
    with pytest.raises(CommandError, match="invalid choice: 'audio'"):
        run(str(bad), "--modality", "audio")


def test_a_file_over_the_limit_is_refused_without_reading_it(
    dataset, tmp_path: Path, settings, monkeypatch
) -> None:
    settings.SUBMISSION_MAX_BYTES = 100
    big = write(tmp_path, answers(dataset))
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read the whole file"))
    with pytest.raises(CommandError, match="p.jsonl: .* MB, over the 0.0 MB limit"):
        run(str(big), "--modality", "text")


def test_an_empty_database_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("[]")
    with pytest.raises(CommandError, match="the file holds no predictions"):
        run(str(path), "--modality", "text")
