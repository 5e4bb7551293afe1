"""Table candidates on one PDF page, for the ingest worker.

- **Tables**: the page's layout (``layout.layout_from_pdfplumber``: words, characters and
  ruling segments) goes through the same functions as the command line: ``extract_page`` for
  the whole page, ``extract_box`` for a box drawn on the review page, with the app's default
  strategy unless the reviewer picks another.
- **Candidates** carry the ``Table`` (cells with flags, headers, title, notes) and its grid in
  the canonical form, indented rows nested (``Table.nested_grid``).
- **Images**: the page rendered at ``CROP_DPI`` (pypdfium2 through pdfplumber), each
  candidate cropped from it.

A page with no characters has no text layer (a scanned image): it yields no candidate, and
says so (``PageExtraction.has_text``); one without usable text says it needs OCR
(``needs_ocr``), which ``scanned.scanned_page`` does.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from hctqa.core.extraction import extract
from hctqa.core.extraction.grid import Box, Grid
from hctqa.core.extraction.table import (
    STRATEGY_LINES,
    STRATEGY_MANUAL,
    STRATEGY_TEXT,
    Table,
)

CROP_DPI = 200
PAGE_IMAGE_DPI = 100
CROP_MARGIN = 4.0  # points around a candidate's box in its image
# A page rendered bigger than this (a poster-sized page) is rendered at a lower resolution.
MAX_RENDER_PIXELS = 40_000_000

__all__ = ["STRATEGY_LINES", "STRATEGY_MANUAL", "STRATEGY_TEXT"]


@dataclass(frozen=True)
class Candidate:
    """A table found on a page: where, how, and its cells."""

    page: int  # 1-based
    strategy: str
    bbox: Box
    cell_boxes: tuple[Box, ...]
    grid: Grid
    table: Table | None = None  # what the extractor read: flags, headers, title, notes

    @property
    def canonical_csv(self) -> str:
        return self.grid.to_canonical()

    @property
    def title(self) -> str:
        return self.table.title if self.table else ""

    @property
    def notes(self) -> str:
        return self.table.notes if self.table else ""

    @property
    def cell_flags(self) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
        """``(row, col, flags)`` of each flagged cell, at its anchor in ``grid`` (the nested
        grid, whose row labels may have moved right: ``nest_rows``)."""
        if self.table is None:
            return ()
        extra = self.grid.n_cols - self.table.cols
        anchors = {(c.row, c.col) for c in self.grid.cells}
        # A row's label moves from column 0 to its depth; the other cells move right by
        # ``extra``; rows stay.
        labels = {c.row: c.col for c in self.grid.cells if c.col <= extra}
        out = []
        for cell in sorted(self.table.cells, key=lambda c: (c.row, c.col)):
            if not cell.flags:
                continue
            col = cell.col + extra if cell.col else labels.get(cell.row, 0)
            if (cell.row, col) in anchors:
                out.append((cell.row, col, cell.flags))
        return tuple(out)

    @classmethod
    def of(cls, table: Table) -> Candidate:
        return cls(
            table.page, table.strategy, table.bbox, table.cell_boxes, table.nested_grid(), table
        )


@dataclass(frozen=True)
class PageExtraction:
    page: int
    width: float
    height: float
    has_text: bool
    candidates: tuple[Candidate, ...]
    crops: tuple[bytes, ...] = ()  # PNG of each candidate, same order
    page_image: bytes = b""  # JPEG of the page at PAGE_IMAGE_DPI
    needs_ocr: bool = False  # no usable text: read it through OCR (``scanned``)
    blank: bool = False  # no usable text and no ink on it either: nothing for OCR to read
    ocr_language: str = ""  # read through OCR in this language
    ocr_texts: tuple[str, ...] = ()  # from OCR: the words read in each candidate's box


def find_candidates(page: Any, page_number: int) -> tuple[bool, list[Candidate]]:
    """``(has_text, candidates)`` of a pdfplumber page: every table ``extract_page`` finds."""
    found = extract.read_tables(page, page_number)
    return found.has_text, [Candidate.of(t) for t in found.tables]


def region_candidate(
    page: Any, page_number: int, bbox: Box, strategy: str = extract.DEFAULT_STRATEGY
) -> Candidate:
    """The table inside ``bbox`` (``extract_box``) with the given strategy. A region with no
    table gives an empty 2 × 2 grid to type the table into."""
    (table,) = extract.read_tables(page, page_number, [bbox], strategy).tables
    return Candidate.of(table)


# --- Images --------------------------------------------------------------------------------------


def render_page(page: Any, dpi: int = CROP_DPI) -> Any:
    """The page as a PIL image at ``dpi`` (less for a very large page)."""
    pixels = (float(page.width) * dpi / 72) * (float(page.height) * dpi / 72)
    if pixels > MAX_RENDER_PIXELS:
        dpi = int(dpi * (MAX_RENDER_PIXELS / pixels) ** 0.5)
    return page.to_image(resolution=dpi, antialias=True).original, dpi


def crop_png(image: Any, dpi: int, bbox: Box, margin: float = CROP_MARGIN) -> bytes:
    scale = dpi / 72
    x0, top, x1, bottom = bbox
    box = (
        max(0, int((x0 - margin) * scale)),
        max(0, int((top - margin) * scale)),
        min(image.width, int((x1 + margin) * scale + 0.999)),
        min(image.height, int((bottom + margin) * scale + 0.999)),
    )
    out = io.BytesIO()
    image.crop(box).save(out, format="PNG", optimize=False)
    return out.getvalue()


def page_jpeg(image: Any, dpi: int, target_dpi: int = PAGE_IMAGE_DPI) -> bytes:
    """The page image for the review page: smaller, and JPEG."""
    from PIL import Image

    if dpi > target_dpi:
        # A box filter over whole pixels first: a page is large, and this is a preview.
        factor = max(1, dpi // target_dpi)
        image = image.reduce(factor) if factor > 1 else image
        size = (
            max(1, image.width * target_dpi * factor // dpi),
            max(1, image.height * target_dpi * factor // dpi),
        )
        if size != image.size:
            image = image.resize(size, resample=Image.Resampling.BILINEAR)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=80)
    return out.getvalue()


def extract_page(page: Any, page_number: int, *, with_images: bool = True) -> PageExtraction:
    """Everything one page gives: its candidates, their crops and the page image."""
    from hctqa.core.extraction.ocr import blank_image, needs_ocr

    has_text, candidates = find_candidates(page, page_number)
    crops: list[bytes] = []
    page_image = b""
    no_text = needs_ocr(page)
    blank = False
    if with_images:
        image, dpi = render_page(page)
        crops = [crop_png(image, dpi, c.bbox) for c in candidates]
        page_image = page_jpeg(image, dpi)
        blank = no_text and blank_image(image)

    return PageExtraction(
        page=page_number,
        width=float(page.width),
        height=float(page.height),
        has_text=has_text,
        candidates=tuple(candidates),
        crops=tuple(crops),
        page_image=page_image,
        needs_ocr=no_text,
        blank=blank,
    )
