"""One table's structure from the words and ruling lines of its region.

The rules read a region the way a person reads a table, from evidence on the page; every
distance is in ems (the region's median text height), so they hold at any font size and for
OCR words as for a text layer.

- **Decoration.** Leader dots ("Burglary . . . . .") are dropped (a lone dot only on the
  pitch of the table's other leaders); a superscript footnote marker stays with the word
  before it; a decimal or a thousands group split from its number ("11,062" ".6", "100"
  "000") is joined back.
- **Lines and phrases.** Words sharing a baseline band are a line; words of a line closer than a
  word space (and not two numbers) are a phrase, the text of one cell.
- **Rules that draw every cell** (enclosing the text, cutting none of it, not grouping
  several rows in one cell) give the grid outright; a missing rule is a merged cell.
- Otherwise, **columns** are the gaps that the body's lines of several phrases leave open,
  allowing a few lines to cross them, and the vertical rules that separate text; a boundary
  sits where the fewest header labels are, and a column where no body phrase starts is none.
- **Header and body.** The body starts at the first line that holds values (numbers, or the
  signs for none; not a line of years) beside a label, or below the first rule across the
  table under the top lines; a lone label right above the values is a row-group label.
- **Header rows.** Header phrases stacked in the same columns (closer than 0.4 em, no rule
  between) are one cell; a phrase spans the columns between vertical rules around it, over
  a rule drawn under it, or that it is centred over (split labels below it); the header rows
  are the fewest cuts between stacked cells; a cell reaches up and down where its columns
  are free.
- **Body rows.** Each line is a row, unless it continues the row above: a wrapped label
  (starting in lower case, or after "and", a comma or a hyphen), a label line without values
  whose values are on the next line, or text in a row's cells with the row's label cell empty.
  Where two rules or more cross the body, the lines between two rules are one row; two
  numbers never share a cell.
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
from dataclasses import dataclass, field, replace

from hctqa.core.extraction.layout import Box, Rule, Word
from hctqa.core.extraction.table import (
    FLAG_INFERRED_SPAN,
    FLAG_JOINED_LINES,
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
# "Table 3.", "TABLE A1", "Figure 2:"; not "GraphCodeBERT" nor "Tablet".
_CAPTION = re.compile(r"^(?i:table|tab|figure|fig|chart|exhibit|annex|appendix)\b\.?\s*[\dA-Z]")
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
    """Pieces without leader dots, and the leader texts dropped.

    Dots that follow a label in its line and lead away from it are a leader: three or more
    glued to the label ("Total......"), two or more spaced apart, or a lone dot standing a
    little apart before a wide gap. A period glued to the label's last word before a leader
    ("Robbery. . . .") goes with the leader unless that word is a short abbreviation
    ("etc."). Dots alone in a cell (".." for "not available") are kept.
    """
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
    # Each dot-only run after a label: (line, run index, runs, label, sure).
    found: list[tuple[list[Piece], int, list[list[Piece]], Piece | None, bool]] = []
    for line in _rough_lines(pieces):
        line.sort(key=lambda p: p.x0)
        runs: list[list[Piece]] = []  # text pieces one by one, dot-only pieces in runs
        for piece in line:
            dotty = bool(_DOTS.match(piece.text))
            if dotty and runs and _DOTS.match(runs[-1][-1].text):
                runs[-1].append(piece)
            else:
                runs.append([piece])
        tall = max(p.height for p in line)
        for k, run in enumerate(runs):
            label = None
            sure = False
            if _DOTS.match(run[0].text) and k > 0 and not _DOTS.match(runs[k - 1][-1].text):
                # The label before the dots, past a footnote marker ("property ¹ . . .").
                before = [r[-1] for r in runs[:k] if r[-1].height >= 0.7 * tall]
                if before and not _DOTS.match(before[-1].text) and not is_value(before[-1].text):
                    label = before[-1]  # dots after a value are a value ("..")
            if label is not None:
                size = max(1e-6, label.height)
                dots = sum(
                    q.text.count(".") + q.text.count("·") + 3 * q.text.count("…") for q in run
                )
                after = runs[k + 1][0].x0 - run[-1].x1 if k + 1 < len(runs) else float("inf")
                distance = run[0].x0 - runs[k - 1][-1].x1
                # A leader starts right after its label and leads away from it to a gap;
                # dots far from the label are a value, dots before more words are text.
                if not (distance <= 1.5 * size and after >= 0.8 * size):
                    label = None
                else:
                    sure = dots >= 3
            found.append((line, k, runs, label, sure))
    # One or two dots are a leader only on the pitch of the table's other leaders (the end
    # of a leader that the label nearly filled), never a lone period after a word.
    pitch = {round(q.x0 * 2) for _l, k, runs, label, sure in found if sure for q in runs[k]}
    keep: list[Piece] = []
    for _line, k, runs, label, sure in found:
        run = runs[k]
        aligned = any(round(q.x0 * 2) + d in pitch for q in run for d in (-2, -1, 0, 1, 2))
        if label is None or not (sure or aligned):
            keep.extend(run)
            continue
        dropped.extend(q.text for q in run)
        glued = re.fullmatch(r"(.*?[^\W\d_]{4,})\.", label.text)
        if glued and label in keep:
            index = keep.index(label)
            share = len(glued.group(1)) / len(label.text)
            keep[index] = replace(
                label, text=glued.group(1), x1=label.x0 + (label.x1 - label.x0) * share
            )
            dropped.append(".")
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
    right after a word stays with it. New pieces: the line's own are left as they were."""
    merged: list[Piece] = []
    for piece in line.pieces:
        piece = replace(piece, words=list(piece.words))
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
            # A footnote marker stays with the word before it, unless that word ends a
            # sentence (then the marker starts the next note).
            if (
                piece.small
                and gap <= 0.6 * em
                and len(piece.text) <= 3
                and not last.small
                and not last.text.endswith((".", ";", ":"))
            ):
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
            # Two values are never one phrase: narrow numeric columns stand closer than a
            # word space; the columns' gaps decide.
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
    column_lines: Sequence[Line],
    lines: Sequence[Line],
    vrules: Sequence[Rule],
    em: float,
    box: Box,
    header_lines: Sequence[Line] = (),
) -> tuple[list[float], set[float]]:
    """The x of each column boundary inside the region (left to right), and those that are
    ruling lines. Gaps are read in ``column_lines`` (the body's lines of several phrases);
    rules must not cut through the text of ``lines``."""
    multi = list(column_lines)
    lo = min(p.x0 for line in lines for p in line.phrases)
    hi = max(p.x1 for line in lines for p in line.phrases)
    need = 2 if len(multi) >= 3 else 1
    intervals = _coverage(multi, lo, hi)
    separators: list[float] = []
    corridor: list[tuple[float, float, int, int]] = []

    gaps: list[tuple[float, float]] = []  # each separator's open corridor

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
            gaps.append((corridor[0][0], corridor[-1][1]))
        corridor.clear()

    for a, b, crossing, supporting in intervals:
        if supporting >= need and crossing <= 0.12 * (crossing + supporting):
            corridor.append((a, b, crossing, supporting))
        else:
            close()
    close()
    # Within its gap, a boundary keeps clear of header labels that only reach into it: it
    # goes where the fewest header lines have text (a parent spanning the gap is expected).
    for k, (a, b) in enumerate(gaps):
        covers = [
            [(p.x0, p.x1) for p in line.phrases if p.x0 < b and p.x1 > a] for line in header_lines
        ]
        covers = [c for c in covers if c]
        if not covers:
            continue
        cuts = sorted({a, b, *(v for c in covers for x0, x1 in c for v in (x0, x1) if a < v < b)})
        pieces_ = [
            (lo_, hi_, sum(any(x0 < (lo_ + hi_) / 2 < x1 for x0, x1 in c) for c in covers))
            for lo_, hi_ in zip(cuts, cuts[1:], strict=False)
            if hi_ > lo_
        ]
        least = min(n for _lo, _hi, n in pieces_)
        runs_: list[list[float]] = []
        for lo_, hi_, n in pieces_:
            if n != least:
                runs_.append([])
            elif runs_ and runs_[-1] and runs_[-1][1] == lo_:
                runs_[-1][1] = hi_
            else:
                runs_.append([lo_, hi_])
        best_run = max((r for r in runs_ if r), key=lambda r: r[1] - r[0])
        if best_run[1] - best_run[0] >= 0.1 * em:
            separators[k] = (best_run[0] + best_run[1]) / 2
    # Vertical rules inside the region that separate text on both sides.
    ruled: set[float] = set()
    height = box[3] - box[1]
    for rule in vrules:
        if not (lo + 0.2 * em < rule.x0 < hi - 0.2 * em):
            continue
        crossed = [
            line for line in lines if rule.top - 0.2 * em <= line.middle <= rule.bottom + 0.2 * em
        ]
        if not crossed:
            continue
        cut = [line for line in crossed if any(p.x0 < rule.x0 < p.x1 for p in line.phrases)]
        long_enough = (rule.bottom - rule.top) >= 0.3 * height or len(crossed) >= 2
        if cut and len(cut) > 0.12 * len(lines):
            continue
        if not long_enough and not any(
            any(p.x1 <= rule.x0 for p in line.phrases)
            and any(p.x0 >= rule.x0 for p in line.phrases)
            for line in crossed
        ):
            continue
        # The rule stands for the text gap it lies in.
        for k in range(len(separators) - 1, -1, -1):
            a, b = gaps[k]
            if a - 0.5 * em <= rule.x0 <= b + 0.5 * em or abs(separators[k] - rule.x0) <= em:
                del separators[k], gaps[k]
        separators.append(rule.x0)
        gaps.append((rule.x0, rule.x0))
        ruled.add(rule.x0)
    # A column where no phrase of the body starts (the ragged ends of long labels) is no
    # column: the weaker of its two boundaries goes (a rule before a gap, a wide gap
    # before a narrow one).
    strength = {x: (x in ruled, g[1] - g[0]) for x, g in zip(separators, gaps, strict=True)}
    separators = sorted(set(separators))
    starts = sorted(p.x0 for line in multi for p in line.phrases)
    changed = True
    while changed and len(separators) > 1:
        changed = False
        for left, right in zip(separators, separators[1:], strict=False):
            k = bisect.bisect_right(starts, left)
            if k < len(starts) and starts[k] < right:
                continue
            separators.remove(min((left, right), key=lambda x: strength.get(x, (False, 0.0))))
            changed = True
            break
    return separators, {x for x in ruled if x in separators}


def merge_vertical(vrules: Sequence[Rule], tolerance: float = 1.5) -> list[Rule]:
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


def merge_horizontal(hrules: Sequence[Rule], tolerance: float = 1.5) -> list[Rule]:
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
class Draft:
    """A table being read: texts by grid position, spans, flags and boxes."""

    n_rows: int
    n_cols: int
    text: dict[tuple[int, int], str] = field(default_factory=dict)
    spans: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    covered: set[tuple[int, int]] = field(default_factory=set)
    flags: dict[tuple[int, int], set[str]] = field(default_factory=dict)
    boxes: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    indent: dict[int, float] = field(default_factory=dict)
    ruled_spans: set[tuple[int, int]] = field(default_factory=set)
    owner: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

    def filled(self, r: int, c: int) -> bool:
        return bool(self.text.get((r, c))) or (r, c) in self.covered

    def put(self, r: int, c: int, phrase: Phrase) -> None:
        self.put_text(r, c, phrase.text, (phrase.x0, phrase.top, phrase.x1, phrase.bottom))

    def put_text(self, r: int, c: int, text: str, box: Box) -> None:
        r, c = self.owner.get((r, c), (r, c))  # text under a span belongs to its cell
        old = self.text.get((r, c), "")
        self.text[(r, c)] = f"{old} {text}".strip()
        mine = self.boxes.get((r, c))
        if mine is None:
            self.boxes[(r, c)] = list(box)
        else:
            mine[0], mine[1] = min(mine[0], box[0]), min(mine[1], box[1])
            mine[2], mine[3] = max(mine[2], box[2]), max(mine[3], box[3])

    def flag(self, r: int, c: int, name: str) -> None:
        self.flags.setdefault((r, c), set()).add(name)

    def span(self, r: int, c: int, rowspan: int, colspan: int) -> None:
        if (rowspan, colspan) != (1, 1):
            self.spans[(r, c)] = (rowspan, colspan)
        for rr in range(r, r + rowspan):
            for cc in range(c, c + colspan):
                if (rr, cc) != (r, c):
                    self.covered.add((rr, cc))
                    self.owner[(rr, cc)] = (r, c)
                    # Text already there joins the spanning cell.
                    moved = self.text.pop((rr, cc), "")
                    if moved:
                        self.text[(r, c)] = f"{self.text.get((r, c), '')} {moved}".strip()


_YEAR = re.compile(r"^(1[89]|20)\d\d(/\d\d)?[*†‡¹²³]*$")


def _is_data_line(line: Line) -> bool:
    """Values beside a label: at least one phrase after the first is a value, and values are
    at least half of them. A line of years alone is a header."""
    others = line.phrases[1:]
    values = [p for p in others if p.numeric]
    if values and all(_YEAR.match(p.text) for p in values):
        return False
    return bool(values) and len(values) * 2 >= len(others)


def _full_rules(hrules: Sequence[Rule], x0: float, x1: float, share: float) -> list[Rule]:
    width = max(1e-6, x1 - x0)
    return [r for r in hrules if min(r.x1, x1) - max(r.x0, x0) >= share * width]


def _header_end(lines: Sequence[Line], hrules: Sequence[Rule], em: float) -> int:
    """How many lines at the top are column headers: those above the first line of values
    (when it comes in the first half), else those above the first rule across the table
    under the top lines, else the first line."""
    if len(lines) < 2:
        return 0
    x0 = min(line.x0 for line in lines)
    x1 = max(line.x1 for line in lines)
    first_data = next((i for i, line in enumerate(lines) if _is_data_line(line)), None)
    ruled_end = None
    for rule in sorted(_full_rules(hrules, x0, x1, 0.6), key=lambda r: r.top):
        above = sum(1 for line in lines if line.bottom <= rule.top + 0.3 * em)
        if 0 < above < len(lines) and above <= max(1, len(lines) // 2):
            ruled_end = above
            break
    if first_data is not None and 0 < first_data <= max(1, len(lines) // 2 + 1):
        if ruled_end is not None and ruled_end < first_data:
            # A rule within the header (under a spanning label) does not end it.
            between = lines[ruled_end:first_data]
            if any(_is_data_line(line) for line in between):
                return ruled_end
        # A label alone at the left edge right above the values is a row-group label.
        end = first_data
        while (
            end > 1
            and len(lines[end - 1].phrases) == 1
            and lines[end - 1].x0 <= x0 + 0.5 * em
            and len(lines[end - 2].phrases) >= 2
        ):
            end -= 1
        return end
    if ruled_end is not None:
        return ruled_end
    return 1


def _assign_columns(line: Line, bounds: Sequence[float], em: float, header: bool) -> list[Phrase]:
    """Each phrase's columns. A body phrase over a boundary that falls between two of its
    words is split there, otherwise it sits in the column holding most of it; a header
    phrase over a boundary spans the columns."""
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
            # A header reaching a little over a boundary (a centred or right-aligned label
            # a shade wider than its column's values) stays in its column.
            inset = 0.5 * em if header else 0.05 * em
            inset = min(inset, 0.25 * (part.x1 - part.x0))
            c0 = _column_of(part.x0 + inset, bounds)
            c1 = max(c0, _column_of(part.x1 - inset, bounds))
            if c1 > c0 and not header:
                edges = [-1e9, *bounds, 1e9]
                c0 = c1 = max(
                    range(c0, c1 + 1),
                    key=lambda c: min(part.x1, edges[c + 1]) - max(part.x0, edges[c]),
                )
            part.c0, part.c1 = c0, c1
            if header and out and (out[-1].c0, out[-1].c1) == (c0, c1):
                out[-1].pieces += part.pieces  # one cell's words, however far apart
                continue
            out.append(part)
    return out


# --- Header -----------------------------------------------------------------------------------


@dataclass
class _Block:
    """A header cell: phrases stacked in the same columns."""

    phrases: list[Phrase]
    c0: int
    c1: int
    ruled: bool = False

    @property
    def top(self) -> float:
        return min(p.top for p in self.phrases)

    @property
    def bottom(self) -> float:
        return max(p.bottom for p in self.phrases)

    @property
    def x0(self) -> float:
        return min(p.x0 for p in self.phrases)

    @property
    def x1(self) -> float:
        return max(p.x1 for p in self.phrases)

    @property
    def text(self) -> str:
        ordered = sorted(self.phrases, key=lambda p: (round(p.top / 2), p.x0))
        return " ".join(p.text for p in ordered)


def _edges(bounds: Sequence[float], lo: float, hi: float) -> list[float]:
    return [
        min(lo, bounds[0] - 1) if bounds else lo,
        *bounds,
        max(hi, bounds[-1] + 1) if bounds else hi,
    ]


def _widen_header(
    placed: list[list[Phrase]],
    lines: Sequence[Line],
    hrules: Sequence[Rule],
    vrules: Sequence[Rule],
    edges: Sequence[float],
    em: float,
) -> dict[int, bool]:
    """Header phrases that stand for several columns span them: between two vertical rules,
    over a rule drawn under them, or centred over labels below. Returns, by ``id`` of the
    phrase, whether a rule says so."""
    n_cols = len(edges) - 1
    ruled: dict[int, bool] = {}

    def free(i: int, phrase: Phrase, c0: int, c1: int) -> bool:
        return not any(q is not phrase and q.c1 >= c0 and q.c0 <= c1 for q in placed[i])

    def columns_within(x0: float, x1: float) -> tuple[int, int] | None:
        inside = [c for c in range(n_cols) if x0 - 0.5 <= (edges[c] + edges[c + 1]) / 2 <= x1 + 0.5]
        return (inside[0], inside[-1]) if inside else None

    for i, phrases in enumerate(placed):
        line = lines[i]
        for phrase in phrases:
            middle = (phrase.top + phrase.bottom) / 2
            # Between vertical rules.
            left = [
                r.x0
                for r in vrules
                if r.top - 1 <= middle <= r.bottom + 1 and r.x0 <= phrase.x0 + 0.5
            ]
            right = [
                r.x0
                for r in vrules
                if r.top - 1 <= middle <= r.bottom + 1 and r.x0 >= phrase.x1 - 0.5
            ]
            if left and right:
                found = columns_within(max(left), min(right))
                if found and found[0] <= phrase.c0 and found[1] >= phrase.c1:
                    if found != (phrase.c0, phrase.c1) and free(i, phrase, *found):
                        phrase.c0, phrase.c1 = found
                    ruled[id(phrase)] = phrase.c1 > phrase.c0
                    if phrase.c1 > phrase.c0:
                        continue
            # Over a rule drawn under it, centred on it.
            below_top = lines[i + 1].top if i + 1 < len(lines) else phrase.bottom + em
            for rule in hrules:
                if not (
                    phrase.bottom - 0.3 * em <= rule.top <= max(below_top, phrase.bottom) + 0.3 * em
                ):
                    continue
                centre = (phrase.x0 + phrase.x1) / 2
                if abs(centre - (rule.x0 + rule.x1) / 2) > 0.2 * (rule.x1 - rule.x0):
                    continue
                found = columns_within(rule.x0, rule.x1)
                if (
                    found
                    and found[0] <= phrase.c0
                    and found[1] >= phrase.c1
                    and found != (phrase.c0, phrase.c1)
                    and free(i, phrase, *found)
                ):
                    phrase.c0, phrase.c1 = found
                    ruled[id(phrase)] = True
                    break
            if ruled.get(id(phrase)):
                continue
            # Centred over labels below it, unless the label right under it in its own
            # column follows as closely as a wrapped line (the first line of a stacked label).
            below = [q for j in range(i + 1, len(placed)) for q in placed[j]]
            if not below or any(
                q.c0 <= phrase.c1
                and q.c1 >= phrase.c0
                and min(q.x1, phrase.x1) > max(q.x0, phrase.x0)
                and 0 <= q.top - phrase.bottom <= 0.25 * em
                for q in below
            ):
                continue
            centre = (phrase.x0 + phrase.x1) / 2
            best = (phrase.c0, phrase.c1)
            best_off = float("inf")
            for c0 in range(0, phrase.c0 + 1):
                for c1 in range(phrase.c1, n_cols):
                    if (c0, c1) == (phrase.c0, phrase.c1):
                        continue
                    # Over the row labels' column only when over the whole width.
                    if c0 == 0 and c1 < n_cols - 1:
                        continue
                    # Centred over its columns, or over its children's labels.
                    children = [q for q in below if q.c0 >= c0 and q.c1 <= c1]
                    spans_ = [(edges[c0], edges[c1 + 1])]
                    if children:
                        spans_.append((min(q.x0 for q in children), max(q.x1 for q in children)))
                    off = min(abs((a + b) / 2 - centre) for a, b in spans_)
                    if not any(
                        abs((a + b) / 2 - centre) <= max(0.6 * em, 0.08 * (b - a))
                        for a, b in spans_
                    ):
                        continue
                    if not free(i, phrase, c0, c1):
                        continue
                    # A parent never cuts through a label below it.
                    if any(q.c0 < c0 <= q.c1 or q.c0 <= c1 < q.c1 for q in below):
                        continue
                    if not all(any(q.c0 <= c <= q.c1 for q in below) for c in range(c0, c1 + 1)):
                        continue
                    # The labels below must be split inside the range (children), not one
                    # label over all of it.
                    if not any(q.c0 >= c0 and q.c1 <= c1 and q.c1 - q.c0 < c1 - c0 for q in below):
                        continue
                    # The best centred range; of two as centred, the wider.
                    if off < best_off - 0.3 * em or (
                        abs(off - best_off) <= 0.3 * em and c1 - c0 > best[1] - best[0]
                    ):
                        best, best_off = (c0, c1), off
            phrase.c0, phrase.c1 = best
    del line
    return ruled


def _rule_between_y(
    a: float, b: float, x0: float, x1: float, hrules: Sequence[Rule], em: float
) -> bool:
    return any(
        a - 0.2 * em <= r.top <= b + 0.2 * em and min(r.x1, x1) - max(r.x0, x0) > 0.5 * em
        for r in hrules
    )


def _header_blocks(
    placed: list[list[Phrase]], hrules: Sequence[Rule], em: float, ruled: dict[int, bool]
) -> list[_Block]:
    """Header phrases stacked into cells: a phrase joins the block right above it in the same
    columns (or one nested in it, when it has no sibling there), unless a rule lies between."""
    blocks: list[_Block] = []
    phrases = sorted((p for ps in placed for p in ps), key=lambda p: (p.top, p.x0))
    siblings = {id(p): ps for ps in placed for p in ps}
    for phrase in phrases:
        target = None
        for block in blocks:
            # Lines of one label are closer than two header rows' labels.
            if phrase.top - block.bottom > 0.4 * em or block.bottom > phrase.top + 0.5 * em:
                continue
            if block.c1 < phrase.c0 or block.c0 > phrase.c1:
                continue
            if _rule_between_y(
                block.bottom,
                phrase.top,
                min(block.x0, phrase.x0),
                max(block.x1, phrase.x1),
                hrules,
                em,
            ):
                continue
            # Nothing else in between in these columns.
            if any(
                other is not block
                and other.c1 >= phrase.c0
                and other.c0 <= phrase.c1
                and block.bottom - 0.3 * em <= other.top
                and other.bottom <= phrase.top + 0.3 * em
                for other in blocks
            ):
                continue
            same = (block.c0, block.c1) == (phrase.c0, phrase.c1)
            nested = False
            if not same:
                wide, narrow_cols, narrow_line = (
                    (block, (phrase.c0, phrase.c1), siblings[id(phrase)])
                    if phrase.c0 >= block.c0 and phrase.c1 <= block.c1
                    else (None, None, None)
                )
                if wide is None and block.c0 >= phrase.c0 and block.c1 <= phrase.c1:
                    wide = phrase  # type: ignore[assignment]
                    narrow_line = [q for q in block.phrases]
                    narrow_cols = (block.c0, block.c1)
                if wide is not None and narrow_cols is not None and narrow_line is not None:
                    lo, hi = (wide.c0, wide.c1)
                    alone = not any(
                        q.c1 >= lo and q.c0 <= hi and (q.c0, q.c1) != narrow_cols
                        for q in narrow_line
                    )
                    centred = (
                        abs((block.x0 + block.x1) / 2 - (phrase.x0 + phrase.x1) / 2) < 1.5 * em
                    )
                    left = abs(block.x0 - phrase.x0) < 0.6 * em
                    nested = alone and (centred or left)
            if same or nested:
                target = block
                break
        if target is None:
            blocks.append(_Block([phrase], phrase.c0, phrase.c1, ruled.get(id(phrase), False)))
        else:
            target.phrases.append(phrase)
            target.c0, target.c1 = min(target.c0, phrase.c0), max(target.c1, phrase.c1)
            target.ruled = target.ruled or ruled.get(id(phrase), False)
    return blocks


def _header_rows(blocks: list[_Block], em: float) -> list[tuple[float, float]]:
    """Header rows as y intervals: between every two blocks stacked in a column lies a row
    boundary, and as few boundaries as can serve them all (each pair's gap holds one)."""
    gaps: list[tuple[float, float]] = []
    for a in blocks:
        for b in blocks:
            if a is b or a.c1 < b.c0 or a.c0 > b.c1:
                continue
            if a.bottom <= b.top + 0.3 * em and a.top < b.top:
                gaps.append((min(a.bottom, b.top), max(a.bottom, b.top)))
    ys: list[float] = []
    for lo, hi in sorted(gaps, key=lambda g: g[1]):
        if not any(lo - 0.05 <= y <= hi + 0.05 for y in ys):
            ys.append(max(lo, hi - 0.1))
    ys.sort()
    top = min(b.top for b in blocks)
    bottom = max(b.bottom for b in blocks)
    bands = [top - 1, *ys, bottom + 1]
    return list(zip(bands, bands[1:], strict=False))


def _place_header(draft: Draft, blocks: list[_Block], rows: list[tuple[float, float]]) -> None:
    n = len(rows)
    placed: list[tuple[_Block, int, int]] = []
    for block in blocks:
        hit = [
            k
            for k, (a, b) in enumerate(rows)
            if min(b, block.bottom) - max(a, block.top)
            > 0.25 * min(b - a, block.bottom - block.top)
        ]
        if not hit:
            middle = (block.top + block.bottom) / 2
            hit = [min(range(n), key=lambda k: abs((rows[k][0] + rows[k][1]) / 2 - middle))]
        placed.append((block, hit[0], hit[-1]))

    def taken(r0: int, r1: int, c0: int, c1: int, me: _Block) -> bool:
        return any(
            other is not me and o0 <= r1 and o1 >= r0 and other.c0 <= c1 and other.c1 >= c0
            for other, o0, o1 in placed
        )

    # Labels reach up to the first header row and down to the last when nothing is there.
    grown = []
    for block, r0, r1 in placed:
        while r0 > 0 and not taken(r0 - 1, r0 - 1, block.c0, block.c1, block):
            r0 -= 1
        while r1 < n - 1 and not taken(r1 + 1, r1 + 1, block.c0, block.c1, block):
            r1 += 1
        grown.append((block, r0, r1))
        placed = [(b, g0, g1) if b is not block else (b, r0, r1) for b, g0, g1 in placed]
    for block, r0, r1 in sorted(grown, key=lambda t: (t[1], t[0].c0)):
        if draft.filled(r0, block.c0):
            draft.put_text(r0, block.c0, block.text, (block.x0, block.top, block.x1, block.bottom))
            continue
        draft.put_text(r0, block.c0, block.text, (block.x0, block.top, block.x1, block.bottom))
        free_cols = block.c1
        # A span never covers text placed before it.
        for c in range(block.c0 + 1, block.c1 + 1):
            if any(draft.filled(r, c) for r in range(r0, r1 + 1)):
                free_cols = c - 1
                break
        draft.span(r0, block.c0, r1 - r0 + 1, free_cols - block.c0 + 1)
        if block.ruled and free_cols > block.c0:
            draft.ruled_spans.add((r0, block.c0))


# --- Body -------------------------------------------------------------------------------------


def _conflict(cells: dict[int, list[Phrase]], line: list[Phrase]) -> bool:
    """Two values would share a cell."""
    return any(p.c0 in cells and (p.numeric or any(q.numeric for q in cells[p.c0])) for p in line)


def _continues(
    cells: dict[int, list[Phrase]],
    line: list[Phrase],
    gap: float,
    label_share: float,
    em: float,
) -> bool:
    """Whether a body line continues the row whose phrases by column are ``cells``."""
    if _conflict(cells, line):
        return False
    mine = {p.c0: p for p in line}
    row_has_values = any(p.numeric for c, ps in cells.items() if c > 0 for p in ps)
    line_values = [p for p in line if p.numeric and p.c0 > 0]
    label = mine.get(0)
    last_label = cells[0][-1] if cells.get(0) else None
    if label is not None and last_label is not None:
        wrapped = _starts_lower(label.text) or bool(_CONNECTOR.search(last_label.text))
        if wrapped and (not row_has_values or not line_values):
            return True
        return label.text.startswith("(") and not line_values and gap < 0.6 * em
    if label is None and last_label is not None and label_share >= 0.8:
        # Text under a row's cells with its label cell empty.
        return not line_values and all(not p.numeric for p in line)
    if label is None and last_label is None and cells and not line_values:
        return gap < 0.5 * em and all(not p.numeric for p in line)
    return False


def _body_rows(
    lines: Sequence[Line],
    placed: list[list[Phrase]],
    body: list[int],
    hrules: Sequence[Rule],
    em: float,
    *,
    rules_only: bool = False,
) -> tuple[list[list[int]], bool]:
    """Body lines grouped into rows, and whether ruling lines drew the rows (with
    ``rules_only``, every line between two rules is one row)."""
    if not body:
        return [], False
    x0 = min(lines[i].x0 for i in body)
    x1 = max(lines[i].x1 for i in body)
    across = _full_rules(hrules, x0, x1, 0.4)
    breaks = set()
    for a, b in zip(body, body[1:], strict=False):
        if any(lines[a].bottom - 0.3 * em <= r.top <= lines[b].top + 0.3 * em for r in across):
            breaks.add(b)
    ruled = len(breaks) >= 2 or rules_only
    data = [i for i in body if len(placed[i]) >= 2]
    label_share = (
        sum(1 for i in data if any(p.c0 == 0 for p in placed[i])) / len(data) if data else 0.0
    )
    rows: list[list[int]] = []
    cells: dict[int, list[Phrase]] = {}
    for i in body:
        if rows and i not in breaks:
            gap = lines[i].top - lines[rows[-1][-1]].bottom
            if rules_only:
                joins = True
            elif ruled:
                joins = not _conflict(cells, placed[i])
            else:
                joins = _continues(cells, placed[i], gap, label_share, em)
            if joins:
                rows[-1].append(i)
                for p in placed[i]:
                    cells.setdefault(p.c0, []).append(p)
                continue
        rows.append([i])
        cells = {}
        for p in placed[i]:
            cells.setdefault(p.c0, []).append(p)
    # Drawn by rules: rules grouped the lines, or a rule stands between every two rows.
    every = bool(rows) and all(row[0] in breaks for row in rows[1:])
    return rows, ruled or (every and len(rows) > 1)


def _levels(indents: dict[int, float], em: float) -> dict[int, int]:
    """Each row's indentation level: how many rows above it are less indented and still
    open (a row closes those indented as much as it or more). Indents within a third of
    an em are the same."""
    levels: dict[int, int] = {}
    open_: list[float] = []
    for r in sorted(indents):
        x = indents[r]
        while open_ and open_[-1] >= x - 0.3 * em:
            open_.pop()
        levels[r] = len(open_)
        open_.append(x)
    return levels


def _cluster(values: Sequence[float], tolerance: float) -> list[float]:
    groups: list[list[float]] = []
    for value in sorted(values):
        if groups and value - groups[-1][-1] <= tolerance:
            groups[-1].append(value)
        else:
            groups.append([value])
    return [statistics.fmean(g) for g in groups]


def _read_by_rules(
    lines: Sequence[Line],
    hrules: Sequence[Rule],
    vrules: Sequence[Rule],
    header_end: int,
    em: float,
) -> tuple[Draft, int] | None:
    """A table whose rules draw every cell: the grid of the rules, a cell merged wherever
    the rule between two grid cells is missing. None unless the rules enclose all the text,
    never cut through it, and leave no two values side by side in one cell (then the rules
    draw only part of the grid)."""
    x0, x1 = min(line.x0 for line in lines), max(line.x1 for line in lines)
    top, bottom = min(line.top for line in lines), max(line.bottom for line in lines)
    # The table's own rules: within its text's reach (not a page's section rules).
    near = 2 * em
    vs = [
        r
        for r in vrules
        if r.bottom - r.top >= em
        and x0 - near <= r.x0 <= x1 + near
        and r.top >= top - near
        and r.bottom <= bottom + near
    ]
    hs = [
        r
        for r in hrules
        if r.x1 - r.x0 >= em
        and top - near <= r.top <= bottom + near
        and r.x0 >= x0 - near
        and r.x1 <= x1 + near
    ]
    # Double rules are one grid line.
    xs = _cluster([r.x0 for r in vs], max(1.5, 0.5 * em))
    ys = _cluster([r.top for r in hs], max(1.5, 0.5 * em))
    if len(xs) < 3 or len(ys) < 3:
        return None
    if not (xs[0] <= x0 + 1 and xs[-1] >= x1 - 1 and ys[0] <= top + 1 and ys[-1] >= bottom - 1):
        return None
    # The frame is the nearest rules around the text, not a neighbour's rules beyond it.
    left, right = max(v for v in xs if v <= x0 + 1), min(v for v in xs if v >= x1 - 1)
    upper, lower = max(v for v in ys if v <= top + 1), min(v for v in ys if v >= bottom - 1)
    xs = [x for x in xs if left <= x <= right]
    ys = [y for y in ys if upper <= y <= lower]
    if len(xs) < 3 or len(ys) < 3:
        return None
    n_rows, n_cols = len(ys) - 1, len(xs) - 1

    def vertical(k: int, r: int) -> bool:
        a, b = ys[r], ys[r + 1]
        cover = sum(
            max(0.0, min(b, rule.bottom) - max(a, rule.top))
            for rule in vs
            if abs(rule.x0 - xs[k]) <= max(1.5, 0.5 * em)
        )
        return cover >= 0.5 * (b - a)

    def horizontal(k: int, c: int) -> bool:
        a, b = xs[c], xs[c + 1]
        cover = sum(
            max(0.0, min(b, rule.x1) - max(a, rule.x0))
            for rule in hs
            if abs(rule.top - ys[k]) <= max(1.5, 0.5 * em)
        )
        return cover >= 0.5 * (b - a)

    parent = {(r, c): (r, c) for r in range(n_rows) for c in range(n_cols)}

    def find(key: tuple[int, int]) -> tuple[int, int]:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for r in range(n_rows):
        for c in range(n_cols):
            if c + 1 < n_cols and not vertical(c + 1, r):
                parent[find((r, c))] = find((r, c + 1))
            if r + 1 < n_rows and not horizontal(r + 1, c):
                parent[find((r, c))] = find((r + 1, c))
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for key in parent:
        groups.setdefault(find(key), []).append(key)
    anchor: dict[tuple[int, int], tuple[int, int, int, int]] = {}
    for members in groups.values():
        r0, r1 = min(r for r, _ in members), max(r for r, _ in members)
        c0, c1 = min(c for _, c in members), max(c for _, c in members)
        if len(members) != (r1 - r0 + 1) * (c1 - c0 + 1):
            return None  # not a rectangle: the rules do not draw cells
        for key in members:
            anchor[key] = (r0, c0, r1 - r0 + 1, c1 - c0 + 1)
    # Each phrase in its cell; a rule through a phrase, or two values apart in one cell,
    # means the rules are not the whole grid.
    found: dict[tuple[int, int], list[Phrase]] = {}
    for line in lines:
        r = min(max(0, bisect.bisect_right(ys, line.middle) - 1), n_rows - 1)
        previous: tuple[tuple[int, int], Phrase] | None = None
        for phrase in line.phrases:
            c = min(max(0, bisect.bisect_right(xs, (phrase.x0 + phrase.x1) / 2) - 1), n_cols - 1)
            for k in range(1, n_cols):
                if phrase.x0 + 0.5 < xs[k] < phrase.x1 - 0.5 and vertical(k, r):
                    return None
            cell = anchor[(r, c)][:2]
            if previous is not None and previous[0] == cell:
                gap = phrase.x0 - previous[1].x1
                if (phrase.numeric and previous[1].numeric and gap >= 0.8 * em) or gap >= 3 * em:
                    return None
            previous = (cell, phrase)
            found.setdefault(cell, []).append(phrase)
    # Two lines in one cell that are each a label with its values are two rows: the rules
    # group rows rather than draw them.
    full_rows: set[tuple[int, int]] = set()
    for line in lines:
        r = min(max(0, bisect.bisect_right(ys, line.middle) - 1), n_rows - 1)
        labels = [p for p in line.phrases if p.x1 <= xs[1] + 0.5 and not p.numeric]
        valued = any(p.x0 >= xs[1] - 0.5 and p.numeric for p in line.phrases)
        if labels and valued:
            cell = anchor[(r, 0)][:2]
            if cell in full_rows:
                return None
            full_rows.add(cell)
    first_body = lines[header_end].middle if header_end < len(lines) else bottom
    header_rows = sum(1 for r in range(n_rows) if ys[r + 1] <= first_body)
    draft = Draft(n_rows, n_cols)
    for (r, c), (r0, c0, rowspan, colspan) in sorted(anchor.items()):
        if (r, c) != (r0, c0):
            continue
        for phrase in found.get((r0, c0), []):
            draft.put(r0, c0, phrase)
        draft.span(r0, c0, rowspan, colspan)
        if (rowspan, colspan) != (1, 1):
            draft.ruled_spans.add((r0, c0))
        label = found.get((r0, c0))
        if c0 == 0 and label and r0 >= header_rows:
            draft.indent[r0] = label[0].x0
    return draft, header_rows


def _read_by_text(
    lines: Sequence[Line],
    hrules: Sequence[Rule],
    vrules: Sequence[Rule],
    header_end: int,
    em: float,
    box: Box,
    rules_only: bool,
) -> tuple[Draft, int, bool]:
    """The table read from the alignment of its text, with the rules where they are: the
    grid, its header rows, and whether rules drew it throughout."""
    column_lines = [line for line in lines[header_end:] if len(line.phrases) >= 2]
    if len(column_lines) < 2:
        column_lines = [line for line in lines if len(line.phrases) >= 2] or list(lines)
    bounds, ruled_bounds = column_separators(
        column_lines, lines, vrules, em, box, lines[:header_end]
    )
    if rules_only:
        bounds = sorted(ruled_bounds)
    n_cols = len(bounds) + 1
    placed = [
        _assign_columns(line, bounds, em, header=i < header_end) for i, line in enumerate(lines)
    ]
    lo = min(line.x0 for line in lines)
    hi = max(line.x1 for line in lines)
    edges = _edges(bounds, lo, hi)
    header_bands: list[tuple[float, float]] = []
    blocks: list[_Block] = []
    if header_end:
        ruled_phrases = _widen_header(
            placed[:header_end], lines[:header_end], hrules, vrules, edges, em
        )
        blocks = _header_blocks(placed[:header_end], hrules, em, ruled_phrases)
        header_bands = _header_rows(blocks, em)
    header_rows = len(header_bands)
    body = list(range(header_end, len(lines)))
    body_rows, ruled_rows = _body_rows(lines, placed, body, hrules, em, rules_only=rules_only)
    draft = Draft(header_rows + len(body_rows), n_cols)
    if blocks:
        _place_header(draft, blocks, header_bands)
    for k, row in enumerate(body_rows):
        r = header_rows + k
        for i in row:
            for phrase in placed[i]:
                draft.put(r, phrase.c0, phrase)
        if len(row) > 1 and not ruled_rows:
            # The cells whose text the join put together from several lines.
            sources: dict[int, set[int]] = {}
            for i in row:
                for phrase in placed[i]:
                    sources.setdefault(phrase.c0, set()).add(i)
            for c, found in sources.items():
                if len(found) > 1:
                    draft.flag(r, c, FLAG_JOINED_LINES)
        label = next((p for i in row for p in placed[i] if p.c0 == 0), None)
        if label is not None:
            draft.indent[r] = label.x0
    # A number that reaches closer to a column boundary than its column's numbers do.
    margins: dict[int, list[tuple[float, int]]] = {}
    for k, row in enumerate(body_rows):
        for i in row:
            for p in placed[i]:
                if p.numeric and p.c0 == p.c1:
                    margin = min(p.x0 - edges[p.c0], edges[p.c0 + 1] - p.x1)
                    margins.setdefault(p.c0, []).append((margin, header_rows + k))
    for c, found in margins.items():
        usual = statistics.median(m for m, _r in found)
        for margin, r in found:
            if margin < 0.3 * em and margin < 0.5 * usual:
                draft.flag(r, c, FLAG_NEAR_BOUNDARY)
    _row_parents(draft, header_rows)
    return draft, header_rows, ruled_rows and len(ruled_bounds) >= len(bounds)


def read_structure(
    words: Sequence[Word],
    rules: Sequence[Rule],
    box: Box,
    page: int,
    *,
    text_only: bool = False,
    rules_only: bool = False,
    find_title: bool = True,
) -> Table | None:
    """The table in ``box`` made of these words and rules, or None without two columns.
    Rules that draw every cell give the grid; otherwise the text's alignment does, with the
    rules where they are. ``text_only`` ignores the rules; ``rules_only`` takes columns and
    rows from the rules alone."""
    pieces, leaders = strip_leaders(words)
    if not pieces:
        return None
    em = _em(pieces)
    hrules = [] if text_only else merge_horizontal([r for r in rules if r.horizontal])
    vrules = [] if text_only else merge_vertical([r for r in rules if not r.horizontal])
    lines = group_lines(pieces, em)
    for line in lines:
        _join_numbers(line, em)
        make_phrases(line, em, vrules)
    title_lines, notes_lines = _title_and_notes(lines, em) if find_title else ([], [])
    lines = lines[len(title_lines) : len(lines) - len(notes_lines)]
    if not lines:
        return None
    header_end = _header_end(lines, hrules, em)
    by_rules = None if text_only else _read_by_rules(lines, hrules, vrules, header_end, em)
    if by_rules is not None:
        draft, header_rows = by_rules
        drawn = True
    else:
        draft, header_rows, drawn = _read_by_text(
            lines, hrules, vrules, header_end, em, box, rules_only
        )
    draft = _drop_empty_columns(draft)
    if draft.n_cols < 2 or draft.n_rows < 1:
        return None
    levels = _levels(draft.indent, em)
    cells = []
    for r in range(draft.n_rows):
        for c in range(draft.n_cols):
            if (r, c) in draft.covered:
                continue
            rowspan, colspan = draft.spans.get((r, c), (1, 1))
            flags = set(draft.flags.get((r, c), set()))
            if (rowspan > 1 or colspan > 1) and (r, c) not in draft.ruled_spans:
                flags.add(FLAG_INFERRED_SPAN)
            found = draft.boxes.get((r, c))
            cells.append(
                Cell(
                    r,
                    c,
                    rowspan,
                    colspan,
                    draft.text.get((r, c), ""),
                    (found[0], found[1], found[2], found[3]) if found else None,
                    tuple(sorted(flags)),
                )
            )
    table = Table(
        page=page,
        bbox=box,
        rows=draft.n_rows,
        cols=draft.n_cols,
        cells=tuple(cells),
        header_rows=header_rows,
        header_cols=_count_label_columns(draft, header_rows),
        title=" ".join(line.text for line in title_lines),
        notes=" ".join(line.text for line in notes_lines),
        strategy=STRATEGY_LINES if drawn else STRATEGY_TEXT,
        row_levels=tuple(levels.get(r, 0) for r in range(draft.n_rows)),
    )
    check_nothing_dropped(words, table, leaders)
    return table


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
    for (r, c), text in sorted(draft.text.items()):
        if text:
            old = out.text.get((r, new_col(c)), "")
            out.text[(r, new_col(c))] = f"{old} {text}".strip()
    for (r, c), (rowspan, colspan) in draft.spans.items():
        if draft.text.get((r, c)):
            start = new_col(c)
            out.span(r, start, rowspan, new_col(c + colspan - 1) - start + 1)
    for (r, c), flags in draft.flags.items():
        out.flags[(r, new_col(c))] = flags
    for (r, c), box in draft.boxes.items():
        out.boxes.setdefault((r, new_col(c)), box)
    out.indent = draft.indent
    out.ruled_spans = {(r, new_col(c)) for r, c in draft.ruled_spans}
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
