from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import pytest

from hctqa.core.scoring import (
    evaluate,
    gold_values,
    mean_interval,
    normalize_response,
    response_values,
    score_text,
    score_vision,
    source_of,
)

# --- The worked examples of SCORING.md ------------------------------------------------------


def test_worked_example_multi_row_answer() -> None:
    s = score_text(
        "{Psychology | 86} || {Linguistics | 90}", "Psychology || 86  || Linguistics || 90"
    )
    assert (s.precision, s.recall, s.cc) == (1, 1, 1)


def test_worked_example_extra_values_cost_precision_only() -> None:
    s = score_text("{77}", "77  || 87 || 102")
    assert s.precision == pytest.approx(1 / 3) and s.recall == 1 and s.cc == 1
    assert s.f1 == pytest.approx(0.5)


def test_worked_example_trailing_separator_leaves_an_empty_value() -> None:
    assert response_values("950  ||") == ["950", ""]
    s = score_text("{1146}", "950  ||")
    assert (s.precision, s.recall, s.cc, s.f1) == (0, 0, 0, 0)


def test_worked_example_thousands_and_trailing_zeros() -> None:
    assert gold_values("{1,292.50}") == ["1292.5"]
    assert score_text("{1,292.50}", "`1292.5`").recall == 1


# --- Edge cases -----------------------------------------------------------------------------


def test_only_the_text_before_the_first_blank_line_counts() -> None:
    assert normalize_response("42\n\nBecause the table says so") == "42"
    assert score_text("{42}", "42\n\n17").precision == 1


def test_single_newlines_are_deleted_not_split() -> None:
    assert normalize_response("4\n2") == "42"


def test_junk_markers_cut_the_response_wherever_they_are() -> None:
    # Stripping happens before the cut, so the space before the marker stays…
    assert normalize_response("12 || 13 Note: the values are in thousands") == "12 || 13 "
    # …and goes when the values are split.
    assert response_values("12 || 13 Note: the values are in thousands") == ["12", "13"]
    assert normalize_response("Answer<eos_token> junk") == "answer"
    assert response_values("7 # Explanation: sum of rows") == ["7"]
    # The earliest marker wins, whatever its place in the list.
    assert response_values("5 table: x note: y") == ["5"]


def test_a_code_fence_is_not_split_on_only_its_backticks_removed() -> None:
    assert normalize_response("```\n3 || 4\n```") == "3 || 4"


def test_thousands_separators_are_dropped_in_gold_and_response() -> None:
    assert gold_values("{1,234,567}") == ["1234567"]
    assert response_values("1,234,567") == ["1234567"]
    assert score_text("{12,345 | 6,789}", "12345 || 6789").recall == 1


def test_digit_run_commas_get_exactly_five_passes() -> None:
    # Each pass joins every other pair, so 2^5 = 32 groups join fully and 33 do not.
    joined = normalize_response(",".join(["1"] * 32))
    assert joined == "1" * 32
    assert "," in normalize_response(",".join(["1"] * 34))


def test_commas_next_to_words_stay() -> None:
    assert gold_values("{Doha, Qatar}") == ["doha, qatar"]


def test_trailing_zeros_after_a_point_are_removed() -> None:
    assert gold_values("{12.00 | 12.50 | 0.120 | 100}") == ["12", "12.5", "0.12", "100"]
    assert score_text("{12.5}", "12.50").recall == 1


def test_gold_splits_on_single_bars_responses_on_double_bars() -> None:
    assert gold_values("{a | b} || {c}") == ["a", "b", "c"]
    assert response_values("a | b") == ["a | b"]
    assert score_text("{a | b}", "a | b").recall == 0


def test_empty_answers_score_zero_and_empty_gold_values_are_kept() -> None:
    assert score_text("{5}", "").recall == 0
    assert gold_values("{a | }") == ["a", ""]
    # An empty gold value is matched by an empty predicted value.
    assert score_text("{a | }", "a ||").recall == 1


def test_yes_no_answers_are_bare_and_case_blind() -> None:
    assert score_text("Yes", "yes").cc == 1
    assert score_text("No", "Yes").recall == 0


def test_duplicates_count_once() -> None:
    s = score_text("{7} || {7}", "7 || 7")
    assert (s.precision, s.recall) == (1, 1)


def test_vision_answers_match_gold_values_as_substrings() -> None:
    s = score_vision("{Psychology | 86}", "The answer is Psychology with 86 points.")
    assert (s.precision, s.recall, s.cc, s.f1) == (None, 1, 1, None)
    assert score_vision("{86 | 90}", "86").recall == 0.5
    # Substrings, so "186" contains "86": the reference's rule, kept as is.
    assert score_vision("{86}", "186").recall == 1
    assert score_vision("{1,292.50}", "about 1292.5").recall == 1


def test_the_source_is_the_question_id_prefix() -> None:
    assert source_of("psa--1--2--M0") == "psa"
    assert source_of("synthetic--demo-x--T1") == "synthetic"


# --- Aggregates -----------------------------------------------------------------------------


def test_intervals_are_mean_plus_minus_1_96_sample_sd_over_root_n() -> None:
    values = [0.0, 1.0, 1.0, 0.0, 1.0]
    mean, ci = mean_interval(values)
    s = math.sqrt(sum((v - 0.6) ** 2 for v in values) / 4)
    assert mean == pytest.approx(0.6)
    assert (ci.low, ci.high) == pytest.approx(
        (0.6 - 1.96 * s / math.sqrt(5), 0.6 + 1.96 * s / math.sqrt(5))
    )


def test_missing_predictions_count_as_empty_answers_and_coverage_says_so() -> None:
    gold = {
        "psa--1--1--M0": "{1}",
        "psa--1--1--M1": "{2}",
        "pak--1--1--M0": "{3}",
        "pak--1--1--M1": "{4}",
    }
    result = evaluate(gold, {"psa--1--1--M0": "1", "pak--1--1--M0": "3"}, "text")
    assert result.coverage == 0.5
    assert result.overall.recall == 0.5 and result.overall.n == 4
    assert set(result.by_source) == {"pak", "psa"}
    body = result.as_dict()
    assert set(body) == {"overall", "by_source", "coverage"}
    assert set(body["overall"]) == {"precision", "recall", "f1", "cc", "n", "ci"}


def test_vision_results_have_no_precision_or_f1() -> None:
    body = evaluate({"psa--1--1--M0": "{1}"}, {"psa--1--1--M0": "1"}, "vision").as_dict()
    assert set(body["overall"]) == {"recall", "cc", "n", "ci"}


# --- An independent, literal reading of SCORING.md ------------------------------------------


def literal_gold(gold: str) -> list[str]:
    gold = re.sub(r"(\d),(\d)", r"\1\2", gold)  # step 1, repeated until stable
    gold = re.sub(r"(\d),(\d)", r"\1\2", gold)
    gold = gold.lower().strip().replace("{", "").replace("}", "").replace("||", "|")
    out = []
    for piece in gold.split("|"):
        value = piece.lower().strip()
        for _ in range(5):
            value = re.sub(r"(\d+),(\d+)", r"\1\2", value)
        value = re.sub(r"(\d+)\.0+\b", r"\1", value)
        value = re.sub(r"(\d*\.\d*?[1-9])0+\b", r"\1", value)
        out.append(value)
    return out


def literal_response(response: str) -> str:
    text = response.lower().strip()
    markers = [
        "<eos_token>",
        "#input",
        "# input",
        "# solution:",
        "#solution",
        "# explanation:",
        "#explanation",
        "note:",
        "table:",
    ]
    positions = [text.find(m) for m in markers if m in text]
    if positions:
        text = text[: min(positions)]
    text = text.split("\n\n")[0]
    text = text.replace("`", "").replace("\n", "")
    for _ in range(5):
        text = re.sub(r"(\d+),(\d+)", r"\1\2", text)
    text = re.sub(r"(\d+)\.0+\b", r"\1", text)
    return re.sub(r"(\d*\.\d*?[1-9])0+\b", r"\1", text)


def literal_text(gold: str, response: str) -> tuple[float, float]:
    g = set(literal_gold(gold))
    p = {x.strip().lower() for x in literal_response(response).split("||")}
    return len(p & g) / max(len(p), 1), len(g & p) / max(len(g), 1)


def literal_vision(gold: str, response: str) -> float:
    g = set(literal_gold(gold))
    text = literal_response(response)
    return sum(1 for v in g if v in text) / max(len(g), 1)


def _sample(data_dir: Path, name: str, key: str) -> dict[str, str]:
    path = data_dir / "sample-submissions" / name
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return {r[key]: r["response"] for r in map(json.loads, f)}


def test_every_sample_answer_scores_as_the_literal_rules_say(
    data_dir: Path, release_tables: list
) -> None:
    gold = {q.id: q.gold_answer for t in release_tables for q in t.questions}
    text = _sample(data_dir, "gemma-2-9b-it--text--real.jsonl.gz", "qap_id")
    vision = _sample(data_dir, "InternVL2-4B--vision--real.jsonl.gz", "id")
    assert len(text) == len(vision) == 9835
    for qid, answer in text.items():
        s = score_text(gold[qid], answer)
        assert (s.precision, s.recall) == pytest.approx(literal_text(gold[qid], answer)), qid
    for qid, answer in vision.items():
        assert score_vision(gold[qid], answer).recall == pytest.approx(
            literal_vision(gold[qid], answer)
        ), qid


def test_the_sample_submissions_score_as_recorded(data_dir: Path, release_tables: list) -> None:
    # Our figures for the two sample runs, to the third decimal. The paper's Table 1 lists
    # 0.373 / 0.351 for gemma-2-9b-it and 0.309 recall for InternVL2-4B: runs or question
    # versions differ slightly from these files, so the paper is not the reference here.
    gold = {q.id: q.gold_answer for t in release_tables for q in t.questions}
    text = evaluate(gold, _sample(data_dir, "gemma-2-9b-it--text--real.jsonl.gz", "qap_id"), "text")
    assert (
        round(text.overall.precision, 3),
        round(text.overall.recall, 3),
        round(text.overall.cc, 3),
    ) == (0.369, 0.395, 0.290)
    assert round(text.by_source["census"].recall, 3) == 0.303
    vision = evaluate(
        gold, _sample(data_dir, "InternVL2-4B--vision--real.jsonl.gz", "id"), "vision"
    )
    assert (round(vision.overall.recall, 3), round(vision.overall.cc, 3)) == (0.311, 0.217)
    assert round(vision.by_source["psa"].recall, 3) == 0.291
