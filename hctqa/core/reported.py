"""Reading the results reported in the HCT-QA paper (Table 1, as ``paper-table1.csv``)."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

# The real questions the paper's Table 1 scores on all real data: 9,835 question-answer
# pairs on 1,880 tables (its Table 2), as the release holds them.
PAPER_REAL_QUESTIONS = 9835
# How the paper's own run answered (its Section 4): the figures of its rows come from it.
PAPER_RUN = "zero-shot, temperature 0, at most 128 output tokens"

# The paper calls the QNPC source "qnpc"; the dataset calls it "psa".
_SOURCES = {"qnpc": "psa", "pak": "pak", "census": "census", "arxiv": "arxiv"}
_PARAMETERS = re.compile(r"^(\d+(?:\.\d+)?)B(\+)?$")
_REQUIRED = ("model", "provider", "parameters", "weights", "modality")


class ReportedError(ValueError):
    """A row of the paper's table that cannot be read; the message names it."""


@dataclass(frozen=True)
class ReportedResult:
    model_name: str
    provider: str
    parameters_billions: float | None  # None when only a lower bound is known ("100B+")
    weights: str
    modality: str
    data_scope: str  # "real" or "synthetic"
    precision: float | None
    recall: float | None
    cc: float | None
    by_source: dict[str, dict[str, float | None]] = field(default_factory=dict)


def _number(row: dict[str, str], column: str, line: int) -> float | None:
    raw = (row.get(column) or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ReportedError(
            f"Line {line} ({row['model']}): {column} is not a number: {raw!r}"
        ) from None
    if not 0 <= value <= 1:
        raise ReportedError(f"Line {line} ({row['model']}): {column} should be between 0 and 1")
    return value


def parse_paper_table(text: str) -> list[ReportedResult]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise ReportedError(f"Missing columns: {', '.join(missing)}")
    results: list[ReportedResult] = []
    for line, row in enumerate(reader, start=2):
        name = (row.get("model") or "").strip()
        if not name:
            raise ReportedError(f"Line {line}: the model name is empty")
        weights = (row.get("weights") or "").strip()
        modality = (row.get("modality") or "").strip()
        if weights not in ("open", "closed"):
            raise ReportedError(f"Line {line} ({name}): weights should be open or closed")
        if modality not in ("text", "vision"):
            raise ReportedError(f"Line {line} ({name}): modality should be text or vision")
        match = _PARAMETERS.match((row.get("parameters") or "").strip())
        if not match:
            raise ReportedError(f"Line {line} ({name}): parameters should look like 7B or 100B+")
        parameters = None if match.group(2) else float(match.group(1))
        if parameters is None and weights == "open":
            raise ReportedError(f"Line {line} ({name}): an open model needs an exact size")
        by_source = {
            ours: {
                metric: _number(row, f"{theirs}_{metric}", line)
                for metric in ("precision", "recall", "cc")
            }
            for theirs, ours in _SOURCES.items()
        }
        common = {
            "model_name": name,
            "provider": (row.get("provider") or "").strip(),
            "parameters_billions": parameters,
            "weights": weights,
            "modality": modality,
        }
        real_recall = _number(row, "all_recall", line)
        if real_recall is not None or any(v["recall"] is not None for v in by_source.values()):
            results.append(
                ReportedResult(
                    **common,
                    data_scope="real",
                    precision=_number(row, "all_precision", line),
                    recall=real_recall,
                    cc=None,  # Table 1 gives complete containment per source only.
                    by_source={
                        k: v for k, v in by_source.items() if any(x is not None for x in v.values())
                    },
                )
            )
        synthetic_recall = _number(row, "synthetic_recall", line)
        if synthetic_recall is not None:
            results.append(
                ReportedResult(
                    **common,
                    data_scope="synthetic",
                    precision=_number(row, "synthetic_precision", line),
                    recall=synthetic_recall,
                    cc=None,
                )
            )
    if not results:
        raise ReportedError("The file holds no results")
    return results
