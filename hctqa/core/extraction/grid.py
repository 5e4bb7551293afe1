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
"""

from __future__ import annotations

from collections.abc import Iterable
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
