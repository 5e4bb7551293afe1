"""Every ``<table>`` of a saved web page, as a grid of merged cells.

The page is parsed by lxml's HTML parser (libxml2) with the network off; nothing in it is
run or fetched: scripts, styles and templates are dropped before the text is read. Limits
keep a hostile page small: the caller bounds the bytes, and here the number of tables, the
spans (as browsers clamp them) and the cells of one table are bounded.

Cells are laid out as browsers do: each cell takes the first free position of its row, and
its ``rowspan``/``colspan`` reserve the positions below and to its right. A table nested in
a cell is a table of its own; its text is not part of the outer cell.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from lxml import etree
from lxml import html as lxml_html

from hctqa.core.extraction.grid import Grid, GridCell, clean_text

MAX_TABLES = 500
MAX_COLSPAN = 1000  # the HTML standard's own limits
MAX_ROWSPAN = 65534
MAX_GRID_POSITIONS = 200_000  # rows × columns of one table

_BLOCKS = frozenset(
    {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "pre"}
)
_DROPPED = ("script", "style", "template", "noscript", "head", "title", "iframe", "object")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


class HtmlTableError(ValueError):
    """A web page that gives no table."""


@dataclass(frozen=True)
class HtmlTable:
    index: int  # 1-based, in document order
    grid: Grid
    skipped_reason: str = ""  # set when the table is too large to lay out


def _encoding(data: bytes) -> str:
    """The page's encoding: a byte-order mark, else UTF-8 if it decodes, else the
    ``<meta charset>`` it declares, else Windows-1252 (what browsers assume)."""
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return name
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    match = _META_CHARSET.search(data[:4096])
    if match:
        name = match.group(1).decode("ascii")
        try:
            return codecs.lookup(name).name
        except LookupError:
            pass
    return "cp1252"


# libxml2 stops reading a page whose elements nest deeper than this (without huge_tree).
MAX_DEPTH = 256


def _parse(data: bytes) -> tuple[etree._Element, bool]:
    """The page's tree, and whether libxml2 stopped reading it at its depth limit."""
    parser = lxml_html.HTMLParser(
        encoding=_encoding(data),
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        huge_tree=False,
        recover=True,
    )
    root = lxml_html.document_fromstring(data, parser=parser)
    etree.strip_elements(root, *_DROPPED, with_tail=False)
    too_deep = any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log)
    return root, too_deep


def _own(element: etree._Element, table: etree._Element) -> bool:
    """True when ``element``'s nearest enclosing table is ``table``."""
    parent = element.getparent()
    while parent is not None and parent.tag != "table":
        parent = parent.getparent()
    return parent is table


def _cell_text(cell: etree._Element) -> str:
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.tag == "table":  # a nested table is a candidate of its own
            return
        if node.tag == "br" or node.tag in _BLOCKS:
            parts.append("\n")
        if node.text and isinstance(node.tag, str):
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                walk(child)
            if child.tail:
                parts.append(child.tail)
        if node.tag in _BLOCKS:
            parts.append("\n")

    walk(cell)
    return clean_text("".join(parts))


def _span(value: str | None, limit: int, default: int = 1) -> int:
    try:
        number = int((value or "").strip())
    except ValueError:
        return default
    return max(0, min(limit, number))


def _rows(table: etree._Element) -> list[etree._Element]:
    """The table's own rows, footers last (where a browser draws them)."""
    rows = [tr for tr in table.iter("tr") if _own(tr, table)]
    body = [tr for tr in rows if tr.getparent().tag != "tfoot"]
    return body + [tr for tr in rows if tr.getparent().tag == "tfoot"]


def _grid(table: etree._Element) -> Grid:
    rows = _rows(table)
    placed: dict[tuple[int, int], int] = {}
    cells: list[tuple[int, int, int, int, str]] = []
    n_rows = len(rows)
    n_cols = 0
    for r, tr in enumerate(rows):
        c = 0
        for cell in tr:
            if cell.tag not in ("td", "th"):
                continue
            while (r, c) in placed:
                c += 1
            colspan = max(1, _span(cell.get("colspan"), MAX_COLSPAN))
            rowspan = _span(cell.get("rowspan"), MAX_ROWSPAN)
            # rowspan="0" reaches the last row; no span reaches past it.
            rowspan = n_rows - r if rowspan == 0 else min(rowspan, n_rows - r)
            if (r + rowspan) * (c + colspan) > MAX_GRID_POSITIONS:
                raise HtmlTableError(
                    f"has more than {MAX_GRID_POSITIONS:,} cells, too many to lay out"
                )
            for dr in range(rowspan):
                for dc in range(colspan):
                    placed[(r + dr, c + dc)] = len(cells)
            cells.append((r, c, rowspan, colspan, _cell_text(cell)))
            c += colspan
            n_cols = max(n_cols, c)
        if n_rows * n_cols > MAX_GRID_POSITIONS:
            raise HtmlTableError(f"has more than {MAX_GRID_POSITIONS:,} cells, too many to lay out")
    # Rows with no cell of their own (all covered from above, or empty) still count.
    return Grid.build(n_rows, n_cols, (GridCell(*cell) for cell in cells))


def html_tables(data: bytes) -> list[HtmlTable]:
    """Every ``<table>`` of the page that has at least one cell with text.

    Raises ``HtmlTableError`` when the page has no ``<table>`` at all, or none with text, or
    none before its elements nest too deeply to be read.
    """
    root, too_deep = _parse(data)
    tables = list(root.iter("table"))
    if not tables and too_deep:
        raise HtmlTableError(
            f"This web page's elements are nested more than {MAX_DEPTH} levels deep, too "
            "deeply to be read, and no <table> comes before that depth. Save the page that "
            "shows the table as HTML only (File › Save page as…), or copy the table into a "
            "simpler page, and upload that file."
        )
    if not tables:
        raise HtmlTableError(
            "This web page has no <table> element, so there is no table to extract. "
            "Save the page that shows the table (File › Save page as… › HTML only) and "
            "upload that file."
        )
    found: list[HtmlTable] = []
    for index, table in enumerate(tables[:MAX_TABLES], start=1):
        try:
            grid = _grid(table)
        except HtmlTableError as exc:
            found.append(HtmlTable(index, Grid(0, 0, ()), f"Table {index} {exc}"))
            continue
        if grid.n_rows and grid.n_cols and any(c.text for c in grid.cells):
            found.append(HtmlTable(index, grid))
    if not found:
        raise HtmlTableError(
            "The <table> elements of this web page hold no text (layout or empty tables)."
        )
    return found
