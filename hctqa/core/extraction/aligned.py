"""Tables without ruling lines, read from the alignment of their words.

pdfplumber's own text strategy draws a grid line at the top and bottom of every text line
and at every cluster of word edges, which splits a centred column header from its column and
turns each text line into two rows. Here the words (pdfplumber's ``extract_words``) are read
the way a person reads a borderless table:

- **Rows** are text lines; a vertical gap much larger than the line height ends a table.
- **Phrases**: words of a line closer than about half a character height are one cell's text.
- **Columns** are the gaps that no phrase of the body (rows past the headers, a label alone
  in its row aside) and of the lowest header row crosses.
- **Merged header cells**: a header phrase that covers several columns spans them; one
  centred over several empty cells of its row, with labels under them, spans those too; a
  header label with nothing above it reaches up to the first header row (headers sit at the
  bottom of their cell).
- **Row labels**: a label alone at the left of a body row is a row-group label; a label with
  blanks below it, beside nested labels, covers its child rows (labels sit at the top).

The result is a ``Grid`` in the same form as a ruled table's, and each cell's box.
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hctqa.core.extraction.grid import Box, Grid, GridCell, clean_text

X_TOLERANCE = 1.5
Y_TOLERANCE = 3.0
_DATA_VALUE = re.compile(
    r"[-+\u2212]?\(?[$€£]?\d[\d,. ]*%?\)?[*†‡]*|[-\u2013\u2014.…x]+|n/?a|\*+", re.IGNORECASE
)


@dataclass
class Phrase:
    x0: float
    x1: float
    top: float
    bottom: float
    text: str


@dataclass
class Line:
    top: float
    bottom: float
    phrases: list[Phrase] = field(default_factory=list)


@dataclass(frozen=True)
class AlignedTable:
    bbox: Box
    cell_boxes: tuple[Box, ...]
    grid: Grid


def is_data_row(texts: Sequence[str]) -> bool:
    """Mostly numbers (or dashes for none) after the first cell: a body row."""
    values = [t for t in texts[1:] if t]
    numbers = [t for t in values if _DATA_VALUE.fullmatch(t)]
    return bool(values) and len(numbers) * 2 > len(values)


def text_lines(words: Sequence[dict[str, Any]]) -> list[Line]:
    """Words grouped into lines (by vertical overlap) and phrases, top to bottom."""
    lines: list[Line] = []
    rows: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        middle = (word["top"] + word["bottom"]) / 2
        if lines and lines[-1].top - 0.5 <= middle <= lines[-1].bottom + 0.5:
            rows[-1].append(word)
            lines[-1].bottom = max(lines[-1].bottom, word["bottom"])
        else:
            lines.append(Line(word["top"], word["bottom"]))
            rows.append([word])
    for line, row in zip(lines, rows, strict=True):
        row.sort(key=lambda w: w["x0"])
        gap = 0.5 * statistics.median(w["bottom"] - w["top"] for w in row)
        current = Phrase(
            row[0]["x0"], row[0]["x1"], row[0]["top"], row[0]["bottom"], row[0]["text"]
        )
        for word in row[1:]:
            if word["x0"] - current.x1 <= gap:
                current.x1 = max(current.x1, word["x1"])
                current.bottom = max(current.bottom, word["bottom"])
                current.text += " " + word["text"]
            else:
                line.phrases.append(current)
                current = Phrase(word["x0"], word["x1"], word["top"], word["bottom"], word["text"])
        line.phrases.append(current)
    return lines


def table_blocks(lines: Sequence[Line]) -> list[list[Line]]:
    """Runs of lines close together, kept when at least two lines have two phrases or more
    (prose has one phrase per line)."""
    if not lines:
        return []
    height = statistics.median(line.bottom - line.top for line in lines)
    blocks: list[list[Line]] = [[lines[0]]]
    for line in lines[1:]:
        if line.top - blocks[-1][-1].bottom > 1.5 * height:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return [b for b in blocks if sum(1 for line in b if len(line.phrases) >= 2) >= 2]


def _segments(phrases: Sequence[Phrase]) -> list[tuple[float, float]]:
    spans = sorted((p.x0, p.x1) for p in phrases)
    merged: list[list[float]] = []
    for x0, x1 in spans:
        if merged and x0 <= merged[-1][1] + 0.5:
            merged[-1][1] = max(merged[-1][1], x1)
        else:
            merged.append([x0, x1])
    return [(a, b) for a, b in merged]


def _columns_of(
    phrase: Phrase, segments: Sequence[tuple[float, float]], edges: Sequence[float]
) -> tuple[int, int]:
    hit = [i for i, (a, b) in enumerate(segments) if min(b, phrase.x1) - max(a, phrase.x0) > 0.5]
    if hit:
        return hit[0], hit[-1]
    middle = (phrase.x0 + phrase.x1) / 2
    col = max(0, min(len(segments) - 1, bisect.bisect_right(edges, middle) - 1))
    return col, col


def read_table(lines: Sequence[Line]) -> AlignedTable | None:
    """The table these lines make, or None when they give fewer than two columns."""
    texts = [[p.text for p in line.phrases] for line in lines]
    first_data = next((i for i in range(1, len(lines)) if is_data_row(texts[i])), None)
    if first_data is None:
        first_data = next((i for i in range(1, len(lines)) if len(lines[i].phrases) >= 2), 1)
    header_rows = first_data
    body = [line for line in lines[header_rows:] if len(line.phrases) >= 2]
    leaf = lines[header_rows - 1].phrases if header_rows >= 1 else []
    segments = _segments([p for line in body for p in line.phrases] + list(leaf))
    if len(segments) < 2:
        return None
    n_rows, n_cols = len(lines), len(segments)
    # Column edges: the middle of each gap, and the outer ends of everything.
    left = min(min(p.x0 for p in line.phrases) for line in lines)
    right = max(max(p.x1 for p in line.phrases) for line in lines)
    edges = [min(left, segments[0][0])]
    edges += [(segments[i][1] + segments[i + 1][0]) / 2 for i in range(n_cols - 1)]
    edges.append(max(right, segments[-1][1]))

    text = [[""] * n_cols for _ in range(n_rows)]
    spans: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    centres: dict[tuple[int, int], float] = {}
    for r, line in enumerate(lines):
        alone = len(line.phrases) == 1
        for phrase in line.phrases:
            first, last = _columns_of(phrase, segments, edges)
            if r >= header_rows and alone and first == 0:
                first, last = 0, n_cols - 1  # a row-group label
            if any(text[r][c] or (r, c) in covered for c in range(first + 1, last + 1)):
                first = last = _columns_of(
                    Phrase(phrase.x0, phrase.x0 + 0.1, 0, 0, ""), segments, edges
                )[0]
            text[r][first] = clean_text(f"{text[r][first]} {phrase.text}")
            centres[(r, first)] = (phrase.x0 + phrase.x1) / 2
            if last > first:
                spans[(r, first)] = (1, last - first + 1)
                covered.update((r, c) for c in range(first + 1, last + 1))

    _centred_parents(text, spans, covered, centres, edges, header_rows)
    _headers_reach_up(text, spans, covered, header_rows)
    _row_parents(text, spans, covered, header_rows)

    row_edges = [lines[0].top - 1]
    row_edges += [(lines[i].bottom + lines[i + 1].top) / 2 for i in range(n_rows - 1)]
    row_edges.append(lines[-1].bottom + 1)
    cells: list[GridCell] = []
    boxes: list[Box] = []
    for r in range(n_rows):
        for c in range(n_cols):
            if (r, c) in covered:
                continue
            rowspan, colspan = spans.get((r, c), (1, 1))
            cells.append(GridCell(r, c, rowspan, colspan, text[r][c]))
            boxes.append((edges[c], row_edges[r], edges[c + colspan], row_edges[r + rowspan]))
    bbox = (edges[0], row_edges[0], edges[-1], row_edges[-1])
    return AlignedTable(bbox, tuple(boxes), Grid.build(n_rows, n_cols, cells))


def _centred_parents(
    text: list[list[str]],
    spans: dict[tuple[int, int], tuple[int, int]],
    covered: set[tuple[int, int]],
    centres: dict[tuple[int, int], float],
    edges: Sequence[float],
    header_rows: int,
) -> None:
    """A header label centred over empty cells of its row, with labels below them, spans
    them (a parent over three children sits over the middle one only)."""
    n_cols = len(edges) - 1
    for r in range(header_rows - 1):
        for c in range(n_cols):
            if not text[r][c] or (r, c) in covered:
                continue
            first, last = c, c + spans.get((r, c), (1, 1))[1] - 1
            centre = centres.get((r, c), (edges[first] + edges[last + 1]) / 2)
            tolerance = 0.25 * (edges[last + 1] - edges[first])
            while first > 0 and last < n_cols - 1:
                neighbours = ((r, first - 1), (r, last + 1))
                if any(text[x][y] or (x, y) in covered for x, y in neighbours):
                    break
                below = ((r + 1, first - 1), (r + 1, last + 1))
                if not all(text[x][y] or (x, y) in covered for x, y in below):
                    break
                if abs((edges[first - 1] + edges[last + 2]) / 2 - centre) > tolerance:
                    break
                first, last = first - 1, last + 1
            if first < c:
                spans.pop((r, c), None)
                text[r][first], text[r][c] = text[r][c], ""
                spans[(r, first)] = (1, last - first + 1)
                covered.update((r, k) for k in range(first + 1, last + 1))


def _headers_reach_up(
    text: list[list[str]],
    spans: dict[tuple[int, int], tuple[int, int]],
    covered: set[tuple[int, int]],
    header_rows: int,
) -> None:
    n_cols = len(text[0])
    for c in range(n_cols):
        for r in range(1, header_rows):
            if not text[r][c] or (r, c) in covered:
                continue
            colspan = spans.get((r, c), (1, 1))[1]
            above = [(k, x) for k in range(r) for x in range(c, c + colspan)]
            if any(text[k][x] or (k, x) in covered for k, x in above):
                break
            spans.pop((r, c), None)
            text[0][c], text[r][c] = text[r][c], ""
            spans[(0, c)] = (r + 1, colspan)
            covered.update(
                p for p in above + [(r, x) for x in range(c, c + colspan)] if p != (0, c)
            )
            break


def _row_parents(
    text: list[list[str]],
    spans: dict[tuple[int, int], tuple[int, int]],
    covered: set[tuple[int, int]],
    header_rows: int,
) -> None:
    n_rows, n_cols = len(text), len(text[0])
    label_cols = 0
    while label_cols < n_cols - 1 and not any(
        _DATA_VALUE.fullmatch(text[r][label_cols])
        for r in range(header_rows, n_rows)
        if text[r][label_cols] and (r, label_cols) not in covered
    ):
        label_cols += 1
    for c in range(max(0, label_cols - 1)):
        r = header_rows
        while r < n_rows:
            if not text[r][c] or (r, c) in covered or spans.get((r, c), (1, 1))[1] > 1:
                r += 1
                continue
            end = r + 1
            while (
                end < n_rows
                and not text[end][c]
                and (end, c) not in covered
                and text[end][c + 1]
                and (end, c + 1) not in covered
            ):
                end += 1
            if end - r > 1:
                spans[(r, c)] = (end - r, 1)
                covered.update((k, c) for k in range(r + 1, end))
            r = end


def aligned_tables(words: Sequence[dict[str, Any]]) -> list[AlignedTable]:
    """Every borderless table in these words (a page's, or a region's)."""
    tables = []
    for block in table_blocks(text_lines(words)):
        table = read_table(block)
        if table is not None:
            tables.append(table)
    return tables
