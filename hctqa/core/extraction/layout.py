"""What the table rules read from a page, independent of where it came from.

A ``PageLayout`` is a page's words (and, for a PDF's text layer, its characters) and its
ruling segments, in PDF points with the origin at the top left (pixels for an image). The
extraction rules (``hctqa.core.extraction.tables``) read only this, so a page read from a PDF's
text layer (``layout_from_pdfplumber``) and a page read through OCR (words with a confidence,
rules found in the picture, no characters) go through the same grid logic.

- A ``Word`` is a run of characters without a space: its text, its box, its font size and, from
  OCR, its confidence (0–1). ``bold`` and ``upright`` are None / True when not known. A line
  of turned text (a column header set vertically) is one word, its words spaced.
- A ``Char`` is one glyph of the text layer; OCR layouts have none.
- A ``Rule`` is a ruling segment: a drawn line, the edge of a thin filled rectangle, or a
  straight stroke of a path drawn across or down the page. It is horizontal when it is wider
  than tall.
- ``graphics`` are the boxes of drawings that are not rules (curves, slanted lines): a chart's
  marks, so that its labels are not taken for a table.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Box = tuple[float, float, float, float]  # x0, top, x1, bottom

# Words: characters closer than this share of the font size are one word (a word space is
# about a quarter of it); a space character splits words.
WORD_X_TOLERANCE_RATIO = 0.15
WORD_Y_TOLERANCE = 3.0
# A filled rectangle thinner than this (points) is a rule; a thicker one is shading.
RULE_THICKNESS = 2.5
# Rules shorter than this (points) are underlines of single glyphs or noise.
MIN_RULE_LENGTH = 3.0


@dataclass(frozen=True)
class Char:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float | None = None
    bold: bool | None = None


@dataclass(frozen=True)
class Word:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float | None = None
    confidence: float | None = None  # OCR's, 0–1; None for a text layer
    bold: bool | None = None
    upright: bool = True

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def centre(self) -> float:
        return (self.x0 + self.x1) / 2


@dataclass(frozen=True)
class Rule:
    x0: float
    top: float
    x1: float
    bottom: float

    @property
    def horizontal(self) -> bool:
        return self.x1 - self.x0 >= self.bottom - self.top

    @property
    def length(self) -> float:
        return max(self.x1 - self.x0, self.bottom - self.top)


@dataclass(frozen=True)
class PageLayout:
    """One page as the table rules see it. ``number`` is 1-based."""

    number: int
    width: float
    height: float
    words: tuple[Word, ...]
    rules: tuple[Rule, ...] = ()
    chars: tuple[Char, ...] = ()
    source: Literal["text", "ocr"] = "text"
    graphics: tuple[Box, ...] = ()
    # Anything the reader wants to keep beside the layout (the OCR engine's name, …).
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def has_text(self) -> bool:
        return bool(self.words)

    def words_in(self, box: Box, *, margin: float = 0.0) -> list[Word]:
        """The words whose centre lies in ``box`` (widened by ``margin``)."""
        x0, top, x1, bottom = box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin
        return [w for w in self.words if x0 <= w.centre <= x1 and top <= w.middle <= bottom]

    def rules_near(self, box: Box, *, margin: float = 0.0) -> list[Rule]:
        """The rules that touch ``box`` widened by ``margin``, clipped to it."""
        x0, top, x1, bottom = box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin
        found = []
        for rule in self.rules:
            if rule.x1 < x0 or rule.x0 > x1 or rule.bottom < top or rule.top > bottom:
                continue
            found.append(
                Rule(
                    max(rule.x0, x0), max(rule.top, top), min(rule.x1, x1), min(rule.bottom, bottom)
                )
            )
        return found


def _is_bold(fontname: str | None) -> bool | None:
    if not fontname:
        return None
    name = fontname.split("+", 1)[-1].lower()
    return any(k in name for k in ("bold", "black", "heavy", "semibold", "demi"))


def _straight_segments(curve: dict[str, Any]) -> list[Box] | None:
    """The straight segments of a drawn path, each as ``(x0, top, x1, bottom)``; None when
    the path bends (a Bézier part). A closed subpath gets its closing segment too."""
    path = curve.get("path")
    if not path:
        points = curve.get("pts") or []
        path = [("m", points[0])] + [("l", p) for p in points[1:]] if points else []
    segments: list[Box] = []
    start = current = None
    for step in path:
        kind = step[0]
        if kind == "m":
            start = current = step[1]
        elif kind == "l" and current is not None:
            segments.append((current[0], current[1], step[1][0], step[1][1]))
            current = step[1]
        elif kind == "h" and current is not None and start is not None:
            if current != start:
                segments.append((current[0], current[1], start[0], start[1]))
            current = start
        elif kind not in ("m", "l", "h"):
            return None
    return segments


def _axis_aligned(segments: list[Box]) -> bool:
    """Every segment horizontal or vertical: a frame, a box or a ruling line drawn as a path,
    not a chart's mark."""
    return bool(segments) and all(
        min(abs(x1 - x0), abs(y1 - y0)) <= 0.5 for x0, y0, x1, y1 in segments
    )


def _rules_of(page: Any) -> list[Rule]:
    """Drawn lines and the edges of rectangles: a thin filled rectangle is one rule; a
    stroked rectangle gives its four sides; a thick filled one (shading) gives none. A path
    of horizontal and vertical strokes (a table's frame drawn as one closed path) gives each
    stroke."""
    rules: list[Rule] = []
    for line in page.lines:
        if min(line["x1"] - line["x0"], line["bottom"] - line["top"]) > 1.0:
            continue  # slanted: a chart's mark, not a rule
        rules.append(Rule(line["x0"], line["top"], line["x1"], line["bottom"]))
    for rect in page.rects:
        x0, top, x1, bottom = rect["x0"], rect["top"], rect["x1"], rect["bottom"]
        thin = min(x1 - x0, bottom - top) <= RULE_THICKNESS
        if thin and (rect.get("fill") or rect.get("stroke")):
            rules.append(Rule(x0, top, x1, bottom))
        elif rect.get("stroke"):
            rules += [
                Rule(x0, top, x1, top),
                Rule(x0, bottom, x1, bottom),
                Rule(x0, top, x0, bottom),
                Rule(x1, top, x1, bottom),
            ]
    for curve in page.curves:
        # A curve whose points lie on one horizontal or vertical line (or a thin filled
        # shape drawn as a path) is a rule too.
        x0, top, x1, bottom = curve["x0"], curve["top"], curve["x1"], curve["bottom"]
        thin = min(x1 - x0, bottom - top) <= RULE_THICKNESS
        segments = _straight_segments(curve)
        if curve.get("stroke") and not thin and segments and _axis_aligned(segments):
            rules += [Rule(min(a, c), min(b, d), max(a, c), max(b, d)) for a, b, c, d in segments]
        elif thin and (curve.get("stroke") or curve.get("fill")):
            rules.append(Rule(x0, top, x1, bottom))
    return [r for r in rules if r.length >= MIN_RULE_LENGTH]


def _graphics_of(page: Any) -> list[Box]:
    """Curves that are not straight rules, and slanted lines. Paths of horizontal and
    vertical strokes only (frames, boxes, shading drawn as paths) are no chart marks."""
    found: list[Box] = []
    for curve in page.curves:
        x0, top, x1, bottom = curve["x0"], curve["top"], curve["x1"], curve["bottom"]
        if min(x1 - x0, bottom - top) <= RULE_THICKNESS:
            continue
        segments = _straight_segments(curve)
        if segments is not None and _axis_aligned(segments):
            continue
        found.append((float(x0), float(top), float(x1), float(bottom)))
    for line in page.lines:
        if min(line["x1"] - line["x0"], line["bottom"] - line["top"]) > 1.0:
            found.append(
                (float(line["x0"]), float(line["top"]), float(line["x1"]), float(line["bottom"]))
            )
    return found


def _rtl(char: str) -> bool:
    return unicodedata.bidirectional(char) in ("R", "AL")


def is_rtl(text: str) -> bool:
    """Text mostly in a right-to-left script (Arabic, Hebrew): more such letters than
    left-to-right ones."""
    right = sum(_rtl(c) for c in text)
    return right > 0 and right >= sum(unicodedata.bidirectional(c) == "L" for c in text)


def logical_order(glyphs: str | Sequence[str]) -> str:
    """A right-to-left word as written, from its glyphs as the page shows them (left to
    right; a string gives one glyph a character): the glyphs reversed, runs of digits and
    Latin letters kept as they read, and Arabic presentation forms (the shapes a PDF draws)
    made the letters they stand for. A glyph standing for several letters (the lam-alef
    ligature, mapped to "لا") is one unit: its letters are already in the order they read."""
    units = list(glyphs)
    if not any(_rtl(c) for unit in units for c in unit):
        return "".join(units)
    runs: list[list[str]] = []
    for unit in units:
        ltr = unicodedata.bidirectional(unit[:1] or " ") in ("L", "EN", "AN")
        if runs and runs[-1][0] == ("L" if ltr else "R"):
            runs[-1].append(unit)
        else:
            runs.append(["L" if ltr else "R", unit])
    out = []
    for kind, *chars in reversed(runs):
        out += chars if kind == "L" else reversed(chars)
    return "".join(
        unicodedata.normalize("NFKC", c)
        if 0xFB50 <= ord(c) <= 0xFDFF or 0xFE70 <= ord(c) <= 0xFEFF
        else c
        for c in "".join(out)
    )


def _marker_start(chars: Sequence[dict[str, Any]]) -> int:
    """Where a footnote marker glued to the end of a word starts ("property¹" set as
    "property" and a smaller, raised "1"), or ``len(chars)`` when there is none: up to three
    trailing glyphs at most 0.85 of the word's size whose foot sits above its baseline."""
    sizes = [float(c.get("size") or 0) for c in chars]
    size = max(sizes, default=0)
    if size <= 0 or len(chars) < 3:
        return len(chars)
    base = max(float(c["bottom"]) for c, s in zip(chars, sizes, strict=True) if s == size)
    k = len(chars)
    while (
        k > 1
        and len(chars) - k < 3
        and sizes[k - 1] <= 0.85 * size
        and float(chars[k - 1]["bottom"]) <= base - 0.15 * size
    ):
        k -= 1
    marked = k < len(chars) and all(sizes[i] > 0.85 * size for i in range(k))
    return k if marked and k >= 2 else len(chars)


def _reads_upward(char: dict[str, Any]) -> bool:
    """A glyph turned a quarter left (its baseline runs up the page), from its matrix."""
    matrix = char.get("matrix") or (1, 0, 0, 1, 0, 0)
    return float(matrix[1]) > 0


def _word(chars: Sequence[dict[str, Any]], text: str, upright: bool) -> Word:
    first = chars[0]
    return Word(
        text=text,
        x0=min(float(c["x0"]) for c in chars),
        top=min(float(c["top"]) for c in chars),
        x1=max(float(c["x1"]) for c in chars),
        bottom=max(float(c["bottom"]) for c in chars),
        size=float(first.get("size") or 0) or None,
        bold=_is_bold(first.get("fontname")),
        upright=upright,
    )


def _vertical_lines(words: list[tuple[Word, bool]]) -> list[Word]:
    """Turned words (column headers set vertically) joined into their lines, each one word
    reading in its own direction: words of a line share their x band and follow one another
    up the page (down, for text turned right)."""
    lines: list[list[tuple[Word, bool]]] = []
    for word, upward in sorted(words, key=lambda w: (w[0].x0, w[0].top)):
        for line in lines:
            last, direction = line[-1]
            overlap = min(last.x1, word.x1) - max(last.x0, word.x0)
            gap = max(last.top, word.top) - min(last.bottom, word.bottom)
            size = last.size or (last.x1 - last.x0)
            if direction == upward and overlap >= 0.5 * (word.x1 - word.x0) and gap <= size:
                line.append((word, upward))
                break
        else:
            lines.append([(word, upward)])
    out = []
    for line in lines:
        upward = line[0][1]
        ordered = sorted((w for w, _ in line), key=lambda w: -w.bottom if upward else w.top)
        out.append(
            Word(
                " ".join(w.text for w in ordered),
                min(w.x0 for w in ordered),
                min(w.top for w in ordered),
                max(w.x1 for w in ordered),
                max(w.bottom for w in ordered),
                ordered[0].size,
                bold=ordered[0].bold,
                upright=False,
            )
        )
    return out


def words_from_chars(chars: Sequence[dict[str, Any]]) -> list[Word]:
    """pdfplumber's words from a page's characters (a space, or a gap over
    ``WORD_X_TOLERANCE_RATIO`` of the font size, splits them), with the size and weight of
    their first character. A glyph whose text carries spaces (" ." in some fonts) counts
    without them.

    - A footnote marker set smaller and raised at a word's end is a word of its own.
    - Right-to-left words (Arabic, Hebrew) are given in logical order (``logical_order``).
    - Turned text reads in its own direction (up the page for a column header turned left),
      each line of it one word."""
    from pdfplumber.utils import extract_words

    options = dict(
        x_tolerance_ratio=WORD_X_TOLERANCE_RATIO,
        y_tolerance=WORD_Y_TOLERANCE,
        keep_blank_chars=False,
        extra_attrs=["upright"],
        return_chars=True,
    )
    upright = [c for c in chars if c.get("upright", True) and str(c.get("text", "")).strip()]
    # Turned glyphs keep their spaces: along a turned line the gap alone does not split words.
    turned = [c for c in chars if not c.get("upright", True)]
    up = [c for c in turned if _reads_upward(c)]
    down = [c for c in turned if not _reads_upward(c)]
    words: list[Word] = []
    vertical: list[tuple[Word, bool]] = []
    groups = [
        (upright, {}, True),
        (up, {"char_dir_rotated": "btt", "line_dir_rotated": "ltr"}, False),
        (down, {"char_dir_rotated": "ttb", "line_dir_rotated": "rtl"}, False),
    ]
    for group, direction, is_upright in groups:
        if not group:
            continue
        for w in extract_words(list(group), **options, **direction):  # type: ignore[arg-type]
            # The word's text has its ligatures expanded ("ﬁ" → "fi"); a glyph that carries
            # a space (" ." in some fonts) does not split it.
            text = "".join(str(w["text"]).split())
            if not text:
                continue
            glyphs = w["chars"]
            if not is_upright:
                vertical.append((_word(glyphs, text, False), group is up))
                continue
            # (A ligature expanded makes the text longer than its glyphs: no marker then.)
            cut = _marker_start(glyphs) if len(text) == len(glyphs) else len(glyphs)
            head = text if cut == len(glyphs) else text[:cut]
            if any(_rtl(c) for c in head):
                # Reversed glyph by glyph: a ligature's letters stay in their order.
                head = logical_order(["".join(str(g["text"]).split()) for g in glyphs[:cut]])
            words.append(_word(glyphs[:cut], head, True))
            if cut < len(glyphs):
                words.append(_word(glyphs[cut:], text[cut:], True))
    return words + _vertical_lines(vertical)


def layout_from_pdfplumber(page: Any, number: int | None = None) -> PageLayout:
    """The layout of a pdfplumber page (or crop): its printable characters, their words, and
    its ruling segments."""
    raw = [c for c in page.chars if c.get("text", "").strip()]
    chars = tuple(
        Char(
            c["text"].strip(),
            float(c["x0"]),
            float(c["top"]),
            float(c["x1"]),
            float(c["bottom"]),
            float(c.get("size") or 0) or None,
            _is_bold(c.get("fontname")),
        )
        for c in raw
    )
    return PageLayout(
        number=number if number is not None else int(page.page_number),
        width=float(page.width),
        height=float(page.height),
        words=tuple(words_from_chars(page.chars)),
        rules=tuple(_rules_of(page)),
        chars=chars,
        source="text",
        graphics=tuple(_graphics_of(page)),
    )


def layout_of_words(
    number: int,
    width: float,
    height: float,
    words: Iterable[Word],
    rules: Iterable[Rule] = (),
    *,
    source: Literal["text", "ocr"] = "ocr",
) -> PageLayout:
    """A layout made from words and rules found elsewhere (OCR, tests)."""
    return PageLayout(number, width, height, tuple(words), tuple(rules), (), source)
