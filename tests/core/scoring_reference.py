"""A literal, slow reading of SCORING.md, step by step with the reference's own regular
expressions, written independently of hctqa.core.scoring so the tests can compare the two.
Nothing here is optimised: each step is the sentence of SCORING.md it implements."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping

MARKERS = [
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


def literal_commas(value: str) -> str:
    """Repeat "drop a comma between digit runs" five times."""
    for _ in range(5):
        value = re.sub(r"(\d+),(\d+)", r"\1\2", value)
    return value


def literal_trailing_zeros(value: str) -> str:
    """The two trailing-zero substitutions, in this order."""
    value = re.sub(r"(\d+)\.0+\b", r"\1", value)
    return re.sub(r"(\d*\.\d*?[1-9])0+\b", r"\1", value)


def literal_gold(gold: str) -> list[str]:
    while re.search(r"\d,\d", gold):  # step 1: every comma between two digits
        gold = re.sub(r"(\d),(\d)", r"\1\2", gold)
    gold = gold.lower().strip().replace("{", "").replace("}", "").replace("||", "|")
    out = []
    for piece in gold.split("|"):
        value = piece.lower().strip()
        out.append(literal_trailing_zeros(literal_commas(value)))
    return out


def _first_marker(text: str) -> int | None:
    positions = [text.find(m) for m in MARKERS if m in text]
    return min(positions) if positions else None


# --- 2025-05 --------------------------------------------------------------------------------


def literal_response(response: str) -> str:
    """2025-05, steps 1-6."""
    text = response.lower().strip()
    cut = _first_marker(text)
    if cut is not None:
        text = text[:cut]
    text = text.split("\n\n")[0]
    text = text.replace("`", "").replace("\n", "")
    return literal_trailing_zeros(literal_commas(text))


def literal_values_2025_05(response: str | None) -> list[str]:
    """2025-05, step 7. A null response is the empty answer (the platform's choice: the
    reference never sees one)."""
    text = literal_response("" if response is None else response)
    return [piece.strip().lower() for piece in text.split("||")]


# --- 2025-10 --------------------------------------------------------------------------------


def literal_counts_2025_10(response: str | None) -> bool:
    """Left out when JSON null, or when, lower-cased and stripped, it starts with
    "no answer" or "error"."""
    if response is None:
        return False
    text = response.lower().strip()
    return not (text.startswith("no answer") or text.startswith("error"))


def literal_values_2025_10(response: str) -> list[str]:
    text = response.lower().strip()  # 1
    position = _first_marker(text)  # 2
    text = re.sub(r"answer\s*[:=]\s*", "", text)  # 3
    if position is not None:  # 4: the remembered position, on the shorter string
        text = text[:position]
    text = text.split("\n\n")[0]  # 5
    text = text.split("\n```\n")[0]
    text = text.replace("`", "").replace("\n", "")  # 6
    text = literal_commas(text)  # 7
    text = text.strip()  # 8
    if text.startswith(","):
        text = text[1:]
    if text.endswith(","):
        text = text[:-1]
    text = literal_trailing_zeros(text)  # 9
    text = text.lower().strip()  # 10
    return [piece.strip() for piece in text.split("||")]


def literal_gpt_split(values: list[str]) -> list[str]:
    out = []
    for value in values:
        match = re.match(r"^([A-Za-z][A-Za-z\s]*[A-Za-z])\s*:\s+(-?\d+(?:\.\d+)?)$", value.strip())
        if match:
            out += [match.group(1).strip(), match.group(2)]
        else:
            out.append(value)
    return out


# --- Scores and averages --------------------------------------------------------------------


def literal_text_score(gold: list[str], predicted: list[str]) -> tuple[float, float, float, int]:
    g, p = set(gold), set(predicted)
    precision = len(p & g) / max(len(p), 1)
    recall = len(g & p) / max(len(g), 1)
    f1 = 0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1, 1 if recall == 1 else 0


def literal_vision_recall(gold: str, response: str | None) -> float:
    g = set(literal_gold(gold))
    text = literal_response("" if response is None else response)
    return sum(1 for v in g if v in text) / max(len(g), 1)


def _figures(rows: list[tuple[float, float, float, int]]) -> dict[str, object]:
    """The mean of each metric over the answers that count; a group where none count
    scores 0. Intervals: mean ± 1.96 · s / √n."""
    out: dict[str, object] = {"n": len(rows)}
    for i, metric in enumerate(("precision", "recall", "f1", "cc")):
        values = [row[i] for row in rows]
        mean = sum(values) / len(values) if values else 0.0
        half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0
        out[metric] = mean
        out[metric + "_ci"] = (mean - half, mean + half)
    return out


def literal_evaluate_text(
    gold: Mapping[str, str],
    predictions: Mapping[str, str | None],
    rules: str,
    model_name: str = "",
) -> dict[str, object]:
    """Overall and per-source figures for text answers, with n and the excluded count."""
    overall_rows = []
    source_rows: dict[str, list] = {qid.split("--")[0]: [] for qid in gold}
    excluded = 0
    for qid, gold_answer in gold.items():
        # A question with no prediction at all counts as an empty answer.
        response = predictions.get(qid, "")
        gold_list = literal_gold(gold_answer)
        if rules == "2025-05":
            values = literal_values_2025_05(response)
            overall_rows.append(literal_text_score(gold_list, values))
            source_rows[qid.split("--")[0]].append(literal_text_score(gold_list, values))
            continue
        if not literal_counts_2025_10(response):
            excluded += 1
            continue
        values = literal_values_2025_10(response)
        # The GPT split counts in the overall figures only.
        overall_values = literal_gpt_split(values) if "gpt" in model_name.lower() else values
        overall_rows.append(literal_text_score(gold_list, overall_values))
        source_rows[qid.split("--")[0]].append(literal_text_score(gold_list, values))
    return {
        "overall": _figures(overall_rows),
        "by_source": {source: _figures(rows) for source, rows in source_rows.items()},
        "excluded": excluded,
    }
