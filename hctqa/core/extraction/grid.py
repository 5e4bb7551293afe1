"""Merged cells on a grid, and the canonical CSV they make.

A table found in a PDF is a set of cell boxes; one found in HTML is a set of cells with
``rowspan``/``colspan``. Either way it becomes a ``Grid``: anchor cells with their spans on a
grid of rows and columns. ``Grid.to_canonical`` writes the benchmark's canonical CSV
(paper Section 3.1 and Appendix E):

- a merged cell's text sits in its top-left position, and ``__`` marks every other position
  it covers, so a column parent is above its leftmost child and a row parent is in the row
  of its topmost child;
- a row-group label (a body row that is one cell across the whole table) stands alone at the
  left of its row, the rest of the row blank;
- a position no cell covers is an empty cell.

``layout_from_boxes`` recovers the grid from cell boxes: the distinct edges of the boxes are
the grid lines, and a box that covers several grid rows or columns is one merged cell.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hctqa.core.tables import COVERED, parse_table, write_csv_rows

Box = tuple[float, float, float, float]  # x0, top, x1, bottom: PDF points, origin top-left


def clean_text(text: str) -> str:
    """Cell text as a page shows it: whitespace runs (line breaks too) are one space."""
    return " ".join(text.split())


@dataclass(frozen=True)
class GridCell:
    row: int
    col: int
    rowspan: int
    colspan: int
    text: str

    def positions(self) -> Iterable[tuple[int, int]]:
        for r in range(self.row, self.row + self.rowspan):
            for c in range(self.col, self.col + self.colspan):
                yield r, c


@dataclass(frozen=True)
class Grid:
    """Anchor cells, row-major, on ``n_rows`` × ``n_cols``. No two cells overlap; a position
    no cell covers reads as an empty cell."""

    n_rows: int
    n_cols: int
    cells: tuple[GridCell, ...]

    @classmethod
    def build(cls, n_rows: int, n_cols: int, cells: Iterable[GridCell]) -> Grid:
        """Cells clipped to the grid; one that overlaps a cell placed before it is dropped."""
        taken: set[tuple[int, int]] = set()
        kept: list[GridCell] = []
        for cell in sorted(cells, key=lambda c: (c.row, c.col)):
            rowspan = min(cell.rowspan, n_rows - cell.row)
            colspan = min(cell.colspan, n_cols - cell.col)
            if cell.row < 0 or cell.col < 0 or rowspan < 1 or colspan < 1:
                continue
            cell = GridCell(cell.row, cell.col, rowspan, colspan, cell.text)
            spots = set(cell.positions())
            if spots & taken:
                continue
            taken |= spots
            kept.append(cell)
        return cls(n_rows, n_cols, tuple(kept))

    def owners(self) -> list[list[GridCell | None]]:
        out: list[list[GridCell | None]] = [[None] * self.n_cols for _ in range(self.n_rows)]
        for cell in self.cells:
            for r, c in cell.positions():
                out[r][c] = cell
        return out

    def is_label_row(self, cell: GridCell) -> bool:
        """A body row that is one cell across the table: a row-group label."""
        return (
            cell.row > 0
            and cell.col == 0
            and cell.colspan == self.n_cols > 1
            and (cell.rowspan == 1)
        )

    def to_rows(self) -> list[list[str]]:
        rows = [[""] * self.n_cols for _ in range(self.n_rows)]
        for cell in self.cells:
            if self.is_label_row(cell):
                rows[cell.row][0] = cell.text
                continue
            for r, c in cell.positions():
                rows[r][c] = cell.text if (r, c) == (cell.row, cell.col) else COVERED
        return rows

    def to_canonical(self) -> str:
        return write_csv_rows(self.to_rows())

    def cleaned(self) -> Grid:
        cells = (
            GridCell(c.row, c.col, c.rowspan, c.colspan, clean_text(c.text)) for c in self.cells
        )
        return Grid(self.n_rows, self.n_cols, tuple(cells))

    def as_json(self) -> dict[str, object]:
        return {
            "n_rows": self.n_rows,
            "n_cols": self.n_cols,
            "cells": [[c.row, c.col, c.rowspan, c.colspan, c.text] for c in self.cells],
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Grid:
        cells = data.get("cells") or []
        assert isinstance(cells, list)
        return cls.build(
            int(str(data["n_rows"])),
            int(str(data["n_cols"])),
            (GridCell(int(r), int(c), int(rs), int(cs), str(t)) for r, c, rs, cs, t in cells),
        )


def grid_from_canonical(canonical_csv: str) -> Grid:
    """The merged cells the project's parser reads from a canonical CSV (``parse_table``)."""
    table = parse_table(canonical_csv)
    cells = (GridCell(c.row, c.col, c.rowspan, c.colspan, c.text) for c in table.cells)
    return Grid.build(table.n_rows, table.n_columns, cells)


def normalize_canonical(canonical_csv: str) -> str:
    """One spelling per table: what the parser reads, written back with whitespace runs made
    one space, row-group labels followed by blanks and stray ``__`` markers blank. Two
    canonical CSVs are the same table when their normal forms are equal."""
    return grid_from_canonical(canonical_csv).cleaned().to_canonical()


# --- From cell boxes -------------------------------------------------------------------------


def _cluster(values: Iterable[float], tolerance: float) -> list[float]:
    """Sorted values, those within ``tolerance`` of the previous one merged (their mean)."""
    groups: list[list[float]] = []
    for value in sorted(values):
        if groups and value - groups[-1][-1] <= tolerance:
            groups[-1].append(value)
        else:
            groups.append([value])
    return [sum(g) / len(g) for g in groups]


@dataclass(frozen=True)
class Layout:
    """Grid lines (``xs``: column edges left to right, ``ys``: row edges top to bottom) and,
    for each box, its ``(row, col, rowspan, colspan)`` or None when it spans nothing."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    spans: tuple[tuple[int, int, int, int] | None, ...]

    @property
    def n_rows(self) -> int:
        return max(0, len(self.ys) - 1)

    @property
    def n_cols(self) -> int:
        return max(0, len(self.xs) - 1)

    def locate(self, x: float, y: float) -> tuple[int, int] | None:
        """The grid position holding point (x, y), or None outside the grid."""
        if not (self.xs and self.ys) or not (self.xs[0] <= x <= self.xs[-1]):
            return None
        if not self.ys[0] <= y <= self.ys[-1]:
            return None
        col = min(bisect.bisect_right(self.xs, x) - 1, self.n_cols - 1)
        row = min(bisect.bisect_right(self.ys, y) - 1, self.n_rows - 1)
        return row, col


def _nearest(lines: Sequence[float], value: float) -> int:
    i = bisect.bisect_left(lines, value)
    if i == 0:
        return 0
    if i == len(lines):
        return len(lines) - 1
    return i if lines[i] - value < value - lines[i - 1] else i - 1


def layout_from_boxes(boxes: Sequence[Box], *, tolerance: float = 2.0) -> Layout:
    """Grid lines from the boxes' edges, and each box's place and spans on them."""
    xs = _cluster((v for b in boxes for v in (b[0], b[2])), tolerance)
    ys = _cluster((v for b in boxes for v in (b[1], b[3])), tolerance)
    spans: list[tuple[int, int, int, int] | None] = []
    for x0, top, x1, bottom in boxes:
        c0, c1 = _nearest(xs, x0), _nearest(xs, x1)
        r0, r1 = _nearest(ys, top), _nearest(ys, bottom)
        spans.append((r0, c0, r1 - r0, c1 - c0) if c1 > c0 and r1 > r0 else None)
    return Layout(tuple(xs), tuple(ys), tuple(spans))


def grid_from_layout(layout: Layout, texts: Sequence[str]) -> Grid:
    """The grid of a layout, each box's text in its cell (``texts`` in the order of boxes)."""
    cells = (
        GridCell(span[0], span[1], span[2], span[3], text)
        for span, text in zip(layout.spans, texts, strict=True)
        if span is not None
    )
    return Grid.build(layout.n_rows, layout.n_cols, cells)
