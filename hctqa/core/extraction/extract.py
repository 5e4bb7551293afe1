"""The two ways a table is read from a page, used by the command line, the ingest worker and
the review page's "extract this box again" alike:

- ``extract_box(layout, box)``: exactly one table from a region someone drew;
- ``extract_page(layout)``: every table on a page, found automatically.

Both read a ``PageLayout`` (``layout``): words, characters when the page has a text layer,
and ruling segments, whether they came from a PDF or from OCR. Both give ``Table`` values
(``table``). ``read_tables`` is the one path from a pdfplumber page to them.

Strategies for a box: ``auto`` (``DEFAULT_STRATEGY``, the app's own choice: rules that draw
every cell give the grid, otherwise text alignment with the rules where they are), ``lines``
(columns and rows from the rules alone), ``text`` (the rules ignored) and ``manual`` (an
empty grid to type into).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hctqa.core.extraction.columns import merge_horizontal, merge_vertical
from hctqa.core.extraction.detect import find_regions
from hctqa.core.extraction.layout import Box, PageLayout, layout_from_pdfplumber
from hctqa.core.extraction.ocr import review_marks
from hctqa.core.extraction.structure import read_structure
from hctqa.core.extraction.table import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    STRATEGY_AUTO,
    STRATEGY_LINES,
    STRATEGY_MANUAL,
    STRATEGY_TEXT,
    PageTables,
    Table,
    empty_table,
)

# A drawn box may cut through the edge of a glyph, and a box drawn tight to the text still
# sees the table's own outer rules just outside it.
BOX_TEXT_MARGIN = 1.0
BOX_RULE_MARGIN = 16.0


def clip_box(layout: PageLayout, box: Box) -> Box:
    x0, top, x1, bottom = box
    return (
        max(0.0, min(x0, x1)),
        max(0.0, min(top, bottom)),
        min(layout.width, max(x0, x1)),
        min(layout.height, max(top, bottom)),
    )


def _frame_of(layout: PageLayout, box: Box) -> Box:
    """The box widened to the table's own rules: ``BOX_RULE_MARGIN`` around it, and as far as
    the rules that run across it reach (a wide padding before the frame)."""
    x0, top, x1, bottom = box
    m = BOX_RULE_MARGIN
    grown = [x0 - m, top - m, x1 + m, bottom + m]
    touching = [
        r
        for r in layout.rules
        if r.x1 >= grown[0] and r.x0 <= grown[2] and r.bottom >= grown[1] and r.top <= grown[3]
    ]
    for rule in merge_horizontal([r for r in touching if r.horizontal]):
        if grown[1] <= rule.top <= grown[3] and min(rule.x1, x1) - max(rule.x0, x0) >= 0.6 * (
            x1 - x0
        ):
            grown[0], grown[2] = min(grown[0], rule.x0), max(grown[2], rule.x1)
    for rule in merge_vertical([r for r in touching if not r.horizontal]):
        if grown[0] <= rule.x0 <= grown[2] and min(rule.bottom, bottom) - max(
            rule.top, top
        ) >= 0.6 * (bottom - top):
            grown[1], grown[3] = min(grown[1], rule.top), max(grown[3], rule.bottom)
    return (grown[0], grown[1], grown[2], grown[3])


def extract_box(layout: PageLayout, box: Box, strategy: str = DEFAULT_STRATEGY) -> Table:
    """The one table in ``box`` of the page. A region with nothing to read gives an empty
    2 × 2 grid to type the table into."""
    box = clip_box(layout, box)
    words = layout.words_in(box, margin=BOX_TEXT_MARGIN)
    if strategy == STRATEGY_MANUAL or not words:
        return empty_table(layout.number, box)
    rules = layout.rules_near(_frame_of(layout, box), margin=1.0)
    found = read_structure(
        words,
        rules,
        box,
        layout.number,
        text_only=strategy == STRATEGY_TEXT,
        rules_only=strategy == STRATEGY_LINES,
    )
    return review_marks(found, layout) if found is not None else empty_table(layout.number, box)


def _worth_keeping(table: Table) -> bool:
    """Two rows and two columns at least, and text in four cells."""
    return table.rows >= 2 and table.cols >= 2 and sum(1 for c in table.cells if c.text) >= 4


def extract_page(layout: PageLayout) -> list[Table]:
    """Every table found on the page, top to bottom, with its title and notes."""
    tables = []
    for region in find_regions(layout):
        words = layout.words_in(region.bbox, margin=BOX_TEXT_MARGIN)
        rules = layout.rules_near(_frame_of(layout, region.bbox), margin=1.0)
        table = read_structure(words, rules, region.bbox, layout.number, find_title=False)
        if table is not None and _worth_keeping(table):
            tables.append(
                review_marks(replace(table, title=region.title, notes=region.notes), layout)
            )
    return tables


def tables_of(
    layout: PageLayout, boxes: Sequence[Box] | None = None, strategy: str = DEFAULT_STRATEGY
) -> PageTables:
    """The tables of a page's layout: one per box when boxes are given, else every table
    found on it."""
    if boxes is not None:
        tables = [extract_box(layout, tuple(box), strategy) for box in boxes]  # type: ignore[arg-type]
    else:
        tables = extract_page(layout)
    texts: tuple[str, ...] = ()
    if layout.source == "ocr":
        from hctqa.core.extraction.ocr import ocr_text

        texts = tuple(ocr_text(layout, t.bbox) for t in tables)
    return PageTables(
        layout.number,
        layout.width,
        layout.height,
        layout.has_text,
        tuple(tables),
        layout.source,
        texts,
    )


def read_tables(
    page: Any,
    number: int,
    boxes: Sequence[Box] | None = None,
    strategy: str = DEFAULT_STRATEGY,
    ocr_language: str | None = None,
) -> PageTables:
    """The tables of a pdfplumber page: one per box when boxes are given, else every table
    found on it. The one path from a PDF page to tables (command line, worker, review). A page
    without usable text is read through OCR in ``ocr_language`` (when given)."""
    layout = layout_from_pdfplumber(page, number)
    if ocr_language:
        from hctqa.core.extraction.ocr import layout_from_scan, needs_ocr

        if needs_ocr(layout):
            layout = layout_from_scan(page, number, ocr_language)
    return tables_of(layout, boxes, strategy)


__all__ = [
    "DEFAULT_STRATEGY",
    "PageTables",
    "STRATEGIES",
    "STRATEGY_AUTO",
    "extract_box",
    "extract_page",
]
