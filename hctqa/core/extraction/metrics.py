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
- **Adjacency relations** (the ICDAR 2013 Table Competition's metric, ``adjacency``): each
  non-empty cell with its nearest non-empty neighbour to the right in each row it spans and
  below in each column it spans; texts compared after NFKC with whitespace removed.
- **Same structure** (``same_structure``): the same rows, columns and spans.

``competition_form`` is the form both grids take before the competition's figures
(``EXTRACTION.md``): whitespace runs made one space, an empty merged cell made empty 1 × 1
cells.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from apted import APTED, Config
from rapidfuzz.distance import Levenshtein

from hctqa.core.extraction.grid import Grid, GridCell, clean_text, grid_from_canonical


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


def teds(predicted: Grid, truth: Grid, *, count_root: bool = True) -> float:
    """TEDS between two tables, from 0 (nothing alike) to 1 (the same tree). PubTabNet's
    own code divides by the ``tr`` and ``td`` nodes only (``count_root=False``)."""
    if predicted == truth:
        return 1.0
    tree1, size1 = _tree(predicted)
    tree2, size2 = _tree(truth)
    if not count_root:
        size1, size2 = size1 - 1, size2 - 1
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


# --- The competition's figures -------------------------------------------------------------


def competition_form(grid: Grid) -> Grid:
    """Texts with whitespace runs as one space; an empty merged cell as empty 1 × 1 cells
    (the competition's ground truth cannot express one); a position no cell covers as an
    empty cell."""
    cells: list[GridCell] = []
    for cell in grid.cells:
        text = clean_text(cell.text)
        if text or (cell.rowspan, cell.colspan) == (1, 1):
            cells.append(GridCell(cell.row, cell.col, cell.rowspan, cell.colspan, text))
        else:
            cells += [GridCell(r, c, 1, 1, "") for r, c in cell.positions()]
    covered = {spot for cell in cells for spot in cell.positions()}
    cells += [
        GridCell(r, c, 1, 1, "")
        for r in range(grid.n_rows)
        for c in range(grid.n_cols)
        if (r, c) not in covered
    ]
    return Grid.build(grid.n_rows, grid.n_cols, cells)


def _relation_text(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def adjacency(grid: Grid) -> Counter[tuple[str, str, str]]:
    """The multiset of adjacency relations ``(text, neighbour's text, "right" | "below")``:
    each non-empty cell and its nearest non-empty neighbour right of it in each row it spans,
    and below it in each column it spans (a neighbour reached from two rows counts once)."""
    owners = grid.owners()
    relations: Counter[tuple[str, str, str]] = Counter()
    for cell in grid.cells:
        text = _relation_text(cell.text)
        if not text:
            continue
        for direction, lanes in (
            (
                "right",
                [
                    (r, c)
                    for r in range(cell.row, cell.row + cell.rowspan)
                    for c in [cell.col + cell.colspan]
                ],
            ),
            (
                "below",
                [
                    (r, c)
                    for c in range(cell.col, cell.col + cell.colspan)
                    for r in [cell.row + cell.rowspan]
                ],
            ),
        ):
            seen: set[int] = set()
            for r, c in lanes:
                while r < grid.n_rows and c < grid.n_cols:
                    other = owners[r][c]
                    if other is not None and other is not cell and _relation_text(other.text):
                        if id(other) not in seen:
                            seen.add(id(other))
                            relations[(text, _relation_text(other.text), direction)] += 1
                        break
                    if direction == "right":
                        c += 1
                    else:
                        r += 1
    return relations


@dataclass
class AdjacencyCount:
    """Relations found, true and right, summed over tables (micro-averaging)."""

    predicted: int = 0
    true: int = 0
    right: int = 0

    def add(self, predicted: Grid | None, truth: Grid) -> None:
        found = adjacency(predicted) if predicted is not None else Counter()
        wanted = adjacency(truth)
        self.predicted += sum(found.values())
        self.true += sum(wanted.values())
        self.right += sum((found & wanted).values())

    @property
    def precision(self) -> float:
        return self.right / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.right / self.true if self.true else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def same_structure(predicted: Grid, truth: Grid) -> bool:
    """The same number of rows and columns and the same set of spans."""

    def spans(grid: Grid) -> set[tuple[int, int, int, int]]:
        return {
            (c.row, c.col, c.rowspan, c.colspan)
            for c in grid.cells
            if (c.rowspan, c.colspan) != (1, 1)
        }

    return (predicted.n_rows, predicted.n_cols) == (truth.n_rows, truth.n_cols) and spans(
        predicted
    ) == spans(truth)
