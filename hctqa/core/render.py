"""Renderers for a parsed human-centric table.

- HTML keeps the merged cells as real ``rowspan``/``colspan`` header cells;
- plain CSV, Markdown and JSON records flatten them, since those formats cannot merge;
- pandas' text rendering is what the paper's text-modality prompts contain.
"""

from __future__ import annotations

import io
import json
from html import escape

from hctqa.core.tables import HCT, Cell, with_numbered_header, write_csv_rows

FORMATS = ("html", "csv", "markdown", "json", "pandas")


def _span_attrs(cell: Cell) -> str:
    attrs = ""
    if cell.rowspan > 1:
        attrs += f' rowspan="{cell.rowspan}"'
    if cell.colspan > 1:
        attrs += f' colspan="{cell.colspan}"'
    return attrs


def _html_cell(cell: Cell) -> str:
    text = escape(cell.text)
    pos = f' data-row="{cell.row}" data-col="{cell.col}"'
    span = _span_attrs(cell)
    if cell.role == "value":
        return f"<td{span}{pos}>{text}</td>"
    if cell.role == "row_group_label":
        return f'<th scope="rowgroup"{span}{pos} class="hct-group">{text}</th>'
    if cell.role == "row_header":
        scope = "rowgroup" if cell.rowspan > 1 else "row"
        return f'<th scope="{scope}"{span}{pos}>{text}</th>'
    scope = "colgroup" if cell.colspan > 1 else "col"
    css = ' class="hct-corner"' if cell.role == "corner" else ""
    return f'<th scope="{scope}"{span}{pos}{css}>{text}</th>'


def to_html(table: HCT, *, css_class: str = "hct", caption: str | None = None) -> str:
    """An HTML ``<table>``: column headers in ``<thead>``, merged cells as spans."""
    rows = table.rows()
    out = [f'<table class="{escape(css_class)}">']
    if caption:
        out.append(f"<caption>{escape(caption)}</caption>")
    out.append("<thead>")
    for r in range(table.n_rows):
        if r == table.header_rows:
            out.append("</thead><tbody>")
        row_class = ""
        if rows[r] and rows[r][0].role == "row_group_label":
            row_class = ' class="hct-group-row"'
        out.append(f"<tr{row_class}>" + "".join(_html_cell(c) for c in rows[r]) + "</tr>")
    if table.header_rows >= table.n_rows:
        out.append("</thead><tbody>")
    out.append("</tbody></table>")
    return "".join(out)


def to_plain_csv(table: HCT) -> str:
    """The canonical grid with the ``__`` markers blanked, as a spreadsheet shows merges."""
    return write_csv_rows([[v if v != "__" else "" for v in row] for row in table.grid])


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


def to_pandas_text(canonical_csv: str) -> str:
    """pandas' text rendering of the canonical CSV, read back with its numbered header row.

    This is the table text of the paper's zero-shot text prompts.
    """
    import pandas as pd  # Imported here: pandas costs a second to import and few callers need it.

    frame = pd.read_csv(io.StringIO(with_numbered_header(canonical_csv)))
    return frame.to_string()


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
    raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
