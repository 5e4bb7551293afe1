"""Pages read through OCR as the ingest worker keeps them: table candidates, their crops and
the page image, like ``pdf.extract_page`` gives for a page with a text layer.

- a PDF page without usable text (``ocr.needs_ocr``): rendered and read in the collection's
  OCR language; boxes in points;
- an image file (PNG, JPEG; one page): opened under the pixel limit (``images.open_image``)
  and read at its own pixels; boxes in pixels.

The tables come from the same code as a text page's (``extract.tables_of``); each candidate
carries the words OCR read in its box (``ocr_texts``), which the review page shows beside the
crop.
"""

from __future__ import annotations

from typing import Any

from hctqa.core.extraction import ocr, pdf
from hctqa.core.extraction.extract import PageTables, extract_box, tables_of
from hctqa.core.extraction.layout import Box, PageLayout

# The image of an image file's page on the review page: at most this wide (JPEG).
PAGE_IMAGE_WIDTH = 1600
# An image file's crops are cut at its own pixels (``pdf.crop_png`` scales by dpi / 72).
_PIXELS = 72


def _extraction(
    found: PageTables, crops: list[bytes], page_image: bytes, language: str
) -> pdf.PageExtraction:
    return pdf.PageExtraction(
        page=found.page,
        width=found.width,
        height=found.height,
        has_text=found.has_text,
        candidates=tuple(pdf.Candidate.of(t) for t in found.tables),
        crops=tuple(crops),
        page_image=page_image,
        ocr_language=language,
        ocr_texts=found.ocr_texts,
    )


def scanned_page(page: Any, number: int, language: str) -> pdf.PageExtraction:
    """A PDF page without usable text, read through OCR: every table found on it."""
    found = tables_of(ocr.layout_from_scan(page, number, language))
    image, dpi = pdf.render_page(page)
    crops = [pdf.crop_png(image, dpi, t.bbox) for t in found.tables]
    return _extraction(found, crops, pdf.page_jpeg(image, dpi), language)


def _image_layout(path: str, language: str, max_pixels: int) -> tuple[PageLayout, Any]:
    from hctqa.core.extraction.images import open_image

    picture, dpi = open_image(path, max_pixels=max_pixels)
    return ocr.layout_from_image(picture, dpi, language), picture


def _image_jpeg(picture: Any) -> bytes:
    """The image file shown on the review page: scaled to ``PAGE_IMAGE_WIDTH`` at most."""
    scale = min(1.0, PAGE_IMAGE_WIDTH / picture.width)
    return pdf.page_jpeg(picture, _PIXELS, max(1, round(_PIXELS * scale)))


def image_page(path: str, language: str, max_pixels: int) -> pdf.PageExtraction:
    """An image file (one page), read through OCR: every table found on it, in pixels."""
    layout, picture = _image_layout(path, language, max_pixels)
    found = tables_of(layout)
    crops = [pdf.crop_png(picture, _PIXELS, t.bbox) for t in found.tables]
    return _extraction(found, crops, _image_jpeg(picture), language)


def _one_box(layout: PageLayout, bbox: Box, strategy: str) -> tuple[pdf.Candidate, str]:
    table = extract_box(layout, bbox, strategy)
    return pdf.Candidate.of(table), ocr.ocr_text(layout, table.bbox)


def scanned_region(
    page: Any, number: int, bbox: Box, strategy: str, language: str
) -> tuple[pdf.Candidate, bytes, str]:
    """The table in a box drawn on a scanned page: candidate, crop and the OCR text."""
    candidate, text = _one_box(ocr.layout_from_scan(page, number, language), bbox, strategy)
    image, dpi = pdf.render_page(page)
    return candidate, pdf.crop_png(image, dpi, candidate.bbox), text


def image_region(
    path: str, bbox: Box, strategy: str, language: str, max_pixels: int
) -> tuple[pdf.Candidate, bytes, str]:
    """The table in a box drawn on an image file (pixels): candidate, crop and OCR text."""
    layout, picture = _image_layout(path, language, max_pixels)
    candidate, text = _one_box(layout, bbox, strategy)
    return candidate, pdf.crop_png(picture, _PIXELS, candidate.bbox), text
