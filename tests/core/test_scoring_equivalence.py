"""The scorer equals a literal reading of SCORING.md (tests/core/scoring_reference.py) on
every input Hypothesis can find, and on every real sample answer, under both rule versions.

The regular expressions are Unicode-aware on str: ``\\d`` is any decimal digit (Arabic-Indic
too) and ``\\b`` sits between a word character (any letter or digit of any script, or ``_``)
and anything else. The generated strings mix those on purpose.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hctqa.core import scoring
from hctqa.core.scoring import (
    evaluate,
    evaluate_all,
    gold_values,
    response_values,
    score_text,
    score_vision,
    split_label_values,
)
from tests.core.scoring_reference import (
    literal_commas,
    literal_counts_2025_10,
    literal_evaluate_text,
    literal_gold,
    literal_gpt_split,
    literal_text_score,
    literal_trailing_zeros,
    literal_values_2025_05,
    literal_values_2025_10,
    literal_vision_recall,
)

# Digits (ASCII, zero, Arabic-Indic three and zero: \d), points and commas, word characters
# that are not digits (letters, "_", "²", "é", "ж"), and non-word characters.
CHARACTERS = "0000012359..,,, aZ_²éж٣٠\t\n-|:"
# Pieces of real answers and of every rule's triggers, in upper and lower case.
FRAGMENTS = [
    "answer",
    "Answer",
    "ANSWER ",
    ":",
    " = ",
    ": ",
    "\n",
    "\n\n",
    "`",
    "```",
    "\n```\n",
    "||",
    " || ",
    "|",
    ",",
    ", ",
    ".",
    "0",
    "00",
    "1,234",
    "12.50",
    "0.120",
    "7.0",
    "-3",
    "no answer",
    "No Answer",
    "error",
    "Error:",
    "note:",
    "Note:",
    "table:",
    "#input",
    "# input",
    "# solution:",
    "#solution",
    "# explanation:",
    "#Explanation",
    "<eos_token>",
    "Total",
    "Total: 42",
    "men and women:  7.5",
    "İ",  # lower-cases to two characters, which moves positions
    "ẞ",
    "٣٠",
]

# The machine is shared: no deadline, and slow data generation is no failure.
SLOW_MACHINE = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

texts = st.text(alphabet=CHARACTERS, max_size=40)
responses = st.lists(
    st.sampled_from(FRAGMENTS) | st.text(alphabet=CHARACTERS, max_size=6), max_size=12
).map("".join)
gold_cells = st.lists(st.sampled_from(FRAGMENTS[12:]) | texts, min_size=1, max_size=3)
gold_answers = st.one_of(
    st.lists(gold_cells.map(" | ".join).map("{{{}}}".format), min_size=1, max_size=3).map(
        " || ".join
    ),
    st.sampled_from(["Yes", "No"]),
    texts,
)


# --- The linear-time substitutions equal the reference's regular expressions --------------


@settings(max_examples=500, **SLOW_MACHINE)
@given(texts)
@example("1.00.00")  # the second point lost its digits to the first match
@example("1,2,3,4,5")
@example("." + "1" * 50 + "0" * 50 + "a")
@example("1.0.0.0.0 ")
@example("٣.٣0 ")
@example("5.30²")
def test_the_substitutions_equal_the_reference_regexes(text: str) -> None:
    assert scoring._drop_digit_run_commas(text) == literal_commas(text)
    assert scoring._drop_trailing_zeros(text) == literal_trailing_zeros(text)


@settings(max_examples=200, **SLOW_MACHINE)
@given(st.text(max_size=30))
def test_the_substitutions_equal_the_reference_regexes_on_any_text(text: str) -> None:
    assert scoring._drop_digit_run_commas(text) == literal_commas(text)
    assert scoring._drop_trailing_zeros(text) == literal_trailing_zeros(text)


@pytest.mark.parametrize(
    "text",
    [
        "." + "1" * 400 + "0" * 400 + "a",
        "." + "1" * 400 + "0" * 400 + " ",
        "1" * 400 + "," + "2" * 400 + "," + "0" * 400,
        "1," * 400,
        "1.0" * 300 + " 5.50",
        ".10 " * 300,
    ],
)
def test_long_adversarial_answers_keep_the_reference_output(text: str) -> None:
    assert scoring._drop_digit_run_commas(text) == literal_commas(text)
    assert scoring._drop_trailing_zeros(text) == literal_trailing_zeros(text)


# --- Each version's rules equal their literal reading ---------------------------------------


@settings(max_examples=200, **SLOW_MACHINE)
@given(gold_answers)
def test_gold_values_equal_the_literal_rules(gold: str) -> None:
    assert gold_values(gold) == literal_gold(gold)


@settings(max_examples=400, **SLOW_MACHINE)
@given(gold_answers, responses)
@example("{6249}", ",6249")
@example("{Total | 42}", "Total: 42")
@example("{12}", "Answer: 12 note: x")
@example("{5}", "İİ answer: 5 note: blah")
def test_text_scores_equal_the_literal_rules_under_both_versions(gold: str, response: str) -> None:
    assert response_values(response) == literal_values_2025_05(response)
    assert score_text(gold, response) == literal_text_score(
        literal_gold(gold), literal_values_2025_05(response)
    )
    values = literal_values_2025_10(response)
    assert response_values(response, rules="2025-10") == values
    assert score_text(gold, response, rules="2025-10") == literal_text_score(
        literal_gold(gold), values
    )
    assert split_label_values(values) == literal_gpt_split(values)
    assert score_text(gold, response, rules="2025-10", split_labels=True) == literal_text_score(
        literal_gold(gold), literal_gpt_split(values)
    )
    assert scoring.is_excluded(response, rules="2025-10") is not literal_counts_2025_10(response)


@settings(max_examples=150, **SLOW_MACHINE)
@given(gold_answers, responses)
def test_vision_recall_equals_the_literal_rule(gold: str, response: str) -> None:
    assert score_vision(gold, response).recall == literal_vision_recall(gold, response)


# A prediction: missing from the file, JSON null, or a response.
predictions_for = st.one_of(st.just("missing"), st.none(), responses)
questions = st.lists(
    st.tuples(st.sampled_from(["psa", "pak", "census", "arxiv"]), gold_answers, predictions_for),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, **SLOW_MACHINE)
@given(questions, st.sampled_from(["gemma-2-9b-it", "gpt-4o", "Azure-GPT4", ""]))
def test_evaluations_equal_the_literal_averages(questions: list, model_name: str) -> None:
    gold = {f"{source}--{i}": answer for i, (source, answer, _) in enumerate(questions)}
    predictions = {
        f"{source}--{i}": prediction
        for i, (source, _, prediction) in enumerate(questions)
        if prediction != "missing"
    }
    together = evaluate_all(gold, predictions, "text", model_name=model_name)
    assert set(together) == {"2025-05", "2025-10"}
    for rules in ("2025-05", "2025-10"):
        evaluation = evaluate(gold, predictions, "text", rules=rules, model_name=model_name)
        assert together[rules].as_dict() == evaluation.as_dict()
        assert together[rules].scores == evaluation.scores
        literal = literal_evaluate_text(gold, predictions, rules, model_name)
        assert evaluation.rules == rules
        assert evaluation.excluded == literal["excluded"]
        assert evaluation.n == literal["overall"]["n"]
        for summary, figures in [
            (evaluation.overall, literal["overall"]),
            *((evaluation.by_source[s], f) for s, f in literal["by_source"].items()),
        ]:
            assert summary.n == figures["n"]
            for metric in ("precision", "recall", "f1", "cc"):
                assert getattr(summary, metric) == pytest.approx(figures[metric], abs=1e-12)
                ci = summary.ci[metric]
                assert (ci.low, ci.high) == pytest.approx(figures[metric + "_ci"], abs=1e-12)
        assert set(evaluation.by_source) == set(literal["by_source"])


# --- The real sample answers ----------------------------------------------------------------


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
    counted = 0
    for qid, answer in text.items():
        gold_list = literal_gold(gold[qid])
        assert score_text(gold[qid], answer) == literal_text_score(
            gold_list, literal_values_2025_05(answer)
        ), qid
        if literal_counts_2025_10(answer):
            counted += 1
            values = literal_values_2025_10(answer)
            assert score_text(gold[qid], answer, rules="2025-10") == literal_text_score(
                gold_list, values
            ), qid
            assert score_text(
                gold[qid], answer, rules="2025-10", split_labels=True
            ) == literal_text_score(gold_list, literal_gpt_split(values)), qid
    assert counted == evaluate(gold, text, "text", rules="2025-10").n
    for qid, answer in vision.items():
        assert score_vision(gold[qid], answer).recall == literal_vision_recall(gold[qid], answer)
