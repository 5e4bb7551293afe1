"""A table drawn to a PDF page and a PNG image, with the table's box known exactly: the
extraction track's synthetic items.

The page is written by reportlab (a PDF writer in Python, so a worker needs no browser) and
rasterised by PDFium (``pypdfium2``, which pdfplumber already brings). Every position is
computed here, not measured afterwards: the table's box is exact in PDF points with the
origin at the top left (the extraction command's ``--box`` convention, ``EXTRACTION.md``),
and in pixels of the PNG (points × dpi / 72).

The look follows the generator's own ``HCT.html``: the title above the table; with borders
(``border: 1px``) a rule around every cell and text centred; without, no rule at all and
text at the top left of its cell. Columns are as wide as their widest text; a merged cell
wider than its columns widens them evenly. The page is A4, turned when the table is wider
than tall, and larger when the table needs it.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hctqa.core.extraction.grid import Box, Grid
from hctqa.core.tracks.shared import TrackError

FONT = "Helvetica"
FONT_SIZE = 9.0
TITLE_SIZE = 13.0
PAD_X = 5.0
PAD_Y = 4.0
RULE_WIDTH = 0.75
MARGIN = 48.0
A4 = (595.28, 841.89)
DEFAULT_DPI = 150
_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
_BORDER = re.compile(r"th,\s*td\s*\{[^}]*?border:\s*(\d+)px", re.S)


@dataclass(frozen=True)
class Rendering:
    """One table on one page: the PDF, the PNG, and the table's box in each."""

    pdf: bytes
    png: bytes
    page_size: tuple[float, float]  # points
    bbox: Box  # points: x0, top, x1, bottom, origin top left
    dpi: int
    png_size: tuple[int, int]  # pixels
    png_bbox: Box  # pixels


def ruled_in_html(hct_html: str) -> bool:
    """Whether the generator drew the table with borders (its ``th, td`` style)."""
    match = _BORDER.search(hct_html)
    return bool(match and int(match.group(1)) > 0)


@lru_cache(maxsize=1)
def _unicode_font() -> str:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if not _DEJAVU.is_file():
        raise TrackError(
            "The table has characters outside Latin-1 and the DejaVu font is not installed "
            "(Debian's fonts-dejavu-core)"
        )
    pdfmetrics.registerFont(TTFont("DejaVuSans", str(_DEJAVU)))
    return "DejaVuSans"


def _font_for(texts: list[str]) -> str:
    try:
        "".join(texts).encode("cp1252")
    except UnicodeEncodeError:
        return _unicode_font()
    return FONT


def _column_widths(grid: Grid, width_of) -> list[float]:  # type: ignore[no-untyped-def]
    widths = [2 * PAD_X + 8.0] * grid.n_cols
    for cell in grid.cells:
        if cell.colspan == 1:
            widths[cell.col] = max(widths[cell.col], width_of(cell.text) + 2 * PAD_X)
    for cell in sorted(grid.cells, key=lambda c: c.colspan):
        if cell.colspan == 1:
            continue
        span = range(cell.col, cell.col + cell.colspan)
        missing = width_of(cell.text) + 2 * PAD_X - sum(widths[c] for c in span)
        if missing > 0:
            for c in span:
                widths[c] += missing / cell.colspan
    return widths


def render_table(
    grid: Grid, *, title: str = "", ruled: bool = True, dpi: int = DEFAULT_DPI
) -> Rendering:
    """Draw ``grid`` (cells with spans; each cell's text on one line) on a page."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfgen import canvas

    if grid.n_rows == 0 or grid.n_cols == 0:
        raise TrackError("A table to draw needs at least one row and one column")
    texts = [" ".join(c.text.split()) for c in grid.cells]
    font = _font_for([*texts, title])

    def width_of(text: str, size: float = FONT_SIZE) -> float:
        return float(pdfmetrics.stringWidth(" ".join(text.split()), font, size))

    widths = _column_widths(grid, width_of)
    row_height = FONT_SIZE * 1.2 + 2 * PAD_Y
    table_width, table_height = sum(widths), row_height * grid.n_rows
    title_height = TITLE_SIZE * 2.2 if title else 0.0
    need_w = table_width + 2 * MARGIN
    need_h = table_height + title_height + 2 * MARGIN
    page_w, page_h = A4 if need_w <= need_h else (A4[1], A4[0])
    page_w, page_h = max(page_w, need_w), max(page_h, need_h)
    x0, top = MARGIN, MARGIN + title_height
    xs = [x0]
    for w in widths:
        xs.append(xs[-1] + w)
    ys = [top + row_height * r for r in range(grid.n_rows + 1)]

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=(page_w, page_h), pageCompression=1, invariant=1)
    pdf.setTitle(title or "Table")
    if title:
        pdf.setFont(font, TITLE_SIZE)
        pdf.drawString(MARGIN, page_h - (MARGIN + TITLE_SIZE), " ".join(title.split()))
    pdf.setFont(font, FONT_SIZE)
    pdf.setLineWidth(RULE_WIDTH)
    ascent = pdfmetrics.getAscent(font, FONT_SIZE)
    descent = pdfmetrics.getDescent(font, FONT_SIZE)
    covered = set()
    for cell, text in zip(grid.cells, texts, strict=True):
        covered.update(cell.positions())
        left, right = xs[cell.col], xs[cell.col + cell.colspan]
        upper, lower = ys[cell.row], ys[cell.row + cell.rowspan]
        if ruled:
            pdf.rect(left, page_h - lower, right - left, lower - upper, stroke=1, fill=0)
        if not text:
            continue
        if ruled:  # centred, as the generator's bordered tables
            baseline = (upper + lower) / 2 + (ascent + descent) / 2
            pdf.drawCentredString((left + right) / 2, page_h - baseline, text)
        else:  # top left, as its borderless ones
            pdf.drawString(left + PAD_X, page_h - (upper + PAD_Y + ascent), text)
    if ruled:
        for r in range(grid.n_rows):
            for c in range(grid.n_cols):
                if (r, c) not in covered:
                    pdf.rect(xs[c], page_h - ys[r + 1], widths[c], row_height, stroke=1, fill=0)
    pdf.showPage()
    pdf.save()
    data = out.getvalue()
    bbox = (x0, top, x0 + table_width, top + table_height)
    png, png_size = _png(data, dpi)
    scale = dpi / 72
    return Rendering(
        pdf=data,
        png=png,
        page_size=(page_w, page_h),
        bbox=bbox,
        dpi=dpi,
        png_size=png_size,
        png_bbox=(bbox[0] * scale, bbox[1] * scale, bbox[2] * scale, bbox[3] * scale),
    )


def _png(pdf: bytes, dpi: int) -> tuple[bytes, tuple[int, int]]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        image = document[0].render(scale=dpi / 72).to_pil().convert("L")
    finally:
        document.close()
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue(), image.size


# The most pixels a page is drawn with for a vision prompt (an A4 page at 150 dpi has 2.2 M).
MAX_PAGE_PIXELS = 25_000_000


def region_png(
    data: bytes, *, kind: str, page: int, bbox: Box, dpi: int = DEFAULT_DPI, margin: int = 8
) -> bytes:
    """The part of an item's page inside ``bbox`` as a PNG, for a vision prompt: cropped
    from a PNG item (``bbox`` in pixels), or from a PDF item's page drawn at ``dpi`` by
    PDFium (``bbox`` in points; the platform's own PDFs: drawn tables, accepted documents
    and imported sets, all opened before). A page larger than ``MAX_PAGE_PIXELS`` is drawn
    at a lower resolution."""
    from PIL import Image

    if kind == "pdf":
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(data)
        try:
            if not 1 <= page <= len(document):
                raise TrackError(f"The document has no page {page}")
            pdf_page = document[page - 1]
            width, height = pdf_page.get_size()
            scale = dpi / 72
            if width * height * scale * scale > MAX_PAGE_PIXELS:
                scale = (MAX_PAGE_PIXELS / (width * height)) ** 0.5
            image = pdf_page.render(scale=scale).to_pil().convert("RGB")
        finally:
            document.close()
        box = tuple(v * scale for v in bbox)
    elif kind == "png":
        with Image.open(io.BytesIO(data)) as opened:
            image = opened.convert("RGB")
        box = tuple(bbox)
    else:
        raise TrackError(f"A document is a PDF or a PNG, not {kind!r}")
    x0, top, x1, bottom = box
    crop = image.crop(
        (
            max(0, int(x0) - margin),
            max(0, int(top) - margin),
            min(image.width, int(x1 + 0.999) + margin),
            min(image.height, int(bottom + 0.999) + margin),
        )
    )
    out = io.BytesIO()
    crop.save(out, "PNG")
    return out.getvalue()
