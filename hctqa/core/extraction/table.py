"""What extraction gives for one table: the output of ``extract_box`` and ``extract_page``.

A ``Table`` is the table as the page lays it out:

- ``page`` (1-based) and ``bbox`` (x0, top, x1, bottom; PDF points, origin top left, or
  pixels for an image): the region the table was read from;
- ``rows`` × ``cols`` grid positions; ``cells``: every non-empty cell once, and the empty ones
  the extractor knows of, each with ``row``, ``col`` (0-based), ``rowspan``, ``colspan``,
  ``text``, its box on the page (``bbox``, None when not known) and ``flags``: why the
  extractor is less sure of it (``FLAG_*`` below), so that a reviewer looks there first;
- ``header_rows``: how many rows at the top are column headers; ``header_cols``: how many
  columns at the left are row labels;
- ``row_levels``: for each row, how deep its label is indented (0 at the left; header rows 0).
  The canonical CSV turns it into row nesting (``to_canonical``);
- ``title``: the caption above the table and its units line ("Table 324. Arrests by Sex and
  Age: 2009 In thousands"); ``notes``: the footnotes and source lines below it;
- ``strategy``: how the grid was found (``lines``: ruling lines throughout; ``text``: text
  alignment, ruling lines used where they exist; ``manual``: nothing found, an empty grid).

``as_json`` is one table of the command line's output (``python -m hctqa.core.extraction``,
its contract in ``EXTRACTION.md``): the fields above, flags and canonical CSV included.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from hctqa.core.extraction.grid import Grid, GridCell

Box = tuple[float, float, float, float]

# Why a cell deserves a second look (``Cell.flags``).
FLAG_NEAR_BOUNDARY = "near_column_boundary"  # a number that sat close to a column boundary
FLAG_JOINED_LINES = "joined_lines"  # text joined from several lines into one cell
FLAG_INFERRED_SPAN = "span_without_rule"  # a merged cell no ruling line bounds
FLAG_LOW_CONFIDENCE = "low_confidence"  # OCR was unsure of a word in it
FLAG_UNKNOWN_WORD = "unknown_word"  # OCR read a word that no dictionary supports
# Each flag as the review page can say it.
FLAGS = {
    FLAG_NEAR_BOUNDARY: "a number that sat close to a column boundary",
    FLAG_JOINED_LINES: "text joined from several lines",
    FLAG_INFERRED_SPAN: "a merged cell that no ruling line bounds",
    FLAG_LOW_CONFIDENCE: "text the OCR was unsure of",
    FLAG_UNKNOWN_WORD: "a word read through OCR that neither its dictionary nor the page knows",
}

STRATEGY_LINES = "lines"
STRATEGY_TEXT = "text"
STRATEGY_MANUAL = "manual"
# How a drawn box is read (``extract.extract_box``): ``auto``, the app's own choice, is rules
# that draw every cell where they do, text alignment with the rules where they are otherwise.
STRATEGY_AUTO = "auto"
DEFAULT_STRATEGY = STRATEGY_AUTO
STRATEGIES = (STRATEGY_AUTO, STRATEGY_LINES, STRATEGY_TEXT, STRATEGY_MANUAL)


@dataclass(frozen=True)
class Cell:
    row: int
    col: int
    rowspan: int
    colspan: int
    text: str
    bbox: Box | None = None
    flags: tuple[str, ...] = ()

    def positions(self) -> Iterable[tuple[int, int]]:
        for r in range(self.row, self.row + self.rowspan):
            for c in range(self.col, self.col + self.colspan):
                yield r, c


@dataclass(frozen=True)
class Table:
    page: int
    bbox: Box
    rows: int
    cols: int
    cells: tuple[Cell, ...]
    header_rows: int = 1
    header_cols: int = 1
    title: str = ""
    notes: str = ""
    strategy: str = STRATEGY_TEXT
    row_levels: tuple[int, ...] = field(default=())

    # --- Views --------------------------------------------------------------------------

    @property
    def grid(self) -> Grid:
        """The cells as the platform's ``Grid`` (as laid out on the page, no nesting)."""
        return Grid.build(
            self.rows,
            self.cols,
            (GridCell(c.row, c.col, c.rowspan, c.colspan, c.text) for c in self.cells),
        )

    @property
    def cell_boxes(self) -> tuple[Box, ...]:
        return tuple(c.bbox for c in self.cells if c.bbox is not None)

    def nested_grid(self) -> Grid:
        """The grid with indented row labels as row nesting (``nest_rows``)."""
        return nest_rows(self)

    def to_canonical(self) -> str:
        """The benchmark's canonical CSV: column parents above their leftmost child, row
        parents (an indented label's less indented label above it) in the row of their
        first child, row-group labels alone at the left of their row."""
        return self.nested_grid().to_canonical()

    def as_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "bbox": [round(v, 2) for v in self.bbox],
            "rows": self.rows,
            "cols": self.cols,
            "cells": [
                {
                    "row": c.row,
                    "col": c.col,
                    "rowspan": c.rowspan,
                    "colspan": c.colspan,
                    "text": c.text,
                    **({"flags": list(c.flags)} if c.flags else {}),
                }
                for c in sorted(self.cells, key=lambda c: (c.row, c.col))
                if c.text
            ],
            "header_rows": self.header_rows,
            "header_cols": self.header_cols,
            "row_levels": list(self.row_levels),
            "title": self.title,
            "notes": self.notes,
            "strategy": self.strategy,
            "canonical_csv": self.to_canonical(),
        }

    def with_cells(self, cells: Iterable[Cell], **changes: Any) -> Table:
        return replace(self, cells=tuple(cells), **changes)


@dataclass(frozen=True)
class PageTables:
    """The tables read from one page (``extract.tables_of``), as the extraction child sends
    them to the command line: defined here, beside ``Table``, so that the command's own
    process reads the reply without loading the extraction rules."""

    page: int
    width: float
    height: float
    has_text: bool
    tables: tuple[Table, ...]
    source: str = "text"  # "ocr": the page was read through OCR
    ocr_texts: tuple[str, ...] = ()  # from OCR: the words read in each table's box


def empty_table(page: int, bbox: Box, rows: int = 2, cols: int = 2) -> Table:
    """An empty grid to type a table into (a region where nothing could be read)."""
    cells = tuple(Cell(r, c, 1, 1, "") for r in range(rows) for c in range(cols))
    return Table(page, bbox, rows, cols, cells, strategy=STRATEGY_MANUAL, row_levels=(0,) * rows)


def nest_rows(table: Table) -> Grid:
    """Indented row labels as the canonical CSV's row nesting.

    A body row whose label is indented under a less indented row *with values of its own*
    is that row's child. The label column becomes one column per nesting depth: a parent's
    label covers its own row and its children's rows, each child's label sits one column to
    the right. A label row without values (a row-group label) stays a row-group label: its
    indented rows are not nested under it. Without nesting the grid is returned as it is.
    """
    grid = table.grid
    levels = list(table.row_levels) + [0] * (table.rows - len(table.row_levels))
    if table.cols < 2 or not any(levels[table.header_rows :]):
        return grid
    owners = grid.owners()

    def has_values(r: int) -> bool:
        return any(
            owners[r][c] is not None and owners[r][c].text and owners[r][c].row == r  # type: ignore[union-attr]
            for c in range(1, table.cols)
        )

    def label(r: int) -> GridCell | None:
        cell = owners[r][0]
        if cell is None or cell.row != r or cell.colspan != 1 or cell.rowspan != 1:
            return None
        return cell if cell.text else None

    # Depth of each body row: how many value rows with less indent are its ancestors.
    depth = [0] * table.rows
    parent: list[int | None] = [None] * table.rows
    stack: list[int] = []  # rows with values whose children may follow
    for r in range(table.header_rows, table.rows):
        if label(r) is None:
            stack = []
            continue
        if not has_values(r):  # a row-group label: no parent, no children
            stack = []
            continue
        while stack and levels[stack[-1]] >= levels[r]:
            stack.pop()
        if stack:
            parent[r] = stack[-1]
            depth[r] = depth[stack[-1]] + 1
        stack.append(r)
    extra = max(depth)
    if extra == 0:
        return grid
    # Rows spanned by each parent: itself and every row down to its last descendant.
    last = list(range(table.rows))
    for r in range(table.rows - 1, table.header_rows - 1, -1):
        p = parent[r]
        while p is not None:
            last[p] = max(last[p], last[r])
            p = parent[p]
    cells: list[GridCell] = []
    for cell in grid.cells:
        if cell.col == 0 and cell.row < table.header_rows:
            cells.append(GridCell(cell.row, 0, cell.rowspan, cell.colspan + extra, cell.text))
        elif cell.col == 0 and label(cell.row) is cell:
            d = depth[cell.row]
            rowspan = last[cell.row] - cell.row + 1 if last[cell.row] > cell.row else 1
            cells.append(GridCell(cell.row, d, rowspan, 1, cell.text))
        elif cell.col == 0 and grid.is_label_row(cell):
            cells.append(GridCell(cell.row, 0, 1, cell.colspan + extra, cell.text))
        elif cell.col == 0:
            cells.append(GridCell(cell.row, 0, cell.rowspan, cell.colspan + extra, cell.text))
        else:
            cells.append(
                GridCell(cell.row, cell.col + extra, cell.rowspan, cell.colspan, cell.text)
            )
    return Grid.build(table.rows, table.cols + extra, cells)
