"""Table candidates on one PDF page, with pdfplumber.

- **Ruled tables first.** pdfplumber's line strategy finds the cells that the page's ruling
  lines enclose. A merged cell is one such box that covers several grid rows or columns
  (``grid.layout_from_boxes``).
- **Text alignment otherwise.** A page with no ruled table is read from the alignment of
  its words (``aligned``), merged cells included.
- **Cell text** is made of the characters whose centre lies in the cell, read in lines and
  joined with spaces.
- **Images**: the page rendered at ``CROP_DPI`` (pypdfium2 through pdfplumber), each
  candidate cropped from it.

A page with no characters has no text layer (a scanned image): it yields no candidate, and
says so (``PageExtraction.has_text``); one without usable text says it needs OCR
(``needs_ocr``), which ``scanned.scanned_page`` does.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hctqa.core.extraction.aligned import aligned_tables
from hctqa.core.extraction.grid import (
    Box,
    Grid,
    GridCell,
    Layout,
    clean_text,
    grid_from_layout,
    layout_from_boxes,
)

CROP_DPI = 200
PAGE_IMAGE_DPI = 100
CROP_MARGIN = 4.0  # points around a candidate's box in its image
# A page rendered bigger than this (a poster-sized page) is rendered at a lower resolution.
MAX_RENDER_PIXELS = 40_000_000

STRATEGY_LINES = "lines"
STRATEGY_TEXT = "text"
STRATEGY_MANUAL = "manual"

LINE_SETTINGS: dict[str, Any] = {
    "vertical_strategy": "lines",
    "horizontal_strategy": "lines",
    "snap_tolerance": 3,
    "join_tolerance": 3,
    "intersection_tolerance": 3,
}
_TEXT_X_TOLERANCE = 1.5
_TEXT_Y_TOLERANCE = 3


@dataclass(frozen=True)
class Candidate:
    """A table found on a page: where, how, and its cells."""

    page: int  # 1-based
    strategy: str
    bbox: Box
    cell_boxes: tuple[Box, ...]
    grid: Grid

    @property
    def canonical_csv(self) -> str:
        return self.grid.to_canonical()


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
    ocr_language: str = ""  # read through OCR in this language
    ocr_texts: tuple[str, ...] = ()  # from OCR: the words read in each candidate's box


def _chars(page: Any) -> list[dict[str, Any]]:
    return [c for c in page.chars if c.get("text", "").strip()]


def _cell_texts(chars: Sequence[dict[str, Any]], layout: Layout) -> list[str]:
    """The text of each box of the layout: its characters (by their centre), in lines."""
    from pdfplumber.utils import extract_text

    owner: dict[tuple[int, int], int] = {}
    for index, span in enumerate(layout.spans):
        if span is None:
            continue
        r0, c0, rs, cs = span
        for r in range(r0, r0 + rs):
            for c in range(c0, c0 + cs):
                owner.setdefault((r, c), index)
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for char in chars:
        spot = layout.locate((char["x0"] + char["x1"]) / 2, (char["top"] + char["bottom"]) / 2)
        if spot is not None and spot in owner:
            groups[owner[spot]].append(char)
    texts = []
    for index in range(len(layout.spans)):
        chars_in = groups.get(index)
        if not chars_in:
            texts.append("")
            continue
        text = extract_text(chars_in, x_tolerance=_TEXT_X_TOLERANCE, y_tolerance=_TEXT_Y_TOLERANCE)
        texts.append(clean_text(text))
    return texts


def _grid_of(boxes: Sequence[Box], chars: Sequence[dict[str, Any]]) -> tuple[Layout, Grid]:
    layout = layout_from_boxes(boxes)
    return layout, grid_from_layout(layout, _cell_texts(chars, layout))


def _bbox_of(boxes: Sequence[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _inside(char: dict[str, Any], bbox: Box) -> bool:
    x = (char["x0"] + char["x1"]) / 2
    y = (char["top"] + char["bottom"]) / 2
    return bbox[0] <= x <= bbox[2] and bbox[1] <= y <= bbox[3]


def _worth_keeping(grid: Grid) -> bool:
    """At least two rows and two columns, and text in at least two cells."""
    return grid.n_rows >= 2 and grid.n_cols >= 2 and sum(1 for c in grid.cells if c.text) >= 2


def _ruled(page: Any, page_number: int, chars: list[dict[str, Any]]) -> list[Candidate]:
    found = []
    for table in page.find_tables(LINE_SETTINGS):
        boxes = [tuple(float(v) for v in cell) for cell in table.cells]
        if len(boxes) < 2:
            continue
        bbox = _bbox_of(boxes)  # type: ignore[arg-type]
        _layout, grid = _grid_of(boxes, [c for c in chars if _inside(c, bbox)])  # type: ignore[arg-type]
        if _worth_keeping(grid):
            found.append(Candidate(page_number, STRATEGY_LINES, bbox, tuple(boxes), grid))  # type: ignore[arg-type]
    return found


def _aligned(page: Any, page_number: int, chars: list[dict[str, Any]]) -> list[Candidate]:
    from pdfplumber.utils import extract_words

    words = extract_words(chars, x_tolerance=_TEXT_X_TOLERANCE, y_tolerance=_TEXT_Y_TOLERANCE)
    return [
        Candidate(page_number, STRATEGY_TEXT, t.bbox, t.cell_boxes, t.grid)
        for t in aligned_tables(words)
        if _worth_keeping(t.grid)
    ]


def find_candidates(page: Any, page_number: int) -> tuple[bool, list[Candidate]]:
    """``(has_text, candidates)`` of a pdfplumber page: ruled tables, else aligned text."""
    chars = _chars(page)
    if not chars:
        return False, []
    candidates = _ruled(page, page_number, chars)
    if not candidates:
        candidates = _aligned(page, page_number, chars)
    return True, candidates


def region_candidate(page: Any, page_number: int, bbox: Box, strategy: str) -> Candidate:
    """Extract the table inside ``bbox`` (``page.crop``) with the given strategy, or the best
    one can (``"auto"``: ruled first). A region with no table gives an empty 2 × 2 grid to
    type the table into."""
    x0, top, x1, bottom = bbox
    bbox = (
        max(0.0, min(x0, x1)),
        max(0.0, min(top, bottom)),
        min(float(page.width), max(x0, x1)),
        min(float(page.height), max(top, bottom)),
    )
    region = page.crop(bbox, strict=False)
    chars = _chars(region)
    if strategy in ("auto", STRATEGY_LINES):
        ruled = _ruled(region, page_number, chars)
        if ruled:
            best = max(ruled, key=lambda c: len(c.grid.cells))
            return Candidate(page_number, STRATEGY_LINES, bbox, best.cell_boxes, best.grid)
    if strategy in ("auto", STRATEGY_TEXT):
        aligned = _aligned(region, page_number, chars)
        if aligned:
            best = max(aligned, key=lambda c: len(c.grid.cells))
            return Candidate(page_number, STRATEGY_TEXT, bbox, best.cell_boxes, best.grid)
    empty = Grid.build(2, 2, (GridCell(r, c, 1, 1, "") for r in range(2) for c in range(2)))
    return Candidate(page_number, STRATEGY_MANUAL, bbox, (), empty)


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
    has_text, candidates = find_candidates(page, page_number)
    crops: list[bytes] = []
    page_image = b""
    if with_images:
        image, dpi = render_page(page)
        crops = [crop_png(image, dpi, c.bbox) for c in candidates]
        page_image = page_jpeg(image, dpi)
    from hctqa.core.extraction.ocr import MIN_TEXT_CHARS, readable_chars

    return PageExtraction(
        page=page_number,
        width=float(page.width),
        height=float(page.height),
        has_text=has_text,
        candidates=tuple(candidates),
        crops=tuple(crops),
        page_image=page_image,
        needs_ocr=readable_chars(page.chars) < MIN_TEXT_CHARS,
    )
