"""HCT-QA's reference scoring, rule for rule (docs: SCORING.md).

Text answers get precision, recall, F1 and complete containment (CC) over sets of values;
vision answers get recall and CC by substring containment. Every figure is a macro-average
over questions, reported overall and per data source with a 95% interval.

The quirks of the reference are kept on purpose: gold answers split on single bars, text
responses on double bars; empty values count; commas between digit runs are dropped in
exactly five passes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, NamedTuple

Modality = Literal["text", "vision"]
MODALITIES: tuple[Modality, ...] = ("text", "vision")

JUNK_MARKERS = (
    "<eos_token>",
    "#input",
    "# input",
    "# solution:",
    "#solution",
    "# explanation:",
    "#explanation",
    "note:",
    "table:",
)

_DIGIT_COMMA_DIGIT = re.compile(r"(?<=\d),(?=\d)")
_DIGIT_RUNS_COMMA = re.compile(r"(\d+),(\d+)")
_ZEROS_AFTER_POINT = re.compile(r"(\d+)\.0+\b")
_TRAILING_ZEROS = re.compile(r"(\d*\.\d*?[1-9])0+\b")


def _drop_digit_run_commas(text: str) -> str:
    # Five passes, no more: "1,2,3,…" with over 32 groups keeps some commas, as the reference.
    if "," not in text:
        return text
    for _ in range(5):
        text, changed = _DIGIT_RUNS_COMMA.subn(r"\1\2", text)
        if not changed:  # a pass that changes nothing means the later ones would not either
            break
    return text


def _drop_trailing_zeros(text: str) -> str:
    # Both patterns need a point and a zero: skip the regex work when either is missing.
    if "." not in text or "0" not in text:
        return text
    text = _ZEROS_AFTER_POINT.sub(r"\1", text)
    return _TRAILING_ZEROS.sub(r"\1", text)


def gold_values(gold_answer: str) -> list[str]:
    """The gold answer as a list of normalized values (empty values kept)."""
    return list(_gold_values(gold_answer))


@lru_cache(maxsize=200_000)
def _gold_values(gold_answer: str) -> tuple[str, ...]:
    # Cached: every submission is scored against the same gold answers.
    text = _DIGIT_COMMA_DIGIT.sub("", gold_answer) if "," in gold_answer else gold_answer
    text = text.lower().strip().replace("{", "").replace("}", "").replace("||", "|")
    values = [piece.lower().strip() for piece in text.split("|")]
    return tuple(_drop_trailing_zeros(_drop_digit_run_commas(v)) for v in values)


def normalize_response(response: str) -> str:
    """Steps 1-6 of the text rule: the cleaned response as one string."""
    text = response.lower().strip()
    if "#" in text or ":" in text or "<" in text:  # every junk marker has one of these
        for marker in JUNK_MARKERS:
            # Cutting at each marker in turn is cutting at the earliest of them.
            cut = text.find(marker)
            if cut != -1:
                text = text[:cut]
    text = text.split("\n\n", 1)[0]
    text = text.replace("`", "").replace("\n", "")
    text = _drop_digit_run_commas(text)
    return _drop_trailing_zeros(text)


def response_values(response: str) -> list[str]:
    """The predicted values of a text response: split on double bars only."""
    # normalize_response has lower-cased the text already.
    return [piece.strip() for piece in normalize_response(response).split("||")]


class QuestionScore(NamedTuple):
    # A named tuple, not a frozen dataclass: built once per question, at a fifth of the cost.
    precision: float | None  # None for vision answers
    recall: float
    f1: float | None
    cc: int


@lru_cache(maxsize=200_000)
def _gold_set(gold_answer: str) -> frozenset[str]:
    return frozenset(_gold_values(gold_answer))


def score_text(gold_answer: str, response: str) -> QuestionScore:
    gold = _gold_set(gold_answer)
    predicted = {piece.strip() for piece in normalize_response(response).split("||")}
    hits = len(gold & predicted)
    precision = hits / max(len(predicted), 1)
    recall = hits / max(len(gold), 1)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return QuestionScore(precision, recall, f1, int(recall == 1))


def score_vision(gold_answer: str, response: str) -> QuestionScore:
    gold = _gold_set(gold_answer)
    text = normalize_response(response)
    found = sum(1 for value in gold if value in text)
    recall = found / max(len(gold), 1)
    return QuestionScore(None, recall, None, int(recall == 1))


def score(gold_answer: str, response: str, modality: Modality) -> QuestionScore:
    if modality == "text":
        return score_text(gold_answer, response)
    if modality == "vision":
        return score_vision(gold_answer, response)
    raise ValueError(f"modality should be text or vision, not {modality!r}")


def source_of(question_id: str) -> str:
    """The data source: the question id's prefix before the first ``--``."""
    return question_id.split("--", 1)[0]


# --- Aggregates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class Summary:
    """Mean of each metric over n questions, with 95% intervals (mean ± 1.96·s/√n)."""

    n: int
    recall: float
    cc: float
    precision: float | None = None
    f1: float | None = None
    ci: dict[str, Interval] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.precision is not None:
            out["precision"] = self.precision
        out["recall"] = self.recall
        if self.f1 is not None:
            out["f1"] = self.f1
        out["cc"] = self.cc
        out["n"] = self.n
        out["ci"] = {k: [v.low, v.high] for k, v in self.ci.items()}
        return out


def mean_interval(values: list[float]) -> tuple[float, Interval]:
    """Mean and the paper's 95% interval: mean ± 1.96·s/√n with the sample deviation."""
    n = len(values)
    if n == 0:
        return 0.0, Interval(0.0, 0.0)
    mean = math.fsum(values) / n
    if n == 1:
        return mean, Interval(mean, mean)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = 1.96 * math.sqrt(variance) / math.sqrt(n)
    return mean, Interval(mean - half, mean + half)


def summarize(scores: Iterable[QuestionScore], modality: Modality) -> Summary:
    scores = list(scores)
    metrics = ("precision", "recall", "f1", "cc") if modality == "text" else ("recall", "cc")
    means: dict[str, float] = {}
    ci: dict[str, Interval] = {}
    for metric in metrics:
        means[metric], ci[metric] = mean_interval([float(getattr(s, metric)) for s in scores])
    return Summary(
        n=len(scores),
        recall=means["recall"],
        cc=means["cc"],
        precision=means.get("precision"),
        f1=means.get("f1"),
        ci=ci,
    )


@dataclass(frozen=True)
class Evaluation:
    """A predictions file scored against gold answers."""

    modality: Modality
    scores: dict[str, QuestionScore]  # by question id, every question of the split
    predictions: dict[str, str]  # the responses that were scored
    overall: Summary
    by_source: dict[str, Summary]
    coverage: float  # share of the questions that had a prediction

    def as_dict(self) -> dict[str, object]:
        return {
            "overall": self.overall.as_dict(),
            "by_source": {k: v.as_dict() for k, v in self.by_source.items()},
            "coverage": self.coverage,
        }


def evaluate(
    gold_answers: Mapping[str, str], predictions: Mapping[str, str], modality: Modality
) -> Evaluation:
    """Score every question in ``gold_answers``. A question without a prediction counts as
    an empty answer; coverage says how many had one. Predictions for questions not in
    ``gold_answers`` are ignored here (the predictions reader rejects unknown ids)."""
    scores: dict[str, QuestionScore] = {}
    answered = 0
    for question_id, gold in gold_answers.items():
        response = predictions.get(question_id)
        if response is None:
            response = ""
        else:
            answered += 1
        scores[question_id] = score(gold, response, modality)
    by_source_scores: dict[str, list[QuestionScore]] = {}
    for question_id, question_score in scores.items():
        by_source_scores.setdefault(source_of(question_id), []).append(question_score)
    return Evaluation(
        modality=modality,
        scores=scores,
        predictions={q: predictions[q] for q in gold_answers if q in predictions},
        overall=summarize(scores.values(), modality),
        by_source={k: summarize(v, modality) for k, v in sorted(by_source_scores.items())},
        coverage=answered / len(gold_answers) if gold_answers else 0.0,
    )
