"""HCT-QA's reference scoring, rule for rule (docs: SCORING.md), in both published versions.

Text answers get precision, recall, F1 and complete containment (CC) over sets of values;
vision answers get recall and CC by substring containment. Every figure is a macro-average
over questions, reported overall and per data source with a 95% interval.

Two rule versions exist. ``2025-05`` (the default) gave the paper's Table 1 figures and is the
only one with vision rules. ``2025-10`` (text only) also strips ``answer:`` prefixes, cuts at a
code fence, drops one stray comma at each end, leaves "no answer"/"error"/null responses out of
the averages and splits ``label: number`` values for models named like GPT.

The quirks of the reference are kept on purpose: gold answers split on single bars, text
responses on double bars; empty values count; commas between digit runs are dropped in
exactly five passes.

Every step runs in time linear in the answer's length: the reference's regular expressions
are rewritten (below) to give the same output without their quadratic backtracking.
"""

from __future__ import annotations

import gc
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from typing import Literal, NamedTuple

Modality = Literal["text", "vision"]
MODALITIES: tuple[Modality, ...] = ("text", "vision")

Rules = Literal["2025-05", "2025-10"]
RULES: tuple[Rules, ...] = ("2025-05", "2025-10")
DEFAULT_RULES: Rules = "2025-05"

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
# 2025-10: responses that start with these (lower-cased, stripped) are left out of the averages.
EXCLUDED_PREFIXES = ("no answer", "error")

_DIGIT_COMMA_DIGIT = re.compile(r"(?<=\d),(?=\d)")

# The reference's substitutions, and ours. Theirs re-read a whole digit run from every
# position inside it before failing, so one long run costs its length squared (a 100 KB
# answer took minutes). Each of ours starts at the literal comma or point (which the regex
# engine finds without trying every position), never backtracks into a digit run, and is
# applied with split-and-join (a template replacement costs a Python call per match).
# They give the same output on every string (tests/core/test_scoring_equivalence.py):
#
# - (\d+),(\d+) → \1\2. Every match is a comma with digits on both sides, and it consumes
#   the digit runs it joins, so a comma right after the right-hand run cannot match in the
#   same pass: ours consumes that comma too and puts it back ("1,2,3" → "12,3" in one pass,
#   as the reference).
_DIGIT_RUNS_COMMA = re.compile(r",(?<=\d,)(\d++)(,?)")
# - (\d+)\.0+\b → \1. The same shape: a point after a digit, then only zeros up to a non-word
#   character; a point right after the zeros lost its digit run to this match, so it is kept.
_ZEROS_AFTER_POINT = re.compile(r"\.(?<=\d\.)0++\b(\.?)")
# - (\d*\.\d*?[1-9])0+\b → \1. The digits before the point are kept by the replacement and
#   can never make a match fail, so ours starts at the point. The lookahead first checks,
#   in one pass, that the digit run after the point ends in a zero followed by a non-word
#   character, which any match needs; only then is the run matched in detail.
_TRAILING_ZEROS = re.compile(r"(\.(?=\d*+(?<=0)(?!\w))\d*?[1-9])0++\b")

_ANSWER_PREFIX = re.compile(r"answer\s*[:=]\s*")  # 2025-10, step 3
_LABEL_NUMBER = re.compile(r"^([A-Za-z][A-Za-z\s]*[A-Za-z])\s*:\s+(-?\d+(?:\.\d+)?)$")


def _drop_digit_run_commas(text: str) -> str:
    # Five passes, no more: "1,2,3,…" with over 32 groups keeps some commas, as the reference.
    for _ in range(5):
        if "," not in text:  # a pass that changes nothing means the later ones would not either
            break
        joined = "".join(_DIGIT_RUNS_COMMA.split(text))
        if len(joined) == len(text):
            break
        text = joined
    return text


def _drop_trailing_zeros(text: str) -> str:
    # Both patterns need a point and a zero: skip the regex work when either is missing.
    if "." not in text or "0" not in text:
        return text
    if ".0" in text:
        text = "".join(_ZEROS_AFTER_POINT.split(text))
    return "".join(_TRAILING_ZEROS.split(text))


def check_rules(rules: str, modality: str = "text") -> Rules:
    """The rules version, checked: known, and able to score this modality."""
    if rules not in RULES:
        raise ValueError(f"Rules should be one of {', '.join(RULES)}, not {rules!r}")
    if modality not in MODALITIES:
        raise ValueError(f"Modality should be text or vision, not {modality!r}")
    if modality == "vision" and rules != "2025-05":
        raise ValueError(
            f"The {rules} rules score text answers only; vision answers have only the 2025-05 rules"
        )
    return rules  # type: ignore[return-value]


def rules_for(modality: Modality) -> tuple[Rules, ...]:
    """The rule versions that apply to a modality: both for text, 2025-05 for vision."""
    check_rules(DEFAULT_RULES, modality)
    return RULES if modality == "text" else ("2025-05",)


def is_gpt_model(model_name: str) -> bool:
    """Whether the 2025-10 label:number split applies: the name contains "gpt", any case."""
    return "gpt" in model_name.lower()


def model_name_from_filename(filename: str) -> str:
    """The reference's model name for a predictions file: its name up to the first ``--``."""
    return filename.split("--", 1)[0]


# --- Gold answers ---------------------------------------------------------------------------


def gold_values(gold_answer: str) -> list[str]:
    """The gold answer as a list of normalized values (empty values kept); the same in both
    rule versions."""
    return list(_gold_values(gold_answer))


@lru_cache(maxsize=200_000)
def _gold_values(gold_answer: str) -> tuple[str, ...]:
    # Cached: every submission is scored against the same gold answers.
    text = _DIGIT_COMMA_DIGIT.sub("", gold_answer) if "," in gold_answer else gold_answer
    text = text.lower().strip().replace("{", "").replace("}", "").replace("||", "|")
    values = [piece.lower().strip() for piece in text.split("|")]
    return tuple(_drop_trailing_zeros(_drop_digit_run_commas(v)) for v in values)


def normalize_value(value: str) -> str:
    """One value normalized as every gold value is (both rule versions): commas between
    digits dropped, lower-cased and stripped, trailing zeros after a decimal point dropped.
    For a value without ``|``, ``{`` or ``}`` this is ``gold_values(value)[0]``."""
    text = _DIGIT_COMMA_DIGIT.sub("", value) if "," in value else value
    return _drop_trailing_zeros(_drop_digit_run_commas(text.lower().strip()))


@lru_cache(maxsize=200_000)
def _gold_set(gold_answer: str) -> frozenset[str]:
    return frozenset(_gold_values(gold_answer))


# --- Responses ------------------------------------------------------------------------------
# The helpers take the response already lower-cased and stripped (step 1 of both versions).


def _marker_position(text: str) -> int:
    """Where the earliest junk marker starts, or -1."""
    if "#" not in text and ":" not in text and "<" not in text:  # every marker has one
        return -1
    cut = -1
    for marker in JUNK_MARKERS:
        # Once one is found, only a marker starting before it matters.
        end = len(text) if cut == -1 else cut + len(marker) - 1
        at = text.find(marker, 0, end)
        if at != -1:
            cut = at
    return cut


def _head(text: str, cut: int) -> str:
    """Cut at the marker position, then keep what precedes the first blank line."""
    if cut != -1:
        text = text[:cut]
    return text.split("\n\n", 1)[0]


def _finish_2025_05(head: str) -> str:
    text = head.replace("`", "").replace("\n", "")
    return _drop_trailing_zeros(_drop_digit_run_commas(text))


def _strip_one_comma(text: str) -> str:
    if text.startswith(","):
        text = text[1:]
    if text.endswith(","):
        text = text[:-1]
    return text


def _finish_2025_10(head: str) -> str:
    text = head.split("\n```\n", 1)[0].replace("`", "").replace("\n", "")
    text = _strip_one_comma(_drop_digit_run_commas(text).strip())
    # Step 10's lower-casing changes nothing: the text is lower-case since step 1.
    return _drop_trailing_zeros(text).strip()


def _normalize_2025_05(text: str) -> str:
    return _finish_2025_05(_head(text, _marker_position(text)))


def _normalize_2025_10(text: str) -> str:
    cut = _marker_position(text)
    if "answer" in text:
        text = _ANSWER_PREFIX.sub("", text)
    # The marker position was found before the deletion and is not adjusted for it: the
    # reference's quirk, kept.
    return _finish_2025_10(_head(text, cut))


def _normalize_both(text: str) -> tuple[str, str]:
    """The response under 2025-05 and under 2025-10, sharing the work. When 2025-10's values
    are 2025-05's, the same string object comes back twice."""
    if "answer" in text:  # 2025-10 deletes answer prefixes before cutting: nothing to share
        return _normalize_2025_05(text), _normalize_2025_10(text)
    head = _head(text, _marker_position(text))
    if "\n```\n" in head:
        return _finish_2025_05(head), _finish_2025_10(head)
    joined = _drop_digit_run_commas(head.replace("`", "").replace("\n", ""))
    normalized = _drop_trailing_zeros(joined)
    if "," in joined:
        stripped = joined.strip()
        if stripped.startswith(",") or stripped.endswith(","):
            return normalized, _drop_trailing_zeros(_strip_one_comma(stripped)).strip()
    # Nothing that 2025-10 adds applies. Its extra strips change no value: the values are
    # stripped anyway, and whitespace, not being a word character, matches nothing and ends a
    # word in the trailing-zero substitutions just as the string's end does.
    return normalized, normalized


def normalize_response(response: str | None, *, rules: Rules = DEFAULT_RULES) -> str:
    """The cleaned response as one string: steps 1-6 of the 2025-05 text rule, or steps 1-9
    and step 10's lower-casing and stripping of the 2025-10 rule. A null response is the
    empty answer."""
    text = "" if response is None else response.lower().strip()
    if rules == "2025-05":
        return _normalize_2025_05(text)
    check_rules(rules)
    return _normalize_2025_10(text)


def split_label_values(values: Iterable[str]) -> list[str]:
    """2025-10, models named like GPT: each ``label: number`` value becomes the stripped label
    and the number; any other value stays as it is."""
    out: list[str] = []
    for value in values:
        match = _LABEL_NUMBER.match(value.strip()) if ":" in value else None
        if match is None:
            out.append(value)
        else:
            out += (match.group(1).strip(), match.group(2))
    return out


def response_values(
    response: str | None, *, rules: Rules = DEFAULT_RULES, split_labels: bool = False
) -> list[str]:
    """The predicted values of a text response: split on double bars only, each stripped.
    ``split_labels`` applies 2025-10's label:number split for models named like GPT."""
    if split_labels and rules != "2025-10":
        raise ValueError("The label:number split exists only in the 2025-10 rules")
    # normalize_response has lower-cased the text already.
    values = [piece.strip() for piece in normalize_response(response, rules=rules).split("||")]
    return split_label_values(values) if split_labels else values


def answer_key(
    response: str | None,
    modality: Modality,
    *,
    rules: Rules = DEFAULT_RULES,
    split_labels: bool = False,
) -> frozenset[str] | str:
    """What a response's score depends on, its gold answer aside: the set of predicted values
    (text) or the cleaned response (vision). Two responses with the same key score the same
    on a question, so a reader who knows both knows their scores are one unknown."""
    if modality == "vision":
        return normalize_response(response)
    return frozenset(response_values(response, rules=rules, split_labels=split_labels))


def is_excluded(response: str | None, *, rules: Rules = DEFAULT_RULES) -> bool:
    """Whether a response is left out of every average. Under 2025-10: a null response, or
    one that starts with "no answer" or "error" once lower-cased and stripped. Under 2025-05:
    never (a null response scores as the empty answer)."""
    if rules == "2025-05":
        return False
    check_rules(rules)
    return response is None or response.lower().strip().startswith(EXCLUDED_PREFIXES)


# --- Per-question scores --------------------------------------------------------------------


class QuestionScore(NamedTuple):
    # A named tuple, not a frozen dataclass: built once per question, at a fifth of the cost.
    precision: float | None  # None for vision answers
    recall: float
    f1: float | None
    cc: int


def _value_set(normalized: str) -> set[str]:
    return {piece.strip() for piece in normalized.split("||")}


def _text_score(gold: frozenset[str], predicted: set[str]) -> QuestionScore:
    hits = len(gold & predicted)
    precision = hits / max(len(predicted), 1)
    recall = hits / max(len(gold), 1)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return QuestionScore(precision, recall, f1, int(recall == 1))


def _vision_score(gold: frozenset[str], normalized: str) -> QuestionScore:
    found = sum(1 for value in gold if value in normalized)
    recall = found / max(len(gold), 1)
    return QuestionScore(None, recall, None, int(recall == 1))


def score_text(
    gold_answer: str,
    response: str | None,
    *,
    rules: Rules = DEFAULT_RULES,
    split_labels: bool = False,
) -> QuestionScore:
    """One text answer's precision, recall, F1 and CC. Whether the answer counts at all is
    ``is_excluded``'s business; a null response scores as the empty answer."""
    if split_labels:
        predicted = set(response_values(response, rules=rules, split_labels=True))
    else:
        predicted = _value_set(normalize_response(response, rules=rules))
    return _text_score(_gold_set(gold_answer), predicted)


def score_vision(gold_answer: str, response: str | None) -> QuestionScore:
    """One vision answer's recall and CC (2025-05, the only version with vision rules)."""
    return _vision_score(_gold_set(gold_answer), normalize_response(response))


def score(
    gold_answer: str,
    response: str | None,
    modality: Modality,
    *,
    rules: Rules = DEFAULT_RULES,
    split_labels: bool = False,
) -> QuestionScore:
    check_rules(rules, modality)
    if modality == "text":
        return score_text(gold_answer, response, rules=rules, split_labels=split_labels)
    return score_vision(gold_answer, response)


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
    """Mean of each metric over n answers, with 95% intervals (mean ± 1.96·s/√n). A group
    with no answer counted (n = 0) scores 0."""

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


def mean_interval(values: Iterable[float]) -> tuple[float, Interval]:
    """Mean and the paper's 95% interval: mean ± 1.96·s/√n with the sample deviation."""
    values = values if isinstance(values, list | tuple) else list(values)
    n = len(values)
    if n == 0:
        return 0.0, Interval(0.0, 0.0)
    mean = math.fsum(values) / n
    if n == 1:
        return mean, Interval(mean, mean)
    # (v - mean) ** 2 for each v, computed in C: the same numbers, several times faster.
    squares = map(pow, map(operator.sub, values, repeat(mean, n)), repeat(2, n))
    variance = math.fsum(squares) / (n - 1)
    half = 1.96 * math.sqrt(variance) / math.sqrt(n)
    return mean, Interval(mean - half, mean + half)


def summarize(scores: Iterable[QuestionScore], modality: Modality) -> Summary:
    scores = list(scores)
    metrics = ("precision", "recall", "f1", "cc") if modality == "text" else ("recall", "cc")
    # One column per metric, transposed in C rather than read score by score.
    columns: dict[str, tuple] = {}
    if scores:
        columns = dict(zip(QuestionScore._fields, zip(*scores, strict=True), strict=True))
    means: dict[str, float] = {}
    ci: dict[str, Interval] = {}
    for metric in metrics:
        means[metric], ci[metric] = mean_interval(columns.get(metric, ()))
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
    """A predictions file scored against gold answers under one rules version.

    ``scores`` holds the answers counted (``n`` of them) and gives the overall figures. Under
    2025-10 the answers left out are listed in ``excluded_ids``, and for a model named like
    GPT the per-source figures come from ``unsplit_scores`` (the scores without the
    label:number split), as in the reference."""

    rules: Rules
    modality: Modality
    scores: dict[str, QuestionScore]  # by question id, the answers counted
    predictions: dict[str, str | None]  # the responses given, null ones as None
    overall: Summary
    by_source: dict[str, Summary]
    coverage: float  # share of the questions that had a prediction (null included)
    excluded_ids: tuple[str, ...] = ()
    unsplit_scores: dict[str, QuestionScore] | None = None

    @property
    def n(self) -> int:
        """How many answers the averages count."""
        return self.overall.n

    @property
    def excluded(self) -> int:
        """How many answers were left out of every average (2025-10 only)."""
        return len(self.excluded_ids)

    def as_dict(self) -> dict[str, object]:
        return {
            "rules": self.rules,
            "n": self.n,
            "excluded": self.excluded,
            "coverage": self.coverage,
            "overall": self.overall.as_dict(),
            "by_source": {k: v.as_dict() for k, v in self.by_source.items()},
        }


def evaluate(
    gold_answers: Mapping[str, str],
    predictions: Mapping[str, str | None],
    modality: Modality,
    *,
    rules: Rules = DEFAULT_RULES,
    model_name: str = "",
) -> Evaluation:
    """Score every question in ``gold_answers`` under one rules version.

    A question without a prediction counts as an empty answer; coverage says how many had
    one. A null prediction (None) scores as the empty answer under 2025-05 and is left out
    under 2025-10. ``model_name`` decides 2025-10's GPT rule. Predictions for questions not in
    ``gold_answers`` are ignored here (the predictions reader rejects unknown ids)."""
    check_rules(rules, modality)
    with collector_paused():
        return _evaluate(gold_answers, predictions, modality, (rules,), model_name)[rules]


def evaluate_all(
    gold_answers: Mapping[str, str],
    predictions: Mapping[str, str | None],
    modality: Modality,
    *,
    model_name: str = "",
) -> dict[Rules, Evaluation]:
    """``evaluate`` under every rules version that applies to the modality (both for text,
    2025-05 for vision), keyed by version, in one pass that shares the work."""
    with collector_paused():
        return _evaluate(gold_answers, predictions, modality, rules_for(modality), model_name)


@contextmanager
def collector_paused() -> Iterator[None]:
    # Scoring a file allocates a few containers per question and no reference cycles. In a
    # worker holding many live objects, the cycle collector's passes over them cost more than
    # the scoring itself (and make timings swing by half), so it waits until the end.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _evaluate(
    gold_answers: Mapping[str, str],
    predictions: Mapping[str, str | None],
    modality: Modality,
    versions: tuple[Rules, ...],
    model_name: str,
) -> dict[Rules, Evaluation]:
    old = "2025-05" in versions
    new = "2025-10" in versions
    split = new and is_gpt_model(model_name)
    scores_05: dict[str, QuestionScore] = {}
    scores_10: dict[str, QuestionScore] = {}
    unsplit_10: dict[str, QuestionScore] = {}
    excluded: list[str] = []
    by_source: dict[str, list[str]] = {}
    given: dict[str, str | None] = {}
    for question_id, gold_answer in gold_answers.items():
        by_source.setdefault(source_of(question_id), []).append(question_id)
        if question_id in predictions:
            response = given[question_id] = predictions[question_id]
        else:
            response = ""  # no prediction at all: the empty answer, under both versions
        gold = _gold_set(gold_answer)
        text = "" if response is None else response.lower().strip()
        if modality == "vision":
            scores_05[question_id] = _vision_score(gold, _normalize_2025_05(text))
            continue
        if new and (response is None or text.startswith(EXCLUDED_PREFIXES)):
            excluded.append(question_id)
            new_text = None
            old_text = _normalize_2025_05(text) if old else None
        elif old and new:
            old_text, new_text = _normalize_both(text)
        elif old:
            old_text, new_text = _normalize_2025_05(text), None
        else:
            old_text, new_text = None, _normalize_2025_10(text)
        if old_text is not None:
            predicted = _value_set(old_text)
            scores_05[question_id] = question_score = _text_score(gold, predicted)
        if new_text is None:
            continue
        if new_text is not old_text:
            predicted = _value_set(new_text)
            question_score = _text_score(gold, predicted)
        unsplit_10[question_id] = question_score
        if split and ":" in new_text:
            question_score = _text_score(gold, set(split_label_values(predicted)))
        scores_10[question_id] = question_score

    coverage = len(given) / len(gold_answers) if gold_answers else 0.0
    results: dict[Rules, Evaluation] = {}
    if old:
        results["2025-05"] = _evaluation(
            "2025-05", modality, scores_05, scores_05, given, by_source, coverage
        )
    if new:
        results["2025-10"] = _evaluation(
            "2025-10",
            modality,
            scores_10,
            unsplit_10,
            given,
            by_source,
            coverage,
            excluded=tuple(excluded),
            split=split,
        )
    return results


def _evaluation(
    rules: Rules,
    modality: Modality,
    scores: dict[str, QuestionScore],
    source_scores: dict[str, QuestionScore],
    given: dict[str, str | None],
    by_source: dict[str, list[str]],
    coverage: float,
    *,
    excluded: tuple[str, ...] = (),
    split: bool = False,
) -> Evaluation:
    if excluded:
        groups = {
            source: [source_scores[q] for q in ids if q in source_scores]
            for source, ids in by_source.items()
        }
    else:
        groups = {source: [source_scores[q] for q in ids] for source, ids in by_source.items()}
    return Evaluation(
        rules=rules,
        modality=modality,
        scores=scores,
        predictions=given,
        overall=summarize(scores.values(), modality),
        # Every source of the questions is listed; one whose answers were all left out
        # scores 0 with n = 0.
        by_source={k: summarize(v, modality) for k, v in sorted(groups.items())},
        coverage=coverage,
        excluded_ids=excluded,
        unsplit_scores=source_scores if split else None,
    )
