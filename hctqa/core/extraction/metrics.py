"""How close an extracted table is to the true one.

- **TEDS** (tree-edit-distance similarity, the PubTabNet metric of table-recognition work):
  both tables as HTML trees (``table`` → ``tr`` → ``td``), the tree edit distance between
  them by APTED (the ``apted`` package), divided by the larger tree's node count, taken
  from 1. Renaming a ``td`` costs 1 when the spans differ, otherwise the normalized
  Levenshtein distance of the two texts; inserting or deleting a node costs 1.
- **Exact match**: the two canonical CSVs have the same normal form
  (``grid.normalize_canonical``: the same cells, spans and text, whitespace runs aside).
- **Cell precision and recall**: a non-empty cell is right when the other table has a cell
  with the same text at the same row and column with the same spans.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from apted import APTED, Config
from rapidfuzz.distance import Levenshtein

from hctqa.core.extraction.grid import Grid, grid_from_canonical


@dataclass
class _Node:
    tag: str
    text: str = ""
    rowspan: int = 1
    colspan: int = 1
    children: list[_Node] = field(default_factory=list)


class _TedsConfig(Config):  # type: ignore[misc]
    valuecls = float

    def rename(self, node1: _Node, node2: _Node) -> float:
        if node1.tag != node2.tag:
            return 1.0
        if node1.tag != "td":
            return 0.0
        if (node1.rowspan, node1.colspan) != (node2.rowspan, node2.colspan):
            return 1.0
        return float(Levenshtein.normalized_distance(node1.text, node2.text))

    def children(self, node: _Node) -> list[_Node]:
        return node.children


def _tree(grid: Grid) -> tuple[_Node, int]:
    rows = [_Node("tr") for _ in range(grid.n_rows)]
    for cell in grid.cells:
        rows[cell.row].children.append(_Node("td", cell.text, cell.rowspan, cell.colspan))
    return _Node("table", children=rows), 1 + len(rows) + len(grid.cells)


def teds(predicted: Grid, truth: Grid) -> float:
    """TEDS between two tables, from 0 (nothing alike) to 1 (the same tree)."""
    if predicted == truth:
        return 1.0
    tree1, size1 = _tree(predicted)
    tree2, size2 = _tree(truth)
    distance = APTED(tree1, tree2, _TedsConfig()).compute_edit_distance()
    return max(0.0, 1.0 - float(distance) / max(size1, size2))


@dataclass(frozen=True)
class Comparison:
    exact: bool
    teds: float
    cell_precision: float
    cell_recall: float


def _cell_keys(grid: Grid) -> Counter[tuple[int, int, int, int, str]]:
    return Counter(
        (c.row, c.col, c.rowspan, c.colspan, c.text) for c in grid.cells if c.text.strip()
    )


def compare(predicted_csv: str, truth_csv: str, *, with_teds: bool = True) -> Comparison:
    """Compare an extracted canonical CSV with the true (accepted) one. TEDS takes seconds on
    a table of a thousand cells; ``with_teds=False`` leaves it out (``nan``) when an exact
    match is not enough to know it."""
    predicted = grid_from_canonical(predicted_csv).cleaned()
    truth = grid_from_canonical(truth_csv).cleaned()
    exact = predicted.to_canonical() == truth.to_canonical()
    found, wanted = _cell_keys(predicted), _cell_keys(truth)
    right = sum((found & wanted).values())
    return Comparison(
        exact=exact,
        teds=1.0 if exact else (teds(predicted, truth) if with_teds else float("nan")),
        cell_precision=right / sum(found.values()) if found else float(not wanted),
        cell_recall=right / sum(wanted.values()) if wanted else 1.0,
    )
