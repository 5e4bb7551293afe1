"""Reading HCT-QA's canonical CSV into a grid of merged cells.

The canonical CSV (paper Section 3.1 and Appendix E) writes a human-centric table cell by cell:
- ``__`` marks a cell covered by a merged neighbour, to its left or above;
- a column parent sits above its leftmost child, a row parent in the row of its topmost child;
- a row-group label is a row with only its leftmost cell filled.

``parse_table`` turns that text into an ``HCT``: anchor cells with row and column spans, the
number of column-header rows, the number of row-header columns, and each cell's role.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal

COVERED = "__"

CellRole = Literal["column_header", "corner", "row_header", "row_group_label", "value"]


class TableFormatError(ValueError):
    """A canonical CSV that cannot be read as a table."""


@dataclass(frozen=True)
class Cell:
    text: str
    row: int
    col: int
    rowspan: int
    colspan: int
    role: CellRole

    @property
    def is_header(self) -> bool:
        return self.role != "value"


@dataclass(frozen=True)
class HCT:
    """A parsed human-centric table. ``grid`` keeps the canonical cells, markers included."""

    grid: tuple[tuple[str, ...], ...]
    cells: tuple[Cell, ...]
    header_rows: int
    header_columns: int

    @property
    def n_rows(self) -> int:
        return len(self.grid)

    @property
    def n_columns(self) -> int:
        return len(self.grid[0]) if self.grid else 0

    def rows(self) -> list[list[Cell]]:
        """Anchor cells grouped by the row they start in, left to right."""
        out: list[list[Cell]] = [[] for _ in range(self.n_rows)]
        for cell in self.cells:
            out[cell.row].append(cell)
        return out

    def column_paths(self) -> list[tuple[str, ...]]:
        """Each column's header labels from top to bottom, without blanks or repeats."""
        paths: list[list[str]] = [[] for _ in range(self.n_columns)]
        for cell in self.cells:
            if cell.row >= self.header_rows or not cell.text.strip():
                continue
            for col in range(cell.col, cell.col + cell.colspan):
                path = paths[col]
                if not path or path[-1] != cell.text:
                    path.append(cell.text)
        return [tuple(p) for p in paths]

    def column_names(self) -> list[str]:
        """One flat, unique name per column: the header path joined with " - "."""
        names: list[str] = []
        seen: dict[str, int] = {}
        for col, path in enumerate(self.column_paths()):
            name = " - ".join(" ".join(part.split()) for part in path) or f"Column {col + 1}"
            seen[name] = seen.get(name, 0) + 1
            names.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
        return names

    def filled_body(self) -> list[tuple[bool, list[str]]]:
        """Body rows as plain values, merged cells repeated into every cell they cover.

        Each entry is ``(is_row_group_label, values)``; for a label row only ``values[0]``
        is filled. This is what a reader of a flat format needs, since it cannot merge cells.
        """
        filled = [["" for _ in range(self.n_columns)] for _ in range(self.n_rows)]
        label_rows: set[int] = set()
        for cell in self.cells:
            if cell.row < self.header_rows and cell.row + cell.rowspan <= self.header_rows:
                continue
            if cell.role == "row_group_label":
                label_rows.add(cell.row)
                filled[cell.row][0] = cell.text
                continue
            for r in range(cell.row, cell.row + cell.rowspan):
                for c in range(cell.col, cell.col + cell.colspan):
                    filled[r][c] = cell.text
        return [(r in label_rows, filled[r]) for r in range(self.header_rows, self.n_rows)]


def read_csv_rows(text: str) -> list[list[str]]:
    """CSV text → rectangular list of rows (short rows are padded with empty cells)."""
    if "\x00" in text:
        raise TableFormatError("The CSV contains NUL bytes")
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise TableFormatError(f"Not valid CSV: {exc}") from None
    rows = [row for row in rows if row]  # csv yields [] for blank lines
    if not rows:
        raise TableFormatError("The CSV has no rows")
    width = max(len(row) for row in rows)
    return [row + [""] * (width - len(row)) for row in rows]


def write_csv_rows(rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue()


def _is_blank(text: str) -> bool:
    return not text.strip()


def _label_like_rows(grid: list[list[str]]) -> set[int]:
    """Rows after the first whose only content is their leftmost cell: row-group labels."""
    n_cols = len(grid[0])
    if n_cols == 1:
        return set()
    return {
        r
        for r in range(1, len(grid))
        if grid[r][0] != COVERED
        and not _is_blank(grid[r][0])
        and all(_is_blank(v) or v == COVERED for v in grid[r][1:])
    }


_NUMBER = re.compile(r"[-+\u2212]?\(?[$€£]?\d[\d, ]*(?:\.\d+)?%?\)?|[-+\u2212]?\.\d+%?")
_YEAR = re.compile(r"(?:1[89]|20)\d\d")


def _looks_like_data(row: Sequence[str]) -> bool:
    """A row of measurements rather than labels: a decimal, or mostly numbers that are not
    years. Header rows hold words, years and the odd small number."""
    cells = [v.strip() for v in row[1:] if v.strip() and v != COVERED]
    numbers = [v for v in cells if _NUMBER.fullmatch(v) and not _YEAR.fullmatch(v)]
    if any("." in v for v in numbers):
        return True
    return bool(cells) and len(numbers) * 2 > len(cells)


def _left_is_covered(row: Sequence[str], col: int) -> bool:
    """True when every cell left of ``col`` is a ``__``: nothing in this row can own the
    cell at ``col``, so a ``__`` there must be covered from above."""
    return all(v == COVERED for v in row[:col])


def _resolve_spans(
    grid: list[list[str]], barriers: set[int], header_rows: int | None = None
) -> list[tuple[int, int, int, int]]:
    """Merged regions as (row, col, rowspan, colspan), one per anchor, row-major.

    An anchor first takes the ``__`` cells to its right, then the following rows whose cells
    under it are all ``__``. It never crosses a barrier row (a row-group label) nor, once the
    header is known, the header/body boundary. In the body a ``__`` with a real cell to its
    left belongs to that cell, not to the one above: rows merge sideways far more often than
    values merge downwards. A ``__`` that no anchor can take stays an empty one-cell region.
    """
    n_rows, n_cols = len(grid), len(grid[0])
    claimed = [[False] * n_cols for _ in range(n_rows)]
    regions: list[tuple[int, int, int, int]] = []

    def can_extend_down(r: int, c: int, colspan: int, below: int) -> bool:
        # A row-group label covers its own row only, and nothing crosses into one.
        if below >= n_rows or below in barriers or r in barriers:
            return False
        if header_rows is not None:
            if r < header_rows <= below:
                return False
            if below >= header_rows and not _left_is_covered(grid[below], c):
                return False
        return all(
            grid[below][k] == COVERED and not claimed[below][k] for k in range(c, c + colspan)
        )

    for r in range(n_rows):
        for c in range(n_cols):
            if claimed[r][c]:
                continue
            claimed[r][c] = True
            if grid[r][c] == COVERED:
                regions.append((r, c, 1, 1))
                continue
            colspan = 1
            while (
                c + colspan < n_cols
                and grid[r][c + colspan] == COVERED
                and not claimed[r][c + colspan]
            ):
                claimed[r][c + colspan] = True
                colspan += 1
            rowspan = 1
            while can_extend_down(r, c, colspan, r + rowspan):
                for k in range(c, c + colspan):
                    claimed[r + rowspan][k] = True
                rowspan += 1
            regions.append((r, c, rowspan, colspan))
    return regions


def _count_header_rows(grid: list[list[str]], labels: set[int]) -> int:
    """Row 0 is the header. Row h joins it when a header cell reaches down into it through
    ``__`` cells that nothing to their left can own, or, unless row h looks like data, when a
    header cell reaches down ambiguously or row h-1 holds a column parent over its children."""
    n_rows, n_cols = len(grid), len(grid[0])
    regions = _resolve_spans(grid, labels)
    header_rows = 1
    while header_rows < n_rows and header_rows not in labels:
        h = header_rows
        above = [reg for reg in regions if reg[0] < h]
        reaching = [(c, cs) for r, c, rs, cs in above if r + rs > h]
        certain = any(_left_is_covered(grid[h], c) for c, _cs in reaching)
        # A parent over its children; a corner cell spanning only the row-label columns is
        # not one, but a title spanning every column is.
        parent_above = any(
            r == h - 1 and cs > 1 and (c > 0 or cs == n_cols) for r, c, _rs, cs in above
        )
        if not (certain or ((reaching or parent_above) and not _looks_like_data(grid[h]))):
            break
        header_rows += 1
    # A table is headers over a body; when everything reads as header (garbled extractions),
    # keep only the first row.
    return header_rows if header_rows < n_rows else 1


def _count_header_columns(
    regions: list[tuple[int, int, int, int]], header_rows: int, n_cols: int
) -> int:
    """Column 0 holds row labels. A row parent (a label spanning rows) puts its children in
    the next column, and a corner cell spanning columns covers all the row-label columns."""
    if n_cols == 1:
        return 1
    width = 1
    for r, c, rs, cs in regions:
        if r >= header_rows and rs > 1 and c < width:
            # A row parent's children sit just right of it; they are labels too.
            width = max(width, min(n_cols - 1, c + cs + 1))
        elif r < header_rows and c == 0 and cs < n_cols and r + rs == header_rows:
            width = max(width, cs)
    return width


def parse_table(canonical_csv: str) -> HCT:
    """Parse a canonical CSV (no index column, no numbered header row)."""
    return parse_grid(read_csv_rows(canonical_csv))


def parse_grid(rows: Sequence[Sequence[str]]) -> HCT:
    grid = [list(row) for row in rows]
    if not grid or not grid[0]:
        raise TableFormatError("The table has no cells")
    n_rows, n_cols = len(grid), len(grid[0])
    if any(len(row) != n_cols for row in grid):
        raise TableFormatError("Rows have different numbers of cells")
    labels = _label_like_rows(grid)
    header_rows = _count_header_rows(grid, labels) if n_rows > 1 else 1
    regions = _resolve_spans(grid, labels, header_rows)
    header_columns = _count_header_columns(regions, header_rows, n_cols)

    cells: list[Cell] = []
    for r, c, rs, cs in regions:
        text = "" if grid[r][c] == COVERED else grid[r][c]
        role: CellRole
        if r in labels and r >= header_rows:
            if c == 0:
                cells.append(Cell(text, r, 0, 1, n_cols, "row_group_label"))
            # The blank cells of a label row are absorbed by the label.
            continue
        if r < header_rows:
            role = "corner" if c < header_columns else "column_header"
        elif c < header_columns:
            role = "row_header"
        else:
            role = "value"
        cells.append(Cell(text, r, c, rs, cs, role))
    return HCT(
        grid=tuple(tuple(row) for row in grid),
        cells=tuple(cells),
        header_rows=header_rows,
        header_columns=header_columns,
    )


# --- Release files -------------------------------------------------------------------------


def _numbered(row: Sequence[str]) -> bool:
    return list(row) == [str(i) for i in range(len(row))]


def canonical_from_release_csv(text: str) -> str:
    """The raw release CSV (``csvs/<id>.csv``) minus its header row of column numbers.

    The remaining text is kept byte for byte, so pandas reads exactly what the paper's prompts
    were built from.
    """
    first, sep, rest = text.partition("\n")
    if not sep or not _numbered(first.rstrip("\r").split(",")):
        raise TableFormatError("The first line should number the columns: 0,1,2,…")
    if not rest.strip():
        raise TableFormatError("The CSV has a header line but no rows")
    return rest


def canonical_from_embedded_csv(text: str) -> str:
    """The CSV embedded in ``qaps.json`` minus pandas' index column and numbered header row."""
    rows = read_csv_rows(text)
    header = rows[0]
    if header[0] != "" or not _numbered(header[1:]):
        raise TableFormatError("The first row should be an empty cell then 0,1,2,…")
    body = rows[1:]
    if not body:
        raise TableFormatError("The CSV has a header row but no table rows")
    for i, row in enumerate(body):
        if row[0] != str(i):
            raise TableFormatError(f"Row {i + 1} should start with its index {i}, not {row[0]!r}")
    return write_csv_rows([row[1:] for row in body])


def with_numbered_header(canonical_csv: str) -> str:
    """Put back the header row of column numbers that the release's raw CSVs carry."""
    width = len(read_csv_rows(canonical_csv)[0])
    return ",".join(str(i) for i in range(width)) + "\n" + canonical_csv


# --- HTML tables ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HtmlCell:
    text: str
    css_class: str
    is_header: bool


class _TableHTMLParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[HtmlCell, int, int]]] = []
        self._cell: dict[str, str | int | bool] | None = None
        self._text: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth += 1
        if self._depth != 1:
            return
        values = {k: v or "" for k, v in attrs}
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = {
                "is_header": tag == "th",
                "class": values.get("class", ""),
                "rowspan": _span(values.get("rowspan")),
                "colspan": _span(values.get("colspan")),
            }
            self._text = []
        elif tag == "br" and self._cell is not None:
            self._text.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._depth -= 1
        if self._depth == 1 and tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._text).replace("\xa0", " ").split(" ")).strip()
            cell = HtmlCell(text, str(self._cell["class"]), bool(self._cell["is_header"]))
            self.rows[-1].append((cell, int(self._cell["rowspan"]), int(self._cell["colspan"])))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._text.append(data)


def _span(value: str | None) -> int:
    try:
        return max(1, min(1000, int(value or 1)))
    except ValueError:
        return 1


def html_table_cells(html: str) -> list[list[HtmlCell | None]]:
    """The first ``<table>`` in ``html`` laid out on a grid; covered positions are ``None``."""
    parser = _TableHTMLParser()
    parser.feed(html)
    parser.close()
    if not parser.rows or not any(parser.rows):
        raise TableFormatError("No <table> with cells found in the HTML")
    placed: dict[tuple[int, int], HtmlCell | None] = {}
    for r, row in enumerate(parser.rows):
        c = 0
        for cell, rowspan, colspan in row:
            while (r, c) in placed:
                c += 1
            for dr in range(rowspan):
                for dc in range(colspan):
                    placed[(r + dr, c + dc)] = cell if dr == dc == 0 else None
            c += colspan
    n_rows = max(r for r, _c in placed) + 1
    n_cols = max(c for _r, c in placed) + 1
    return [[placed.get((r, c)) for c in range(n_cols)] for r in range(n_rows)]


def canonical_from_html(html: str) -> str:
    """Canonical CSV of an HTML table: merged cells become ``__`` markers."""
    cells = html_table_cells(html)
    return write_csv_rows([[COVERED if c is None else c.text for c in row] for row in cells])
