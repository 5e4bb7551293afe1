"""Each kind of table that failed on pages nobody here had seen (issue 30), on a PDF page written
in the test (``tests/pdfpages.py``): drawn the way word processors and report generators draw
them, read by pdfplumber as any upload is, and extracted by the same functions as the command."""

from __future__ import annotations

import io

import pdfplumber

from hctqa.core.extraction.extract import extract_page
from hctqa.core.extraction.layout import PageLayout, layout_from_pdfplumber
from hctqa.core.extraction.table import Table
from tests.pdfpages import PdfPage

PROSE = "The figures below come from the national statistics offices of each country in the survey."


def layout(page: PdfPage) -> PageLayout:
    with pdfplumber.open(io.BytesIO(page.pdf())) as document:
        return layout_from_pdfplumber(document.pages[0], 1)


def rows(table: Table) -> list[list[str]]:
    """The table as a list of rows, a merged cell's text in its first position."""
    out = [[""] * table.cols for _ in range(table.rows)]
    for cell in table.cells:
        out[cell.row][cell.col] = cell.text
    return out


def paragraph(page: PdfPage, top: float, lines: int = 3) -> None:
    for k in range(lines):
        page.text(60, top + 13 * k, PROSE)


def grid_text(page: PdfPage, xs: list[float], ys: list[float], cells: list[list[str]]) -> None:
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            if text:
                page.text(xs[c] + 4, ys[r] + 4, text)


# --- Rules drawn as rectangles and paths --------------------------------------------------------


def test_a_frame_drawn_as_one_closed_path_closes_the_grid() -> None:
    # The outer frame is one closed path (pdfplumber reports a curve); the inner rules are lines.
    page = PdfPage()
    paragraph(page, 60)
    xs, ys = [60.0, 200.0, 300.0, 400.0], [120.0 + 18 * k for k in range(5)]
    cells = [["Country", "2019", "2020"], ["Spain", "1.5", "2.5"]]
    cells += [["Italy", "3.5", "4.5"], ["France", "5.5", "6.5"]]
    grid_text(page, xs, ys, cells)
    # Started halfway along the top edge: pdfminer keeps such a path a curve.
    middle = (xs[0] + xs[-1]) / 2
    corners = [(middle, ys[0]), (xs[-1], ys[0]), (xs[-1], ys[-1]), (xs[0], ys[-1]), (xs[0], ys[0])]
    page.path(corners, close=True)
    for y in ys[1:-1]:
        page.line(xs[0], y, xs[-1], y)
    for x in xs[1:-1]:
        page.line(x, ys[0], x, ys[-1])
    paragraph(page, 230)
    (table,) = extract_page(layout(page))
    assert (table.strategy, rows(table)) == ("lines", cells)
