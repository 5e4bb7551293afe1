from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from dataset.models import Question
from tests.leaderboard.conftest import answers

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("score_file", *args, stdout=out)
    return out.getvalue()


def write(
    tmp_path: Path, records: dict[str, str], *, zipped: bool = False, name: str = "p.jsonl"
) -> Path:
    data = "\n".join(json.dumps({"qa_id": q, "answer": a}) for q, a in records.items()).encode()
    path = tmp_path / (name + ".gz" if zipped else name)
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
    assert set(body) == {"rules", "n", "excluded", "model_name", "overall", "by_source", "coverage"}
    assert (body["rules"], body["n"], body["excluded"], body["model_name"]) == (
        "2025-05",
        12,
        0,
        "p.jsonl.gz",
    )
    assert set(body["overall"]) == {"precision", "recall", "f1", "cc", "n", "ci"}
    assert body["overall"]["recall"] == 1.0 and body["coverage"] == 1.0
    assert body["by_source"]["psa"]["n"] == 3
    vision = json.loads(
        run(str(write(tmp_path, answers(dataset))), "--modality", "vision", "--json")
    )
    assert "precision" not in vision["overall"] and "f1" not in vision["overall"]


def test_a_split_scores_only_its_questions_and_reports_coverage(dataset, tmp_path: Path) -> None:
    partial = {
        q: a for q, a in answers(dataset).items() if q != "pak--1--1--M1" and q != "pak--1--1--M2"
    }
    body = json.loads(
        run(str(write(tmp_path, partial)), "--modality", "text", "--split", "test", "--json")
    )
    assert body["overall"]["n"] == 3 and body["coverage"] == pytest.approx(1 / 3)
    assert body["overall"]["recall"] == pytest.approx(1 / 3)


def test_bad_input_is_named(dataset, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qa_id": "psa--1--1--M0", "answer": "x"}\nnot json\n')
    with pytest.raises(CommandError, match="bad.jsonl: Line 2: not valid JSON"):
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
    with pytest.raises(CommandError, match="The file holds no predictions"):
        run(str(path), "--modality", "text")


def test_a_release_result_file_warns_where_its_gt_differs(dataset, tmp_path: Path) -> None:
    # The benchmark's own result files: qap_id, output and gt. The platform's gold scores;
    # whoever runs score_file holds every gold answer, so test-split rows are compared too.
    path = tmp_path / "gemma--text.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"qap_id": q, "output": a.strip("{}"), "gt": "{x}" if "M0" in q else a})
            for q, a in sorted(dataset.items())
        )
    )
    out, err = io.StringIO(), io.StringIO()
    call_command("score_file", str(path), "--modality", "text", "--json", stdout=out, stderr=err)
    body = json.loads(out.getvalue())
    assert body["overall"]["recall"] == 1.0
    assert body["gold_claims"] == {
        "compared": 12,
        "differ": 4,
        "examples": ["arxiv--1--1--M0", "census--1--1--M0", "pak--1--1--M0", "psa--1--1--M0"],
        "not_compared": 0,
    }
    assert err.getvalue().startswith(
        "warning: the file's own gold answers (gt) differ from the platform's on 4 of 12 "
        "questions, e.g. arxiv--1--1--M0"
    )


def test_a_file_with_nothing_in_the_split_is_refused(dataset, tmp_path: Path) -> None:
    only_test = {q: a for q, a in answers(dataset).items() if q.startswith("pak--")}
    with pytest.raises(CommandError, match="its ids are 3 in the test split"):
        run(str(write(tmp_path, only_test)), "--modality", "text", "--split", "train")


def test_null_answers_score_as_empty(dataset, tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps({"id": q, "response": None}) for q in sorted(dataset)))
    body = json.loads(run(str(path), "--modality", "text", "--json"))
    assert body["overall"]["recall"] == 0.0 and body["coverage"] == 1.0
    assert (body["n"], body["excluded"]) == (12, 0)
    # Under 2025-10 a null answer is left out of every average.
    body = json.loads(run(str(path), "--modality", "text", "--rules", "2025-10", "--json"))
    assert (body["n"], body["excluded"], body["overall"]["recall"]) == (0, 12, 0.0)


def test_rules_2025_10_counts_answers_and_reports_those_left_out(dataset, tmp_path: Path) -> None:
    records = answers(dataset)
    ids = sorted(records)
    records[ids[0]] = "No answer in the table"
    records[ids[1]] = "Error: the request timed out"
    records[ids[2]] = "Answer: " + records[ids[2]]
    path = write(tmp_path, records)
    old = json.loads(run(str(path), "--modality", "text", "--json"))
    new = json.loads(run(str(path), "--modality", "text", "--rules", "2025-10", "--json"))
    assert (old["rules"], old["n"], old["excluded"]) == ("2025-05", 12, 0)
    assert old["overall"]["recall"] == 9 / 12
    assert (new["rules"], new["n"], new["excluded"]) == ("2025-10", 10, 2)
    assert new["overall"]["n"] == 10 and new["overall"]["recall"] == 1.0
    text = run(str(path), "--modality", "text", "--rules", "2025-10")
    assert "rules 2025-10, model name 'p.jsonl'" in text
    assert "left out of the averages: 2 answers" in text


def test_the_gpt_rule_follows_the_file_name_or_model_name(dataset, tmp_path: Path) -> None:
    qid = sorted(dataset)[0]  # one of the three arxiv questions
    Question.objects.filter(pk=qid).update(gold_answer="{Total | 42}")
    records = {**answers(dataset), qid: "Total: 42"}

    def overall_and_source(*args: str) -> tuple[float, float]:
        body = json.loads(run(*args, "--modality", "text", "--rules", "2025-10", "--json"))
        return body["overall"]["recall"], body["by_source"][qid.split("--")[0]]["recall"]

    gpt_file = write(tmp_path, records, name="gpt-4o--text--real.jsonl")
    # Named like GPT: the label:number answer counts overall, not per source.
    assert overall_and_source(str(gpt_file)) == (1.0, 2 / 3)
    assert overall_and_source(str(gpt_file), "--model-name", "gemma") == (11 / 12, 2 / 3)
    other = write(tmp_path, records, name="gemma--text.jsonl")
    assert overall_and_source(str(other), "--model-name", "GPT-4") == (1.0, 2 / 3)
    body = json.loads(run(str(gpt_file), "--modality", "text", "--json"))
    assert body["model_name"] == "gpt-4o" and body["overall"]["recall"] == 11 / 12


def test_vision_under_2025_10_is_refused_with_the_reason(dataset, tmp_path: Path) -> None:
    path = write(tmp_path, answers(dataset))
    with pytest.raises(CommandError, match="2025-10 rules score text answers only"):
        run(str(path), "--modality", "vision", "--rules", "2025-10")
    with pytest.raises(CommandError, match="invalid choice: '2024'"):
        run(str(path), "--modality", "text", "--rules", "2024")
