"""One table's structure from the words and ruling lines of its region.

The rules read a region the way a person reads a table, from evidence on the page; every
distance is in ems (the region's median text height), so they hold at any font size and for
OCR words as for a text layer.

- **Decoration.** Leader dots ("Burglary . . . . .") are dropped; a superscript footnote
  marker stays with the word before it; a decimal or a thousands group split from its number
  ("11,062" ".6", "100" "000") is joined back.
- **Lines and phrases.** Words sharing a baseline band are a line; words of a line closer than a
  word space (and not two numbers) are a phrase, the text of one cell.
- **Columns** are the gaps that the phrases of the lines holding several phrases leave open,
  allowing a few lines to cross them (spanning headers), and the vertical ruling lines that
  separate text. A gap must be open in at least two lines.
- **Header and body.** The body starts at the first line that holds values (numbers, or the
  signs for none) beside a label, or below the first full-width rule under the top lines.
- **Header rows.** Header lines stack into one header row while each phrase stands over the
  columns of the phrase above it; a phrase over several columns (or between vertical rules
  around them) spans them, and a label centred over empty cells with labels below spans
  them too. A header label with nothing above it reaches up to the first header row.
- **Body rows.** Each line is a row, unless it continues the row above: a wrapped label
  (starting in lower case, or after "and", a comma or a hyphen), a label line without values
  whose values are on the next line, or text in a row's cells with the row's label cell empty;
  a horizontal rule always ends a row, and two numbers never share a cell.
- **Row labels.** A label alone in a body row stays in the label column (a row-group label); a
  label with blank label cells below it, beside labels of a second label column, covers those
  rows. Indentation gives each row's level.
- **Title and notes** inside the region: a caption line at the top ("Table 3. …") and the
  lines that explain units; footnotes and source lines at the bottom.

Every character of the region's words ends up in a cell, the title or the notes, leader dots
aside: ``check_nothing_dropped`` verifies it for each table.
"""

from __future__ import annotations

import bisect
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from hctqa.core.extraction.layout import Box, Rule, Word
from hctqa.core.extraction.table import (
    FLAG_INFERRED_SPAN,
    FLAG_JOINED_LINES,
    FLAG_LOW_CONFIDENCE,
    FLAG_NEAR_BOUNDARY,
    STRATEGY_LINES,
    STRATEGY_TEXT,
    Cell,
    Table,
)

# --- Text kinds -------------------------------------------------------------------------------

_VALUE = re.compile(
    r"""^[-+\u2212\u2013\u2014]?\(?[$€£¥]?
    (\d[\d\u00a0\u2009\u202f ,.']*\d|\d)
    (\s?%|\s?[a-zA-Z]{0,2})?\)?[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]*$""",
    re.VERBOSE,
)
_NONE_SIGNS = re.compile(
    r"^(\(?[xX]\)?|[-\u2013\u2014\u2212:.…*]{1,3}|n/?a|N/?A|nil|NA|\(NA\)|\(Z\)|\(D\)|\(S\)|–|—)$"
)
_DOTS = re.compile(r"^[.\u2024\u2025\u2026\u00b7\u22c5 ]+$")
_TRAILING_DOTS = re.compile(r"(?:\s*[.\u2024\u2025\u2026\u00b7\u22c5]){3,}\s*$")
_CONNECTOR = re.compile(
    r"(?:\b(?:and|or|of|for|the|in|to|by|with|from|on|at|a|an|&)|[,\-–/(])$", re.I
)
_CAPTION = re.compile(r"^(table|tab\.|figure|fig\.|chart|exhibit|annex|appendix)\s*[\dA-Z]", re.I)
_NOTE_START = re.compile(
    r"^(source|sources|note|notes|nb|n\.b\.|footnote|\*|[¹²³⁴⁵⁶⁷⁸⁹⁰†‡§]|\(\d{1,2}\)|\d{1,2}\)|[a-z]\)|–\s*represents|x\s+not\s+applicable)",
    re.I,
)
_UNITS = re.compile(
    r"^[\[(]?\s*(in|unit|units|values?|figures|amounts?|€|eur|euro|million|thousand|billion|percent|%)\b",
    re.I,
)


def is_value(text: str) -> bool:
    """A number (with its sign, unit or footnote mark) or a sign for none ("–", "(X)", ":")."""
    t = text.strip()
    return bool(t) and bool(_VALUE.match(t) or _NONE_SIGNS.match(t))


def _starts_lower(text: str) -> bool:
    t = text.lstrip("([\"'“‘")
    return bool(t) and t[0].islower()


# --- Pieces: words after decoration -----------------------------------------------------------


@dataclass
class Piece:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    words: list[Word]
    small: bool = False  # a superscript or footnote marker

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def height(self) -> float:
        return self.bottom - self.top


def _piece(word: Word, text: str | None = None, x1: float | None = None) -> Piece:
    return Piece(
        word.text if text is None else text,
        word.x0,
        word.top,
        word.x1 if x1 is None else x1,
        word.bottom,
        [word],
    )


def strip_leaders(words: Sequence[Word]) -> tuple[list[Piece], list[str]]:
    """Pieces without leader dots, and the leader texts dropped. A run of three dots or more
    after a label is a leader; dots alone in a cell (".." for "not available") are kept."""
    pieces: list[Piece] = []
    dropped: list[str] = []
    for word in words:
        text = word.text
        match = _TRAILING_DOTS.search(text)
        if match and match.start() > 0 and text[: match.start()].strip():
            kept = text[: match.start()].rstrip()
            share = len(kept) / max(1, len(text))
            x1 = word.x0 + (word.x1 - word.x0) * share
            pieces.append(_piece(word, kept, x1))
            dropped.append(text[match.start() :])
        else:
            pieces.append(_piece(word))
    # Runs of dot-only words after text in the same line are leaders too.
    keep: list[Piece] = []
    for line in _rough_lines(pieces):
        line.sort(key=lambda p: p.x0)
        runs: list[tuple[bool, list[Piece]]] = []  # (after text, dot-only pieces) or text
        seen_text = False
        for piece in line:
            if _DOTS.match(piece.text):
                if not runs or not runs[-1][1] or not _DOTS.match(runs[-1][1][-1].text):
                    runs.append((seen_text, []))
                runs[-1][1].append(piece)
            else:
                runs.append((False, [piece]))
                seen_text = True
        for k, (after_text, run) in enumerate(runs):
            dots = sum(p.text.count(".") + p.text.count("·") + 3 * p.text.count("…") for p in run)
            last = k == len(runs) - 1
            if after_text and (dots >= 3 or (last and dots >= 2)):
                dropped.extend(p.text for p in run)
            else:
                keep.extend(run)
    return keep, dropped


def _rough_lines(pieces: Sequence[Piece]) -> list[list[Piece]]:
    """Pieces grouped by vertical overlap (for the leader rule only)."""
    lines: list[list[Piece]] = []
    bands: list[tuple[float, float]] = []
    for piece in sorted(pieces, key=lambda p: p.top):
        for i in range(len(lines) - 1, max(-1, len(lines) - 4), -1):
            top, bottom = bands[i]
            if top - 0.5 <= piece.middle <= bottom + 0.5:
                lines[i].append(piece)
                break
        else:
            lines.append([piece])
            bands.append((piece.top, piece.bottom))
    return lines


# --- Lines ------------------------------------------------------------------------------------


@dataclass
class Phrase:
    pieces: list[Piece]
    line: int = 0
    c0: int = 0
    c1: int = 0

    @property
    def x0(self) -> float:
        return self.pieces[0].x0

    @property
    def x1(self) -> float:
        return max(p.x1 for p in self.pieces)

    @property
    def top(self) -> float:
        return min(p.top for p in self.pieces)

    @property
    def bottom(self) -> float:
        return max(p.bottom for p in self.pieces)

    @property
    def text(self) -> str:
        out = ""
        for piece in self.pieces:
            out = piece.text if not out else f"{out} {piece.text}"
        return out

    @property
    def numeric(self) -> bool:
        return is_value(self.text)


@dataclass
class Line:
    pieces: list[Piece]
    top: float
    bottom: float
    phrases: list[Phrase] = field(default_factory=list)

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def x0(self) -> float:
        return min(p.x0 for p in self.pieces)

    @property
    def x1(self) -> float:
        return max(p.x1 for p in self.pieces)

    @property
    def text(self) -> str:
        return " ".join(p.text for p in self.phrases)


def _em(pieces: Sequence[Piece]) -> float:
    heights = [p.height for p in pieces if p.height > 0]
    return statistics.median(heights) if heights else 10.0


def group_lines(pieces: Sequence[Piece], em: float) -> list[Line]:
    """Pieces that share a baseline band, top to bottom; small pieces (superscripts) join
    the line they overlap."""
    normal = [p for p in pieces if p.height >= 0.7 * em]
    small = [p for p in pieces if p.height < 0.7 * em]
    lines: list[Line] = []
    for piece in sorted(normal, key=lambda p: (p.top, p.x0)):
        best = None
        for line in reversed(lines[-6:]):
            overlap = min(line.bottom, piece.bottom) - max(line.top, piece.top)
            if overlap >= 0.5 * min(piece.height, line.bottom - line.top) and (
                line.top - 0.3 * em <= piece.middle <= line.bottom + 0.3 * em
            ):
                best = line
                break
        if best is None:
            lines.append(Line([piece], piece.top, piece.bottom))
        else:
            best.pieces.append(piece)
    for piece in small:
        piece.small = True
        best = None
        distance = float("inf")
        for line in lines:
            overlap = min(line.bottom, piece.bottom) - max(line.top, piece.top)
            gap = 0.0 if overlap > 0 else -overlap
            if gap < distance:
                best, distance = line, gap
        if best is not None and distance <= 0.5 * em:
            best.pieces.append(piece)
        else:
            lines.append(Line([piece], piece.top, piece.bottom))
    for line in lines:
        line.pieces.sort(key=lambda p: p.x0)
        normal_pieces = [p for p in line.pieces if not p.small] or line.pieces
        line.top = min(p.top for p in normal_pieces)
        line.bottom = max(p.bottom for p in normal_pieces)
    lines.sort(key=lambda line: line.top)
    return lines


def _join_numbers(line: Line, em: float) -> None:
    """Pieces of one number split apart ("11,062" ".6"; "100" "000") become one; a marker
    right after a word stays with it."""
    merged: list[Piece] = []
    for piece in line.pieces:
        if merged:
            last = merged[-1]
            gap = piece.x0 - last.x1
            joined = False
            if gap <= 0.12 * em:
                joined = True
            elif gap <= 0.45 * em and re.search(r"\d$", last.text):
                decimal = re.match(r"^[.,]\d", piece.text)
                thousands = re.fullmatch(r"\d{3}([.,]\d+)?%?\)?", piece.text) and re.fullmatch(
                    r"[-+\u2212(]?\d{1,3}(\s\d{3})*", last.text
                )
                joined = bool(decimal or thousands)
            if piece.small and gap <= 0.6 * em and len(piece.text) <= 3 and not last.small:
                joined = True
            if joined:
                sep = "" if gap <= 0.12 * em or piece.small or piece.text[:1] in ".," else " "
                last.text = f"{last.text}{sep}{piece.text}"
                last.x1 = max(last.x1, piece.x1)
                last.top = min(last.top, piece.top) if not piece.small else last.top
                last.bottom = max(last.bottom, piece.bottom) if not piece.small else last.bottom
                last.words += piece.words
                continue
        merged.append(piece)
    line.pieces = merged


def _rule_between(x0: float, x1: float, top: float, bottom: float, vrules: Sequence[Rule]) -> bool:
    for rule in vrules:
        if x0 <= rule.x0 <= x1 and rule.top <= (top + bottom) / 2 <= rule.bottom:
            return True
    return False


def make_phrases(line: Line, em: float, vrules: Sequence[Rule]) -> None:
    """Words of a line closer than a word space are one phrase, unless both are values or a
    vertical rule stands between them."""
    line.phrases = []
    for piece in line.pieces:
        if line.phrases:
            last = line.phrases[-1]
            prev = last.pieces[-1]
            gap = piece.x0 - prev.x1
            both_values = is_value(prev.text) and is_value(piece.text)
            if (
                gap <= 0.5 * em
                and not both_values
                and not _rule_between(prev.x1, piece.x0, line.top, line.bottom, vrules)
            ):
                last.pieces.append(piece)
                continue
        line.phrases.append(Phrase([piece]))


# --- Columns ----------------------------------------------------------------------------------


def _coverage(lines: Sequence[Line], lo: float, hi: float) -> list[tuple[float, float, int, int]]:
    """Elementary x intervals between phrase edges, each with how many lines cross it (C) and
    how many have phrases on both sides of it and none over it (S)."""
    edges = sorted({lo, hi, *(v for line in lines for p in line.phrases for v in (p.x0, p.x1))})
    edges = [e for e in edges if lo <= e <= hi]
    spans = [[(p.x0, p.x1) for p in line.phrases] for line in lines]
    out = []
    for a, b in zip(edges, edges[1:], strict=False):
        if b - a <= 1e-6:
            continue
        mid = (a + b) / 2
        crossing = supporting = 0
        for line in spans:
            if any(x0 < mid < x1 for x0, x1 in line):
                crossing += 1
            elif any(x1 <= mid for _x0, x1 in line) and any(x0 >= mid for x0, _x1 in line):
                supporting += 1
        out.append((a, b, crossing, supporting))
    return out


def column_separators(
    lines: Sequence[Line], vrules: Sequence[Rule], em: float, box: Box
) -> tuple[list[float], set[float]]:
    """The x of each column boundary inside the region (left to right), and those that are
    ruling lines."""
    multi = [line for line in lines if len(line.phrases) >= 2]
    if not multi:
        multi = list(lines)
    lo = min(p.x0 for line in lines for p in line.phrases)
    hi = max(p.x1 for line in lines for p in line.phrases)
    need = 2 if len(multi) >= 3 else 1
    intervals = _coverage(multi, lo, hi)
    separators: list[float] = []
    corridor: list[tuple[float, float, int, int]] = []

    def close() -> None:
        if not corridor:
            return
        least = min(c for _a, _b, c, _s in corridor)
        best: tuple[float, float] | None = None
        run_start = None
        for a, b, c, _s in corridor + [(0, 0, least + 1, 0)]:
            if c == least:
                run_start = a if run_start is None else run_start
                run_end = b
            elif run_start is not None:
                if best is None or run_end - run_start > best[1] - best[0]:
                    best = (run_start, run_end)
                run_start = None
        if best is not None and best[1] - best[0] >= 0.12 * em:
            separators.append((best[0] + best[1]) / 2)
        corridor.clear()

    for a, b, crossing, supporting in intervals:
        if supporting >= need and crossing <= 0.12 * (crossing + supporting):
            corridor.append((a, b, crossing, supporting))
        else:
            close()
    close()
    # Vertical rules inside the region that separate text on both sides.
    ruled: set[float] = set()
    height = box[3] - box[1]
    for rule in _merge_vertical(vrules):
        if not (lo + 0.2 * em < rule.x0 < hi - 0.2 * em):
            continue
        crossed = [
            line for line in lines if rule.top - 0.2 * em <= line.middle <= rule.bottom + 0.2 * em
        ]
        if not crossed:
            continue
        cut = [line for line in lines if any(p.x0 < rule.x0 < p.x1 for p in line.phrases)]
        long_enough = (rule.bottom - rule.top) >= 0.3 * height or len(crossed) >= 2
        if cut and len(cut) > 0.12 * len(lines):
            continue
        if not long_enough and not any(
            any(p.x1 <= rule.x0 for p in line.phrases)
            and any(p.x0 >= rule.x0 for p in line.phrases)
            for line in crossed
        ):
            continue
        near = [s for s in separators if abs(s - rule.x0) <= 1.5 * em]
        for s in near:
            separators.remove(s)
        separators.append(rule.x0)
        ruled.add(rule.x0)
    separators = sorted(set(separators))
    return separators, ruled


def _merge_vertical(vrules: Sequence[Rule], tolerance: float = 1.5) -> list[Rule]:
    """Vertical segments on one x that touch, as one rule each."""
    out: list[Rule] = []
    for rule in sorted(vrules, key=lambda r: (round(r.x0), r.top)):
        x = (rule.x0 + rule.x1) / 2
        if out and abs(out[-1].x0 - x) <= tolerance and rule.top <= out[-1].bottom + tolerance:
            last = out[-1]
            out[-1] = Rule(last.x0, last.top, last.x0, max(last.bottom, rule.bottom))
        else:
            out.append(Rule(x, rule.top, x, rule.bottom))
    return out


def _merge_horizontal(hrules: Sequence[Rule], tolerance: float = 1.5) -> list[Rule]:
    out: list[Rule] = []
    for rule in sorted(hrules, key=lambda r: (round((r.top + r.bottom) / 2), r.x0)):
        y = (rule.top + rule.bottom) / 2
        if out and abs(out[-1].top - y) <= tolerance and rule.x0 <= out[-1].x1 + tolerance:
            last = out[-1]
            out[-1] = Rule(last.x0, last.top, max(last.x1, rule.x1), last.top)
        else:
            out.append(Rule(rule.x0, y, rule.x1, y))
    return out


def _column_of(x: float, bounds: Sequence[float]) -> int:
    """The column holding x, given the inner boundaries."""
    return bisect.bisect_right(bounds, x)


# --- Assembly ---------------------------------------------------------------------------------


@dataclass
class _Row:
    lines: list[int]
    header: bool = False


@dataclass
class Draft:
    """A table being read: its grid of texts with spans and flags."""

    n_rows: int
    n_cols: int
    text: dict[tuple[int, int], str] = field(default_factory=dict)
    spans: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    covered: set[tuple[int, int]] = field(default_factory=set)
    flags: dict[tuple[int, int], set[str]] = field(default_factory=dict)
    boxes: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    indent: dict[int, float] = field(default_factory=dict)

    def filled(self, r: int, c: int) -> bool:
        return bool(self.text.get((r, c))) or (r, c) in self.covered

    def put(self, r: int, c: int, phrase: Phrase) -> None:
        old = self.text.get((r, c), "")
        self.text[(r, c)] = f"{old} {phrase.text}".strip()
        box = self.boxes.get((r, c))
        if box is None:
            self.boxes[(r, c)] = [phrase.x0, phrase.top, phrase.x1, phrase.bottom]
        else:
            box[0] = min(box[0], phrase.x0)
            box[1] = min(box[1], phrase.top)
            box[2] = max(box[2], phrase.x1)
            box[3] = max(box[3], phrase.bottom)

    def flag(self, r: int, c: int, name: str) -> None:
        self.flags.setdefault((r, c), set()).add(name)

    def span(self, r: int, c: int, rowspan: int, colspan: int) -> None:
        self.spans[(r, c)] = (rowspan, colspan)
        for rr in range(r, r + rowspan):
            for cc in range(c, c + colspan):
                if (rr, cc) != (r, c):
                    self.covered.add((rr, cc))


def _is_data_line(line: Line, bounds: Sequence[float]) -> bool:
    """Values beside a label: at least one phrase right of the first column is a value, and
    values are most of them."""
    others = line.phrases[1:]
    if not others:
        return False
    values = [p for p in others if p.numeric]
    return bool(values) and len(values) * 2 >= len(others)


def _header_end(
    lines: Sequence[Line], bounds: Sequence[float], hrules: Sequence[Rule], box: Box, em: float
) -> int:
    """How many lines at the top are column headers."""
    if len(lines) < 2:
        return 0
    first_data = next((i for i, line in enumerate(lines) if _is_data_line(line, bounds)), None)
    width = box[2] - box[0]
    # A rule across most of the table under the first lines ends the header.
    ruled_end = None
    for rule in hrules:
        if rule.x1 - rule.x0 < 0.6 * width:
            continue
        above = [i for i, line in enumerate(lines) if line.bottom <= rule.top + 0.2 * em]
        below = [i for i, line in enumerate(lines) if line.top >= rule.top - 0.2 * em]
        if above and below and len(above) <= max(1, len(lines) // 2):
            ruled_end = len(above)
            break
    if first_data is not None and first_data > 0:
        if ruled_end is not None and ruled_end <= first_data and ruled_end > 0:
            return ruled_end if _plausible_header(lines[:ruled_end]) else first_data
        return first_data
    if ruled_end is not None:
        return ruled_end
    return 1


def _plausible_header(lines: Sequence[Line]) -> bool:
    return not any(sum(p.numeric for p in line.phrases[1:]) >= 2 for line in lines)


def _assign_columns(line: Line, bounds: Sequence[float], em: float, header: bool) -> list[Phrase]:
    """Each phrase's columns; a body phrase cut by a boundary between two of its words is
    split there."""
    out: list[Phrase] = []
    for phrase in line.phrases:
        parts = [phrase]
        if not header and len(phrase.pieces) > 1:
            parts = []
            current = [phrase.pieces[0]]
            for prev, piece in zip(phrase.pieces, phrase.pieces[1:], strict=False):
                if any(prev.x1 <= b <= piece.x0 for b in bounds):
                    parts.append(Phrase(current))
                    current = []
                current.append(piece)
            parts.append(Phrase(current))
        for part in parts:
            c0 = _column_of(part.x0 + 0.05 * em, bounds)
            c1 = _column_of(part.x1 - 0.05 * em, bounds)
            if c1 > c0 and not header:
                # A body phrase over a boundary sits in the column holding most of it.
                best, share = c0, -1.0
                edges = [-1e9, *bounds, 1e9]
                for c in range(c0, c1 + 1):
                    inside = min(part.x1, edges[c + 1]) - max(part.x0, edges[c])
                    if inside > share:
                        best, share = c, inside
                c0 = c1 = best
            part.c0, part.c1 = c0, max(c0, c1)
            out.append(part)
    return out


def _group_header_rows(
    lines: Sequence[Line], placed: list[list[Phrase]], hrules: Sequence[Rule], em: float
) -> list[list[int]]:
    """Header lines stacked into header rows: a line joins the row above while each of its
    phrases stands over exactly the columns of a phrase above or over empty columns, and no
    rule lies between."""
    rows: list[list[int]] = []
    taken: dict[tuple[int, int], tuple[int, int]] = {}  # column range start → range
    for i, phrases in enumerate(placed):
        if rows:
            prev = lines[rows[-1][-1]]
            ruled = any(
                prev.bottom - 0.2 * em <= r.top <= lines[i].top + 0.2 * em
                and min(r.x1, lines[i].x1) - max(r.x0, lines[i].x0) > 0
                for r in hrules
            )
            fits = not ruled
            if fits:
                for phrase in phrases:
                    for c0, c1 in taken.values():
                        overlap = min(c1, phrase.c1) - max(c0, phrase.c0)
                        if overlap >= 0 and (c0, c1) != (phrase.c0, phrase.c1):
                            fits = False
            if fits:
                rows[-1].append(i)
                for phrase in phrases:
                    taken[(phrase.c0, phrase.c1)] = (phrase.c0, phrase.c1)
                continue
        rows.append([i])
        taken = {(p.c0, p.c1): (p.c0, p.c1) for p in phrases}
    return rows


def _continues(
    row_lines: list[int],
    i: int,
    lines: Sequence[Line],
    placed: list[list[Phrase]],
    ruled_break: bool,
    label_share: float,
    pitch: float,
    em: float,
) -> bool:
    """Whether body line ``i`` continues the row made of ``row_lines``."""
    if ruled_break:
        return False
    line = placed[i]
    cells: dict[int, list[Phrase]] = {}
    for j in row_lines:
        for p in placed[j]:
            cells.setdefault(p.c0, []).append(p)
    mine = {p.c0: p for p in line}
    # Two values never share a cell.
    for c, phrase in mine.items():
        if c in cells and (phrase.numeric or any(p.numeric for p in cells[c])):
            return False
    row_has_values = any(p.numeric for ps in cells.values() for p in ps if p.c0 > 0)
    line_values = [p for p in line if p.numeric and p.c0 > 0]
    label = mine.get(0)
    first_label = cells.get(0, [None])[0] if cells.get(0) else None
    last_label = cells.get(0, [None])[-1] if cells.get(0) else None
    gap = lines[i].top - lines[row_lines[-1]].bottom
    if label is not None and last_label is not None:
        wrapped = _starts_lower(label.text) or bool(_CONNECTOR.search(last_label.text))
        if wrapped and (not row_has_values or not line_values):
            return True
        return label.text.startswith("(") and not line_values and gap < 0.6 * em
    if label is None and first_label is not None and label_share >= 0.8:
        # Text under a row's cells with its label cell empty.
        return not line_values and all(not p.numeric for p in line)
    if label is None and first_label is None and cells and not line_values:
        return gap < 0.5 * em and all(not p.numeric for p in line)
    return False


def _ends_with_rule(
    a: Line, b: Line, hrules: Sequence[Rule], em: float, x0: float, x1: float
) -> bool:
    for rule in hrules:
        if a.bottom - 0.3 * em <= rule.top <= b.top + 0.3 * em and min(rule.x1, x1) - max(
            rule.x0, x0
        ) > 0.3 * (x1 - x0):
            return True
    return False


def _levels(indents: dict[int, float], em: float) -> dict[int, int]:
    """Each row's indentation level: its label's left edge among the distinct indents."""
    if not indents:
        return {}
    values = sorted(set(round(v, 1) for v in indents.values()))
    clusters: list[float] = []
    for v in values:
        if not clusters or v - clusters[-1] > 0.6 * em:
            clusters.append(v)
    return {r: max(0, bisect.bisect_right(clusters, x + 0.6 * em) - 1) for r, x in indents.items()}


def read_structure(
    words: Sequence[Word],
    rules: Sequence[Rule],
    box: Box,
    page: int,
    *,
    text_only: bool = False,
    find_title: bool = True,
) -> Table | None:
    """The table in ``box`` made of these words and rules, or None without two columns."""
    pieces, leaders = strip_leaders(words)
    if not pieces:
        return None
    em = _em(pieces)
    hrules = [] if text_only else _merge_horizontal([r for r in rules if r.horizontal])
    vrules = [] if text_only else [r for r in rules if not r.horizontal]
    lines = group_lines(pieces, em)
    for line in lines:
        _join_numbers(line, em)
        make_phrases(line, em, vrules)
    title_lines, notes_lines = _title_and_notes(lines, em) if find_title else ([], [])
    body_lines = lines[len(title_lines) : len(lines) - len(notes_lines)]
    if not body_lines:
        body_lines, title_lines, notes_lines = lines, [], []
    lines = body_lines
    bounds, ruled = column_separators(lines, vrules, em, box)
    n_cols = len(bounds) + 1
    header_end = _header_end(lines, bounds, hrules, box, em)
    placed = [
        _assign_columns(line, bounds, em, header=i < header_end) for i, line in enumerate(lines)
    ]
    for i, phrases in enumerate(placed):
        for p in phrases:
            p.line = i
    # Rows.
    rows: list[_Row] = []
    if header_end:
        for group in _group_header_rows(lines[:header_end], placed[:header_end], hrules, em):
            rows.append(_Row(group, header=True))
    body = list(range(header_end, len(lines)))
    data = [i for i in body if len(placed[i]) >= 2]
    label_share = (
        sum(1 for i in data if any(p.c0 == 0 for p in placed[i])) / len(data) if data else 0.0
    )
    gaps = [lines[b].top - lines[a].bottom for a, b in zip(body, body[1:], strict=False)]
    pitch = statistics.median(gaps) if gaps else em
    x_lo = min(line.x0 for line in lines)
    x_hi = max(line.x1 for line in lines)
    for i in body:
        if rows and not rows[-1].header:
            ruled_break = _ends_with_rule(
                lines[rows[-1].lines[-1]], lines[i], hrules, em, x_lo, x_hi
            )
            if _continues(rows[-1].lines, i, lines, placed, ruled_break, label_share, pitch, em):
                rows[-1].lines.append(i)
                continue
        rows.append(_Row([i]))
    header_rows = sum(1 for r in rows if r.header)
    draft = Draft(len(rows), n_cols)
    for r, row in enumerate(rows):
        for i in row.lines:
            for phrase in placed[i]:
                draft.put(r, phrase.c0, phrase)
                if phrase.c1 > phrase.c0:
                    existing = draft.spans.get((r, phrase.c0), (1, 1))
                    draft.spans[(r, phrase.c0)] = (1, max(existing[1], phrase.c1 - phrase.c0 + 1))
        if len(row.lines) > 1 and not row.header:
            for rr, c in list(draft.text):
                if rr == r:
                    draft.flag(r, c, FLAG_JOINED_LINES)
        if not row.header:
            label = next((p for i in row.lines for p in placed[i] if p.c0 == 0), None)
            if label is not None:
                draft.indent[r] = label.x0
    # Header spans: clear overlaps, then rules and centring.
    _settle_spans(draft)
    _rule_spans(draft, rows, lines, vrules, bounds, box, header_rows)
    _centred_parents(draft, rows, placed, bounds, header_rows)
    _headers_reach_up(draft, header_rows)
    _row_parents(draft, header_rows)
    # Numbers near a boundary.
    edges = [box[0] - 1e6, *bounds, box[2] + 1e6]
    for r, row in enumerate(rows):
        for i in row.lines:
            for p in placed[i]:
                margin = min(p.x0 - edges[p.c0], edges[p.c0 + 1] - p.x1)
                if p.numeric and p.c0 == p.c1 and margin < 0.3 * em:
                    draft.flag(r, p.c0, FLAG_NEAR_BOUNDARY)
                if any(
                    w.confidence is not None and w.confidence < 0.6
                    for piece in p.pieces
                    for w in piece.words
                ):
                    draft.flag(r, p.c0, FLAG_LOW_CONFIDENCE)
    draft = _drop_empty_columns(draft)
    header_cols = _count_label_columns(draft, header_rows)
    levels = _levels(draft.indent, em)
    cells = []
    row_top = [min(lines[i].top for i in row.lines) for row in rows]
    row_bottom = [max(lines[i].bottom for i in row.lines) for row in rows]
    col_edges = [min(line.x0 for line in lines)] + list(bounds) + [max(line.x1 for line in lines)]
    for r in range(draft.n_rows):
        for c in range(draft.n_cols):
            if (r, c) in draft.covered:
                continue
            rowspan, colspan = draft.spans.get((r, c), (1, 1))
            flags = set(draft.flags.get((r, c), set()))
            if (rowspan > 1 or colspan > 1) and not _span_ruled(r, c, rowspan, colspan, draft):
                flags.add(FLAG_INFERRED_SPAN)
            box_ = draft.boxes.get((r, c))
            bbox = tuple(box_) if box_ else None
            cells.append(
                Cell(r, c, rowspan, colspan, draft.text.get((r, c), ""), bbox, tuple(sorted(flags)))  # type: ignore[arg-type]
            )
    del col_edges, row_top, row_bottom
    if draft.n_cols < 2 or draft.n_rows < 1:
        return None
    table = Table(
        page=page,
        bbox=box,
        rows=draft.n_rows,
        cols=draft.n_cols,
        cells=tuple(cells),
        header_rows=header_rows,
        header_cols=header_cols,
        title=" ".join(line.text for line in title_lines),
        notes=" ".join(line.text for line in notes_lines),
        strategy=STRATEGY_LINES if ruled and len(ruled) >= len(bounds) else STRATEGY_TEXT,
        row_levels=tuple(levels.get(r, 0) for r in range(draft.n_rows)),
    )
    check_nothing_dropped(words, table, leaders)
    return table


def _span_ruled(r: int, c: int, rowspan: int, colspan: int, draft: Draft) -> bool:
    return (r, c) in getattr(draft, "ruled_spans", set())


def _settle_spans(draft: Draft) -> None:
    """Spans that would overlap text or another span are cut short."""
    for (r, c), (rowspan, colspan) in sorted(draft.spans.items()):
        if (r, c) in draft.covered:
            continue
        width = 1
        while (
            width < colspan
            and not draft.text.get((r, c + width))
            and (r, c + width) not in draft.covered
        ):
            width += 1
        draft.spans[(r, c)] = (rowspan, width)
        for cc in range(c + 1, c + width):
            draft.covered.add((r, cc))
    for key in [k for k, v in draft.spans.items() if v == (1, 1)]:
        del draft.spans[key]


def _rule_spans(
    draft: Draft,
    rows: list[_Row],
    lines: Sequence[Line],
    vrules: Sequence[Rule],
    bounds: Sequence[float],
    box: Box,
    header_rows: int,
) -> None:
    """A header cell between two vertical rules spans the columns between them."""
    ruled_spans: set[tuple[int, int]] = set()
    if not vrules:
        draft.ruled_spans = ruled_spans  # type: ignore[attr-defined]
        return
    merged = _merge_vertical(vrules)
    for r in range(header_rows):
        top = min(lines[i].top for i in rows[r].lines)
        bottom = max(lines[i].bottom for i in rows[r].lines)
        middle = (top + bottom) / 2
        xs = sorted(rule.x0 for rule in merged if rule.top - 1 <= middle <= rule.bottom + 1)
        if len(xs) < 2:
            continue
        for c in range(draft.n_cols):
            if (r, c) in draft.covered or not draft.text.get((r, c)):
                continue
            cell_box = draft.boxes.get((r, c))
            if cell_box is None:
                continue
            left = max((x for x in xs if x <= cell_box[0] + 0.5), default=None)
            right = min((x for x in xs if x >= cell_box[2] - 0.5), default=None)
            if left is None or right is None:
                continue
            c0 = _column_of(left + 0.5, bounds)
            c1 = _column_of(right - 0.5, bounds)
            if c0 > c or c1 < c:
                continue
            rowspan, colspan = draft.spans.get((r, c), (1, 1))
            if c0 < c or c1 > c + colspan - 1:
                targets = [(r, k) for k in range(c0, c1 + 1) if k != c]
                if any(draft.text.get(t) or t in draft.covered for t in targets):
                    continue
                text = draft.text.pop((r, c))
                flags = draft.flags.pop((r, c), set())
                box_ = draft.boxes.pop((r, c))
                draft.spans.pop((r, c), None)
                draft.text[(r, c0)] = text
                draft.boxes[(r, c0)] = box_
                if flags:
                    draft.flags[(r, c0)] = flags
                draft.span(r, c0, rowspan, c1 - c0 + 1)
                ruled_spans.add((r, c0))
            elif colspan > 1:
                ruled_spans.add((r, c))
    draft.ruled_spans = ruled_spans  # type: ignore[attr-defined]


def _centred_parents(
    draft: Draft,
    rows: list[_Row],
    placed: list[list[Phrase]],
    bounds: Sequence[float],
    header_rows: int,
) -> None:
    """A header label centred over empty cells of its row, with labels below them, spans
    them."""
    if header_rows < 2:
        return
    centres: dict[tuple[int, int], float] = {}
    for r in range(header_rows):
        for i in rows[r].lines:
            for p in placed[i]:
                centres.setdefault((r, p.c0), (p.x0 + p.x1) / 2)
    lo = min(p.x0 for ps in placed for p in ps)
    hi = max(p.x1 for ps in placed for p in ps)
    edges = [lo, *bounds, hi]
    n = draft.n_cols
    for r in range(header_rows - 1):
        for c in range(n):
            if not draft.text.get((r, c)) or (r, c) in draft.covered:
                continue
            rowspan, colspan = draft.spans.get((r, c), (1, 1))
            first, last = c, c + colspan - 1
            centre = centres.get((r, c), (edges[first] + edges[last + 1]) / 2)
            moved = False
            while first > 0 and last < n - 1:
                left, right = (r, first - 1), (r, last + 1)
                if draft.filled(*left) or draft.filled(*right):
                    break
                below = [(r + 1, first - 1), (r + 1, last + 1)]
                if not all(draft.filled(*b) for b in below):
                    break
                if abs((edges[first - 1] + edges[last + 2]) / 2 - centre) > 0.25 * (
                    edges[last + 2] - edges[first - 1]
                ):
                    break
                first, last = first - 1, last + 1
                moved = True
            # One side only: a label over two columns sits over their shared boundary.
            if not moved and first == last:
                for side in (-1, 1):
                    k = c + side
                    if not (0 <= k < n) or draft.filled(r, k):
                        continue
                    if not (draft.filled(r + 1, k) and draft.filled(r + 1, c)):
                        continue
                    boundary = edges[max(c, k)]
                    if abs(centre - boundary) <= 0.15 * (edges[max(c, k) + 1] - edges[min(c, k)]):
                        first, last = min(c, k), max(c, k)
                        moved = True
                        break
            if moved:
                text = draft.text.pop((r, c))
                flags = draft.flags.pop((r, c), set())
                box_ = draft.boxes.pop((r, c), None)
                draft.spans.pop((r, c), None)
                draft.text[(r, first)] = text
                if box_:
                    draft.boxes[(r, first)] = box_
                if flags:
                    draft.flags[(r, first)] = flags
                draft.span(r, first, rowspan, last - first + 1)


def _headers_reach_up(draft: Draft, header_rows: int) -> None:
    """A header label with nothing above it reaches up to the first header row."""
    for c in range(draft.n_cols):
        for r in range(1, header_rows):
            if not draft.text.get((r, c)) or (r, c) in draft.covered:
                continue
            rowspan, colspan = draft.spans.get((r, c), (1, 1))
            above = [(k, x) for k in range(r) for x in range(c, c + colspan)]
            if any(draft.filled(k, x) for k, x in above):
                break
            text = draft.text.pop((r, c))
            box_ = draft.boxes.pop((r, c), None)
            flags = draft.flags.pop((r, c), set())
            draft.spans.pop((r, c), None)
            draft.text[(0, c)] = text
            if box_:
                draft.boxes[(0, c)] = box_
            if flags:
                draft.flags[(0, c)] = flags
            for k, x in above:
                draft.covered.discard((k, x))
            draft.span(0, c, r + rowspan, colspan)
            break


def _row_parents(draft: Draft, header_rows: int) -> None:
    """In a table with two label columns, a label with blank label cells below it (beside
    labels of the next column) covers those rows."""
    n_rows, n_cols = draft.n_rows, draft.n_cols
    if n_cols < 3:
        return
    body = range(header_rows, n_rows)

    def label_column(c: int) -> bool:
        texts = [draft.text.get((r, c), "") for r in body if draft.text.get((r, c))]
        return bool(texts) and not any(is_value(t) for t in texts)

    if not (label_column(0) and label_column(1)):
        return
    r = header_rows
    while r < n_rows:
        if not draft.text.get((r, 0)) or (r, 0) in draft.covered:
            r += 1
            continue
        end = r + 1
        while end < n_rows and not draft.filled(end, 0) and draft.text.get((end, 1)):
            end += 1
        if end - r > 1:
            draft.span(r, 0, end - r, 1)
        r = end


def _drop_empty_columns(draft: Draft) -> Draft:
    """Columns where no cell starts are folded into their left neighbour."""
    used = {c for (r, c), t in draft.text.items() if t}
    keep = [c for c in range(draft.n_cols) if c in used]
    if len(keep) == draft.n_cols or not keep:
        return draft
    index = {c: i for i, c in enumerate(keep)}

    def new_col(c: int) -> int:
        return max([index[k] for k in keep if k <= c], default=0)

    out = Draft(draft.n_rows, len(keep))
    for (r, c), text in draft.text.items():
        out.text[(r, new_col(c))] = text
    for (r, c), (rowspan, colspan) in draft.spans.items():
        if (r, c) in draft.text:
            end = new_col(c + colspan - 1)
            out.span(r, new_col(c), rowspan, end - new_col(c) + 1)
    for key, flags in draft.flags.items():
        out.flags[(key[0], new_col(key[1]))] = flags
    for key, box in draft.boxes.items():
        out.boxes[(key[0], new_col(key[1]))] = box
    out.indent = draft.indent
    out.ruled_spans = {(r, new_col(c)) for r, c in getattr(draft, "ruled_spans", set())}  # type: ignore[attr-defined]
    for (r, c), (rowspan, colspan) in list(out.spans.items()):
        if rowspan == 1 and colspan == 1:
            del out.spans[(r, c)]
    return out


def _count_label_columns(draft: Draft, header_rows: int) -> int:
    n = 0
    for c in range(draft.n_cols - 1):
        texts = [draft.text.get((r, c), "") for r in range(header_rows, draft.n_rows)]
        texts = [t for t in texts if t]
        if texts and sum(is_value(t) for t in texts) * 2 < len(texts):
            n += 1
        else:
            break
    return max(1, n)


# --- Title and notes --------------------------------------------------------------------------


def _title_and_notes(lines: Sequence[Line], em: float) -> tuple[list[Line], list[Line]]:
    """Caption lines at the top of the region and note lines at its bottom."""
    title: list[Line] = []
    i = 0
    if lines and len(lines[0].phrases) == 1 and _CAPTION.match(lines[0].text):
        title.append(lines[0])
        i = 1
        while (
            i < len(lines) - 2
            and len(lines[i].phrases) == 1
            and (
                _UNITS.match(lines[i].text)
                or lines[i].text.startswith(("[", "("))
                or (title[-1].text.startswith("[") and "]" not in title[-1].text)
            )
        ):
            title.append(lines[i])
            i += 1
    notes: list[Line] = []
    j = len(lines) - 1
    start = None
    while j > i + 1:
        line = lines[j]
        if len(line.phrases) == 1 and _NOTE_START.match(line.text):
            start = j
        elif len(line.phrases) > 2:
            break
        j -= 1
    if start is not None:
        notes = list(lines[start:])
        # Only when every note line reads as prose or a note, not as a table row.
        if any(len(n.phrases) > 2 for n in notes):
            notes = []
    return title, notes


# --- The invariant ----------------------------------------------------------------------------


class DroppedText(AssertionError):
    """Text of the region that no cell, title or notes holds: a bug in the rules."""


def _letters(text: str) -> Counter[str]:
    return Counter(ch for ch in unicodedata.normalize("NFKC", text) if not ch.isspace())


def check_nothing_dropped(words: Sequence[Word], table: Table, leaders: Sequence[str]) -> None:
    """Every character of the region's words is in a cell, the title or the notes; leader
    dots are the only characters left out."""
    wanted = _letters("".join(w.text for w in words))
    wanted.subtract(_letters("".join(leaders)))
    found = _letters("".join(c.text for c in table.cells) + table.title + table.notes)
    missing = +(wanted - found)
    if missing:
        raise DroppedText(
            f"characters dropped from the region: {''.join(sorted(missing.elements()))!r}"
        )
