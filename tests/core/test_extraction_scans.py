"""Scanned tables (issue 30): pages written in the test (``tests/pdfpages.py``), rendered at
200 dpi as a scanner gives them, and read through OCR (Debian's Tesseract) and the picture's
ruling lines, as ``ocr.read_picture`` reads every scan."""

from __future__ import annotations

import numpy as np

from hctqa.core.extraction import ocr
from hctqa.core.extraction.extract import extract_box, extract_page
from hctqa.core.extraction.layout import PageLayout
from hctqa.core.extraction.rules_image import find_rules, reverse_bands
from hctqa.core.extraction.table import Table
from tests.pdfpages import PdfPage

DPI = 200
PROSE = "The figures below come from the national statistics offices of each country in the survey."
CELLS = [
    ["Country", "2019", "2020"],
    ["Spain", "1.5", "2.5"],
    ["Italy", "3.5", "4.5"],
    ["France", "5.5", "6.5"],
    ["Greece", "7.5", "8.5"],
]
XS = [60.0, 200.0, 300.0, 400.0]
YS = [120.0 + 20 * k for k in range(6)]


def scan(page: PdfPage) -> PageLayout:
    return ocr.read_picture(page.picture(DPI), number=1, dpi=DPI, scale=72 / DPI)


def rows(table: Table) -> list[list[str]]:
    return table.grid.to_rows()


def ruled_table(**line: object) -> PdfPage:
    """The table of ``CELLS`` between two paragraphs, every cell ruled with ``line``'s
    options (grey, dash)."""
    page = PdfPage()
    for k in range(3):
        page.text(60, 60 + 13 * k, PROSE)
    for r, row in enumerate(CELLS):
        for c, text in enumerate(row):
            page.text(XS[c] + 5, YS[r] + 5, text)
    for y in YS:
        page.line(XS[0], y, XS[-1], y, **line)  # type: ignore[arg-type]
    for x in XS:
        page.line(x, YS[0], x, YS[-1], **line)  # type: ignore[arg-type]
    for k in range(3):
        page.text(60, 260 + 13 * k, PROSE)
    return page


def test_faint_rules_of_a_scan_still_draw_the_grid() -> None:
    layout = scan(ruled_table(grey=0.75))
    assert len(layout.rules) == len(XS) + len(YS)
    (table,) = extract_page(layout)
    assert (table.strategy, rows(table)) == ("lines", CELLS)


def test_broken_rules_of_a_scan_still_draw_the_grid() -> None:
    layout = scan(ruled_table(dash=(4, 3)))
    assert len(layout.rules) == len(XS) + len(YS)
    (table,) = extract_page(layout)
    assert (table.strategy, rows(table)) == ("lines", CELLS)


def test_a_line_of_text_is_no_faint_or_broken_rule() -> None:
    page = PdfPage()
    for k in range(4):
        page.text(60, 60 + 13 * k, PROSE)
    picture = np.asarray(page.picture(DPI))
    assert find_rules(picture, DPI).rules == ()


def test_white_text_on_a_dark_header_band_is_read() -> None:
    page = PdfPage()
    page.rect(XS[0], YS[0], XS[-1], YS[1], grey=0.55)
    for r, row in enumerate(CELLS):
        for c, text in enumerate(row):
            page.text(XS[c] + 5, YS[r] + 5, text, bold=r == 0, grey=1.0 if r == 0 else 0.0)
    for y in YS:
        page.line(XS[0], y, XS[-1], y)
    for x in XS:
        page.line(x, YS[0], x, YS[-1])
    picture = np.asarray(page.picture(DPI))
    band = reverse_bands(picture, DPI)[round(YS[0] * DPI / 72) + 8 : round(YS[1] * DPI / 72) - 8]
    assert band.min() == 0 and np.median(band) == 255  # dark letters on paper now
    table = extract_box(scan(page), (XS[0], YS[0], XS[-1], YS[-1]))
    assert rows(table) == CELLS
