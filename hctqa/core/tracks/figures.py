"""Each track's figures as sums over items: the figure of any set of items (all of them, one
source, the tables of one property) and its bootstrap interval, from the per-item results a
scorer gives.

The scorers give a file's figures over all its items (``Scorecard.figures``). A board needs
the same figures over parts of the items, and an interval for each, without running a
submission's SQL or TEDS again. Every figure of the tracks is a ratio of sums over items, or
an F1 of three sums:

- extraction: TEDS, TEDS-Struct and exact structure are means over *tables* (a page item
  holds several), so each item adds its figure times its tables and its tables; adjacency F1
  is micro-averaged: each item adds its relations found, true and right; detection recall
  adds the true tables a page item detected and has; false positives per page add a page's
  unmatched tables and one page;
- transformation and NL-to-SQL: means over items.

``aggregate`` computes them exactly as the scorer does (a test holds them equal on every
track), ``intervals`` resamples items with replacement (``stats.bootstrap_sums``) and takes
the 2.5th and 97.5th percentiles of each figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hctqa.core.stats import bootstrap_sums
from hctqa.core.tracks.shared import ItemResult

RESAMPLES = 1000


@dataclass(frozen=True)
class Figure:
    """One figure of a track: its name (as ``score_track`` prints it), its label, what it
    measures, and how it is made of sums over items: ``numerator / denominator``, or, with
    ``f1_of`` = (right, found, true), the F1 of ``right / found`` and ``right / true``.
    ``empty``: its value on items that give it nothing to count. ``modes``: the extraction
    modes it belongs to (empty: every mode)."""

    name: str
    label: str
    description: str
    numerator: str = ""
    denominator: str = "items"
    f1_of: tuple[str, str, str] | None = None
    higher_is_better: bool = True
    empty: float = 0.0
    modes: tuple[str, ...] = ()

    def value(self, sums: Mapping[str, float]) -> float:
        if self.f1_of is not None:
            right, found, true = (sums.get(k, 0.0) for k in self.f1_of)
            precision = right / found if found else 0.0
            recall = right / true if true else 0.0
            total = precision + recall
            return 2 * precision * recall / total if total else 0.0
        denominator = sums.get(self.denominator, 0.0)
        return sums[self.numerator] / denominator if denominator else self.empty

    def values(self, sums: Mapping[str, np.ndarray]) -> np.ndarray:
        """The figure on every row of resampled sums at once."""
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.f1_of is not None:
                right, found, true = (sums[k] for k in self.f1_of)
                precision = np.where(found > 0, right / found, 0.0)
                recall = np.where(true > 0, right / true, 0.0)
                total = precision + recall
                return np.where(total > 0, 2 * precision * recall / total, 0.0)
            denominator = sums[self.denominator]
            return np.where(denominator > 0, sums[self.numerator] / denominator, self.empty)


FIGURES: dict[str, tuple[Figure, ...]] = {
    "extraction": (
        Figure(
            "teds",
            "TEDS",
            "Tree-edit-distance similarity of the HTML trees (structure and text), mean "
            "over true tables",
            numerator="teds",
            denominator="tables",
        ),
        Figure(
            "teds_struct",
            "TEDS-Struct",
            "TEDS with every text blanked: the structure alone",
            numerator="teds_struct",
            denominator="tables",
        ),
        Figure(
            "adj_f1",
            "Adjacency F1",
            "The ICDAR 2013 competition's adjacency relations, micro-averaged F1",
            f1_of=("relations_right", "relations_found", "relations_true"),
        ),
        Figure(
            "exact",
            "Exact",
            "Share of true tables whose rows, columns and spans are exactly right",
            numerator="exact",
            denominator="tables",
        ),
        Figure(
            "detection_recall",
            "Detection",
            "Share of true tables matched by a predicted box with IoU ≥ 0.5 (whole page)",
            numerator="detected",
            denominator="page_tables",
            empty=1.0,
            modes=("page",),
        ),
        Figure(
            "false_positives",
            "False positives",
            "Predicted tables that match no true table, per page (whole page)",
            numerator="false_positives",
            denominator="pages",
            higher_is_better=False,
            modes=("page",),
        ),
    ),
    "transformation": (
        Figure(
            "row_f1",
            "Row F1",
            "F1 of the relational rows, values normalised as the QA scorer does, columns "
            "matched by their values",
            numerator="row_f1",
        ),
        Figure("row_precision", "Row precision", "Right rows / predicted rows", "row_precision"),
        Figure("row_recall", "Row recall", "Right rows / gold rows", "row_recall"),
        Figure("exact", "Exact", "Share of tables exactly right (rows and columns)", "exact"),
    ),
    "sql": (
        Figure(
            "execution_accuracy",
            "Execution accuracy",
            "Share of statements whose executed result equals the generator's result",
            numerator="execution_accuracy",
        ),
        Figure(
            "recall",
            "QA recall",
            "The QA scorer's recall (2025-05 rules) on the executed result, as a QA answer",
            numerator="recall",
        ),
    ),
}


def figures_of(track: str, mode: str = "") -> tuple[Figure, ...]:
    """The figures a track shows (in an extraction mode: those of that mode)."""
    return tuple(f for f in FIGURES[track] if not f.modes or mode in f.modes)


def components(track: str, result: ItemResult) -> dict[str, float]:
    """What one item adds to the sums its track's figures are made of."""
    figures = result.figures
    if track == "extraction":
        detail = result.detail
        tables = float(detail.get("tables", 1))
        relations = detail.get("relations", {})
        out = {
            "items": 1.0,
            "tables": tables,
            "teds": figures["teds"] * tables,
            "teds_struct": figures["teds_struct"] * tables,
            "exact": figures["exact"] * tables,
            "relations_found": float(relations.get("predicted", 0)),
            "relations_true": float(relations.get("true", 0)),
            "relations_right": float(relations.get("right", 0)),
            "detected": 0.0,
            "page_tables": 0.0,
            "false_positives": 0.0,
            "pages": 0.0,
        }
        if "detected" in detail:
            out.update(
                detected=float(detail["detected"]),
                page_tables=tables,
                false_positives=float(detail["false_positives"]),
                pages=1.0,
            )
        return out
    return {"items": 1.0, **{name: float(value) for name, value in figures.items()}}


def _columns(track: str, results: Sequence[ItemResult]) -> tuple[list[str], np.ndarray]:
    rows = [components(track, r) for r in results]
    names = sorted(rows[0]) if rows else ["items"]
    return names, np.array([[row.get(k, 0.0) for k in names] for row in rows], dtype=np.float64)


def aggregate(track: str, results: Sequence[ItemResult], mode: str = "") -> dict[str, float]:
    """The track's figures over these items' results, as its scorer computes them over all
    of a file's items."""
    names, matrix = _columns(track, results)
    totals = matrix.sum(axis=0) if len(matrix) else np.zeros(len(names))
    sums = dict(zip(names, totals, strict=True))
    return {f.name: float(f.value(sums)) for f in figures_of(track, mode)}


def intervals(
    track: str,
    results: Sequence[ItemResult],
    mode: str = "",
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """Each figure's 95% percentile bootstrap interval over these items' results."""
    names, matrix = _columns(track, results)
    if not len(matrix):
        return {f.name: (f.empty, f.empty) for f in figures_of(track, mode)}
    sums = bootstrap_sums(matrix, resamples=resamples, seed=seed)
    by_name = {name: sums[:, i] for i, name in enumerate(names)}
    out = {}
    for figure in figures_of(track, mode):
        low, high = np.percentile(figure.values(by_name), [2.5, 97.5])
        out[figure.name] = (float(low), float(high))
    return out
