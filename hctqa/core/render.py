"""Renderers for a parsed human-centric table.

- HTML keeps the merged cells as real ``rowspan``/``colspan`` header cells;
- plain CSV, Markdown and JSON records flatten them, since those formats cannot merge;
- LaTeX keeps them too, as ``\\multicolumn``/``\\multirow``;
- pandas' text rendering is what the paper's text-modality prompts contain.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

from hctqa.core.tables import HCT, Cell, read_csv_rows, with_numbered_header, write_csv_rows

# The formats the dataset pages, downloads and API offer. LaTeX is left out for now: those
# callers would each need it too (a download type, a tab label).
FORMATS = ("html", "csv", "markdown", "json", "pandas")


def _span_attrs(cell: Cell) -> str:
    attrs = ""
    if cell.rowspan > 1:
        attrs += f' rowspan="{cell.rowspan}"'
    if cell.colspan > 1:
        attrs += f' colspan="{cell.colspan}"'
    return attrs


def _html_cell(cell: Cell, *, compact: bool = False) -> str:
    text = escape(cell.text)
    pos = "" if compact else f' data-row="{cell.row}" data-col="{cell.col}"'
    span = _span_attrs(cell)
    if cell.role == "value":
        return f"<td{span}{pos}>{text}</td>"
    if cell.role == "row_group_label":
        css = "" if compact else ' class="hct-group"'
        return f'<th scope="rowgroup"{span}{pos}{css}>{text}</th>'
    if cell.role == "row_header":
        scope = "rowgroup" if cell.rowspan > 1 else "row"
        return f'<th scope="{scope}"{span}{pos}>{text}</th>'
    scope = "colgroup" if cell.colspan > 1 else "col"
    css = ' class="hct-corner"' if cell.role == "corner" and not compact else ""
    return f'<th scope="{scope}"{span}{pos}{css}>{text}</th>'


def to_html(
    table: HCT, *, css_class: str = "hct", caption: str | None = None, compact: bool = False
) -> str:
    """An HTML ``<table>``: column headers in ``<thead>``, merged cells as spans.

    ``compact`` leaves out the CSS classes and cell positions the web pages use, for prompts,
    where they would only cost tokens.
    """
    rows = table.rows()
    out = ["<table>" if compact else f'<table class="{escape(css_class)}">']
    if caption:
        out.append(f"<caption>{escape(caption)}</caption>")
    out.append("<thead>")
    for r in range(table.n_rows):
        if r == table.header_rows:
            out.append("</thead><tbody>")
        row_class = ""
        if rows[r] and rows[r][0].role == "row_group_label" and not compact:
            row_class = ' class="hct-group-row"'
        cells = "".join(_html_cell(c, compact=compact) for c in rows[r])
        out.append(f"<tr{row_class}>{cells}</tr>")
    if table.header_rows >= table.n_rows:
        out.append("</thead><tbody>")
    out.append("</tbody></table>")
    return "".join(out)


def to_plain_csv(table: HCT) -> str:
    """The canonical grid with the ``__`` markers blanked, as a spreadsheet shows merges."""
    return plain_csv(table.grid)


def plain_csv(grid: Sequence[Sequence[str]]) -> str:
    """``to_plain_csv`` of the grid itself: it needs none of the table's structure."""
    return write_csv_rows([[v if v != "__" else "" for v in row] for row in grid])


def _markdown_text(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def to_markdown(table: HCT) -> str:
    """A Markdown pipe table: one header row of flattened column names, merged row labels
    repeated on every row they cover, and row-group labels in bold."""
    names = table.column_names()
    lines = [
        "| " + " | ".join(_markdown_text(n) for n in names) + " |",
        "|" + "|".join("---" for _ in names) + "|",
    ]
    for is_label, values in table.filled_body():
        if is_label:
            cells = [f"**{_markdown_text(values[0])}**"] + [""] * (len(names) - 1)
        else:
            cells = [_markdown_text(v) for v in values]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


ROW_GROUP_KEY = "Row group"


def to_records(table: HCT) -> list[dict[str, str]]:
    """One object per body row keyed by flattened column name; under a row-group label the
    label is added as ``"Row group"``."""
    names = table.column_names()
    records: list[dict[str, str]] = []
    group: str | None = None
    for is_label, values in table.filled_body():
        if is_label:
            group = values[0]
            continue
        record: dict[str, str] = {}
        if group is not None:
            record[ROW_GROUP_KEY] = group
        record.update(zip(names, values, strict=True))
        records.append(record)
    return records


def to_json_records(table: HCT) -> str:
    return json.dumps(to_records(table), ensure_ascii=False, indent=1)


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Cell text as LaTeX: specials escaped, whitespace runs (line breaks too) made one space,
    since a blank line inside a tabular cell is an error."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in " ".join(text.split()))


def _latex_cell(cell: Cell, row: int) -> str:
    """The cell's entry in ``row``: its text in its first row, empty in the rows below it."""
    text = latex_escape(cell.text) if row == cell.row else ""
    if cell.role == "row_group_label" and text:
        text = rf"\textbf{{{text}}}"
    if cell.rowspan > 1 and row == cell.row:
        text = rf"\multirow{{{cell.rowspan}}}{{*}}{{{text}}}"
    if cell.colspan > 1:
        align = "c" if cell.role in ("column_header", "corner") else "l"
        # \multicolumn replaces the spec of the columns it spans, their rules included.
        left = "|" if cell.col == 0 else ""
        text = rf"\multicolumn{{{cell.colspan}}}{{{left}{align}|}}{{{text}}}"
    return text


def _ends_in_row(cell: Cell | None, row: int) -> bool:
    return cell is None or cell.row + cell.rowspan - 1 == row


def to_latex(table: HCT) -> str:
    r"""A LaTeX ``tabular`` that keeps the merged cells: ``\multicolumn`` for column spans,
    ``\multirow`` (package ``multirow``) for row spans, and ``\cline`` rules that stop at a
    merged cell, so no rule crosses it. Row-group labels span the row in bold."""
    n_rows, n_cols = table.n_rows, table.n_columns
    owner: list[list[Cell | None]] = [[None] * n_cols for _ in range(n_rows)]
    for cell in table.cells:
        for r in range(cell.row, cell.row + cell.rowspan):
            for c in range(cell.col, cell.col + cell.colspan):
                owner[r][c] = cell
    lines = [r"\begin{tabular}{|" + "l|" * n_cols + "}", r"\hline"]
    for r in range(n_rows):
        entries: list[str] = []
        c = 0
        while c < n_cols:
            cell = owner[r][c]
            if cell is None:  # not expected from parse_table; keep the row's width regardless
                entries.append("")
                c += 1
                continue
            entries.append(_latex_cell(cell, r))
            c = cell.col + cell.colspan
        lines.append(" & ".join(entries) + r" \\")
        # A rule under every column whose cell ends in this row; none through a multirow.
        ends = [_ends_in_row(owner[r][c], r) for c in range(n_cols)]
        if all(ends):
            lines.append(r"\hline")
        else:
            c = 0
            while c < n_cols:
                if not ends[c]:
                    c += 1
                    continue
                start = c
                while c < n_cols and ends[c]:
                    c += 1
                lines.append(rf"\cline{{{start + 1}-{c}}}")
    lines.append(r"\end{tabular}")
    return "\n".join(lines) + "\n"


def to_pandas_text(canonical_csv: str) -> str:
    """pandas' text rendering of the canonical CSV, read back with its numbered header row.

    This is the table text of the paper's zero-shot text prompts. Most tables are drawn here
    directly, the same text some twenty times faster (``text_frame``); the rest by pandas.
    """
    return text_frame(canonical_csv) or pandas_text(canonical_csv)


def pandas_text(canonical_csv: str) -> str:
    """``to_pandas_text`` by pandas itself: ``read_csv`` then ``DataFrame.to_string``."""
    pd = _pandas()
    frame = pd.read_csv(io.StringIO(with_numbered_header(canonical_csv)))
    return frame.to_string()


# pandas' default NA strings (pandas.io.parsers.readers.STR_NA_VALUES); a test checks them.
PANDAS_NA_VALUES = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
# Characters of numbers and of the words pandas reads as numbers or booleans. A value with
# any other character is text to pandas, whatever else its column holds.
_NUMBER_CHARS = frozenset("0123456789+-.eE \t")
_NUMBER_WORDS = frozenset(
    {
        "inf",
        "+inf",
        "-inf",
        "infinity",
        "+infinity",
        "-infinity",
        "nan",
        "+nan",
        "-nan",
        "true",
        "false",
    }
)
_ESCAPES = str.maketrans({"\t": "\\t", "\n": "\\n", "\r": "\\r"})
# pandas reads a large file in chunks and may type one chunk's part of a column apart from
# another's; such tables go to pandas.
_FAST_MAX_CHARS = 100_000


def _is_text(value: str) -> bool:
    return (
        value not in PANDAS_NA_VALUES
        and not _NUMBER_CHARS.issuperset(value)
        and value.strip().lower() not in _NUMBER_WORDS
    )


def text_frame(canonical_csv: str) -> str | None:
    """``pandas_text`` for a table whose every column holds text, where pandas' rendering is
    simple: each value right-aligned under its column number, NA values as ``NaN``, tabs and
    line breaks escaped, and the row numbers left-aligned in front. None for any table this
    does not cover for sure (a column of numbers or of NA values only, quotes or line breaks
    inside values, a very large table); those go to pandas."""
    if len(canonical_csv) > _FAST_MAX_CHARS or "\r" in canonical_csv:
        return None
    try:
        rows = read_csv_rows(canonical_csv)
    except ValueError:
        return None
    text_lines = [line for line in canonical_csv.split("\n") if line.strip()]
    if len(text_lines) != len(rows) or any(not line.strip(" ") for line in text_lines):
        return None  # a value spans lines, or a line of spaces pandas may skip
    width = len(rows[0])
    columns: list[list[str]] = []
    for c in range(width):
        values = [row[c] for row in rows]
        if not any(_is_text(v) for v in values):
            return None
        if any('"' in v for v in values):
            return None
        cells = [" NaN" if v in PANDAS_NA_VALUES else " " + v.translate(_ESCAPES) for v in values]
        header = str(c)
        size = max(len(header), *(len(x) for x in cells))
        columns.append([header.rjust(size)] + [x.rjust(size) for x in cells])
    index = [""] + [str(i) for i in range(len(rows))]
    index_size = len(index[-1])
    columns.insert(0, [x.ljust(index_size) for x in index])
    lines = []
    for r in range(len(index)):
        lines.append(" ".join(column[r] for column in columns))
    return "\n".join(lines)


@lru_cache(maxsize=1)
def _pandas() -> Any:
    """pandas, imported on first use: it costs a second to import and few callers need it.

    With pyarrow installed (release Parquet files need it), pandas 3 keeps text columns in
    pyarrow, and ``to_string`` gives the same text two to three times slower. Python strings
    keep the paper's rendering fast; nothing else here uses pandas.
    """
    import pandas as pd

    pd.set_option("mode.string_storage", "python")
    return pd


def render(table: HCT, canonical_csv: str, fmt: str) -> str:
    """Render in one of ``FORMATS``."""
    if fmt == "html":
        return to_html(table)
    if fmt == "csv":
        return to_plain_csv(table)
    if fmt == "markdown":
        return to_markdown(table)
    if fmt == "json":
        return to_json_records(table)
    if fmt == "pandas":
        return to_pandas_text(canonical_csv)
    raise ValueError(f"Unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
