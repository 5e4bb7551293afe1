"""A readable PNG of a human-centric table, for vision prompts when no source image exists.

The picture is drawn from the parsed table, not from a browser, so it is the same bytes on
every run with the same font and pillow:
- a merged cell is one box, with no grid line inside it;
- header cells are bold on a shaded ground, row-group labels bold on a lighter one;
- column widths come from measuring the text, so every cell's text fits its box, and long
  text wraps onto more lines rather than widening its column without limit.

``table_layout`` returns the boxes the renderer draws, so tests can check the fit.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from hctqa.core.tables import HCT, Cell, parse_table

# Wide enough for most tables at the first font size, and within what vision models take in
# before they downscale hard.
DEFAULT_MAX_WIDTH = 2000

_FONT_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
)
_REGULAR, _BOLD = "DejaVuSans.ttf", "DejaVuSans-Bold.ttf"

# Tried in order until the table fits max_width: (font size in px, widest a column may grow
# before its text wraps). The last is used even when the table is still wider.
_ATTEMPTS = (
    (15, 260),
    (15, 200),
    (14, 160),
    (13, 120),
    (12, 100),
    (11, 80),
)
_PAD_X, _PAD_Y = 8, 6
_MARGIN = 10
_MIN_TEXT_WIDTH = 12

BACKGROUND = (255, 255, 255)
GRID_COLOR = (70, 70, 70)
TEXT_COLOR = (0, 0, 0)
FILLS = {
    "column_header": (221, 228, 238),
    "corner": (221, 228, 238),
    "row_header": (238, 241, 246),
    "row_group_label": (245, 240, 225),
    "value": (255, 255, 255),
}

Box = tuple[int, int, int, int]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@dataclass(frozen=True)
class CellBox:
    """Where one cell is drawn.

    ``box`` is the cell's outline, ``(x0, y0, x1, y1)``: its grid lines lie on those
    coordinates and its inside is strictly between them. ``text_box`` bounds the text's ink
    (``None`` for an empty cell); ``lines`` is the text as wrapped.
    """

    cell: Cell
    box: Box
    text_box: Box | None
    lines: tuple[str, ...]
    bold: bool


@dataclass(frozen=True)
class TableLayout:
    width: int
    height: int
    font_size: int
    line_height: int
    column_x: tuple[int, ...]  # n_columns + 1 grid-line positions
    row_y: tuple[int, ...]  # n_rows + 1 grid-line positions
    cells: tuple[CellBox, ...]


@lru_cache(maxsize=16)
def _font(size: int, bold: bool) -> Font:
    for folder in _FONT_DIRS:
        path = folder / (_BOLD if bold else _REGULAR)
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    # Pillow's own font scales from version 10.1; headers then differ by their shading only.
    return ImageFont.load_default(size=size)


def _numeric(text: str) -> bool:
    digits = sum(ch.isdigit() for ch in text)
    return digits > 0 and digits >= sum(ch.isalpha() for ch in text)


def _is_bold(cell: Cell) -> bool:
    return cell.role in ("column_header", "corner", "row_group_label")


# Measuring is most of the work, and wrapping and the narrower attempts measure the same
# strings again; fonts are cached too, so they are stable keys.
@lru_cache(maxsize=50_000)
def _ink(text: str, font: Font) -> Box:
    """The text's ink box when drawn at (0, 0), FreeType's own measure."""
    left, top, right, bottom = font.getbbox(text)
    return (int(left), int(top), int(right), int(bottom))


@lru_cache(maxsize=50_000)
def _width(text: str, font: Font) -> int:
    """Pixels from the drawing origin to the end of the text's ink or advance, whichever is
    further, counting any ink left of the origin."""
    if not text:
        return 0
    left, _top, right, _bottom = _ink(text, font)
    return max(int(round(font.getlength(text))), right) - min(left, 0)


def _break_word(word: str, limit: int, font: Font) -> list[str]:
    """A word wider than the column, cut into pieces that fit (at least one character each)."""
    pieces: list[str] = []
    current = ""
    for ch in word:
        if current and _width(current + ch, font) > limit:
            pieces.append(current)
            current = ch
        else:
            current += ch
    if current:
        pieces.append(current)
    return pieces


def wrap_text(text: str, limit: int, font: Font) -> list[str]:
    """Lines of at most ``limit`` pixels: at spaces when possible, inside a word when not.
    Line breaks in the cell are kept."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        words = paragraph.split()
        if not words:
            continue
        current = ""
        for word in words:
            candidate = f"{current} {word}" if current else word
            if _width(candidate, font) <= limit:
                current = candidate
                continue
            if current:
                lines.append(current)
            if _width(word, font) <= limit:
                current = word
            else:
                *full, current = _break_word(word, limit, font)
                lines.extend(full)
        if current:
            lines.append(current)
    return lines


def _natural_width(cell: Cell, size: int) -> int:
    font = _font(size, _is_bold(cell))
    return max((_width(" ".join(p.split()), font) for p in cell.text.splitlines()), default=0)


def _grow(sizes: list[int], start: int, count: int, need: int) -> None:
    """Widen (or heighten) ``count`` tracks from ``start`` so that together, with the grid
    lines between them, they reach ``need``; the extra is shared out evenly."""
    have = sum(sizes[start : start + count]) + (count - 1)
    extra = need - have
    if extra <= 0:
        return
    share, rest = divmod(extra, count)
    for i in range(count):
        sizes[start + i] += share + (1 if i < rest else 0)


def _layout(table: HCT, size: int, cap: int) -> TableLayout:
    n_rows, n_cols = table.n_rows, table.n_columns
    line_height = sum(_font(size, True).getmetrics()) + 2
    widths = [_MIN_TEXT_WIDTH + 2 * _PAD_X] * n_cols
    # Single columns first, then spans from narrow to wide, so a span only widens the
    # columns under it when their own text has not already made room. A span is held to the
    # same cap as one column: a long title or footnote wraps over the columns it spans
    # rather than stretching them all.
    for cell in sorted(table.cells, key=lambda c: (c.colspan, c.row, c.col)):
        text_width = min(_natural_width(cell, size), cap)
        _grow(widths, cell.col, cell.colspan, text_width + 2 * _PAD_X)

    wrapped: dict[Cell, list[str]] = {}
    for cell in table.cells:
        inner = sum(widths[cell.col : cell.col + cell.colspan]) + cell.colspan - 1
        wrapped[cell] = wrap_text(cell.text, inner - 2 * _PAD_X, _font(size, _is_bold(cell)))

    heights = [line_height + 2 * _PAD_Y] * n_rows
    for cell in sorted(table.cells, key=lambda c: (c.rowspan, c.row, c.col)):
        need = max(1, len(wrapped[cell])) * line_height + 2 * _PAD_Y
        _grow(heights, cell.row, cell.rowspan, need)

    # Grid lines are one pixel wide and sit between the tracks.
    column_x = [_MARGIN]
    for w in widths:
        column_x.append(column_x[-1] + w + 1)
    row_y = [_MARGIN]
    for h in heights:
        row_y.append(row_y[-1] + h + 1)

    boxes: list[CellBox] = []
    for cell in table.cells:
        box = (
            column_x[cell.col],
            row_y[cell.row],
            column_x[cell.col + cell.colspan],
            row_y[cell.row + cell.rowspan],
        )
        lines = tuple(wrapped[cell])
        font = _font(size, _is_bold(cell))
        boxes.append(
            CellBox(
                cell, box, _text_box(cell, box, lines, font, line_height), lines, _is_bold(cell)
            )
        )
    return TableLayout(
        width=column_x[-1] + _MARGIN,
        height=row_y[-1] + _MARGIN,
        font_size=size,
        line_height=line_height,
        column_x=tuple(column_x),
        row_y=tuple(row_y),
        cells=tuple(boxes),
    )


def _line_origins(
    cell: Cell, box: Box, lines: tuple[str, ...], font: Font, line_height: int
) -> list[tuple[int, int]]:
    """Top-left drawing origin of each line: column headers centred, labels and words
    left-aligned, numbers right-aligned as they are read; every block centred vertically."""
    x0, y0, x1, y1 = box
    top = y0 + 1 + (y1 - y0 - 1 - len(lines) * line_height) // 2
    origins = []
    for i, line in enumerate(lines):
        w = _width(line, font)
        if cell.role in ("column_header", "corner"):
            x = x0 + 1 + (x1 - x0 - 1 - w) // 2
        elif cell.role == "value" and _numeric(cell.text):
            x = x1 - _PAD_X - w
        else:
            x = x0 + 1 + _PAD_X
        origins.append((x, top + i * line_height))
    return origins


def _text_box(
    cell: Cell, box: Box, lines: tuple[str, ...], font: Font, line_height: int
) -> Box | None:
    if not lines:
        return None
    found: list[Box] = []
    for (x, y), line in zip(_line_origins(cell, box, lines, font, line_height), lines, strict=True):
        left, top, right, bottom = _ink(line, font)
        found.append((x + left, y + top, x + right, y + bottom))
    return (
        min(b[0] for b in found),
        min(b[1] for b in found),
        max(b[2] for b in found),
        max(b[3] for b in found),
    )


def table_layout(table: HCT, *, max_width: int = DEFAULT_MAX_WIDTH) -> TableLayout:
    """The boxes of every cell, at the largest font and widest columns that fit
    ``max_width``; a table too wide even at the smallest is laid out at the smallest."""
    layout = None
    for size, cap in _ATTEMPTS:
        layout = _layout(table, size, cap)
        if layout.width <= max_width:
            return layout
    assert layout is not None
    return layout


def draw_layout(layout: TableLayout) -> Image.Image:
    image = Image.new("RGB", (layout.width, layout.height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for placed in layout.cells:
        draw.rectangle(placed.box, fill=FILLS[placed.cell.role], outline=GRID_COLOR, width=1)
    for placed in layout.cells:
        font = _font(layout.font_size, placed.bold)
        origins = _line_origins(placed.cell, placed.box, placed.lines, font, layout.line_height)
        for (x, y), line in zip(origins, placed.lines, strict=True):
            draw.text((x, y), line, font=font, fill=TEXT_COLOR)
    return image


def render_table_png(canonical_csv: str, *, max_width: int = DEFAULT_MAX_WIDTH) -> bytes:
    """The table as PNG bytes; the same CSV gives the same bytes."""
    image = draw_layout(table_layout(parse_table(canonical_csv), max_width=max_width))
    out = io.BytesIO()
    # No metadata chunks and a fixed compression level, so nothing varies between runs.
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()
