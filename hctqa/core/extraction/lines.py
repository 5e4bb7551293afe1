"""A table's text as the structure rules read it: words made pieces, lines and phrases, and
what kind of text a phrase is.

Every distance is in ems (the region's median text height, ``em_of``), so the rules hold at
any font size and for OCR words as for a text layer.

- **Text kinds.** A value is a number (with its sign, unit or footnote mark) or a sign for
  none ("–", "(X)", ":"); captions ("Table 3."), note and source lines, units lines and the
  words that leave a label open ("and", a comma) are told by their text.
- **Decoration.** Leader dots ("Burglary . . . . .") are dropped (a lone dot only on the
  pitch of the table's other leaders); a footnote marker stays with the word before it,
  kept apart from it when set raised and smaller ("Stolen property 1"); a decimal or a
  thousands group split from its number ("11,062" ".6", "100" "000") is joined back.
- **Lines and phrases.** Words sharing a baseline band are a line (a short small piece, a
  marker, joins the line it overlaps); words of a line closer than a word space (and not
  two numbers, no rule between) are a phrase, the text of one cell. A line or phrase in a
  right-to-left script reads its words right to left.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from hctqa.core.extraction.layout import Rule, Word, is_rtl

_T = TypeVar("_T")


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


CONNECTOR = re.compile(
    r"(?:\b(?:and|or|of|for|the|in|to|by|with|from|on|at|a|an|&)|[,\-–/(])$", re.I
)


# "Table 3.", "TABLE A1", "Figure 2:"; not "GraphCodeBERT" nor "Tablet".
CAPTION = re.compile(r"^(?i:table|tab|figure|fig|chart|exhibit|annex|appendix)\b\.?\s*[\dA-Z]")


NOTE_START = re.compile(
    r"^(source|sources|note|notes|nb|n\.b\.|footnote|\*|[¹²³⁴⁵⁶⁷⁸⁹⁰†‡§]|\(\d{1,2}\)|\d{1,2}\)|[a-z]\)|–\s*represents|x\s+not\s+applicable)",
    re.I,
)


UNITS = re.compile(
    r"^[\[(]?\s*(in|unit|units|values?|figures|amounts?|€|eur|euro|million|thousand|billion|percent|%)\b",
    re.I,
)


def is_value(text: str) -> bool:
    """A number (with its sign, unit or footnote mark) or a sign for none ("–", "(X)", ":")."""
    t = text.strip()
    return bool(t) and bool(_VALUE.match(t) or _NONE_SIGNS.match(t))


def starts_lower(text: str) -> bool:
    t = text.lstrip("([\"'“‘")
    return bool(t) and t[0].islower()


_YEAR = re.compile(r"^(1[89]|20)\d\d(/\d\d)?[*†‡¹²³]*$")


def is_data_line(line: Line) -> bool:
    """Values beside a label: at least one phrase after the first is a value, and values are
    at least half of them. A line of years alone is a header."""
    others = line.phrases[1:]
    values = [p for p in others if p.numeric]
    if values and all(_YEAR.match(p.text) for p in values):
        return False
    return bool(values) and len(values) * 2 >= len(others)


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


def reading_order(items: Sequence[_T]) -> list[_T]:
    """Pieces (or phrases) of a line, left to right on the page, in the order they read:
    right to left when the line is in a right-to-left script, a run of left-to-right words
    in it (a name, a number) still read left to right."""
    if not is_rtl("".join(item.text for item in items)):  # type: ignore[attr-defined]
        return list(items)
    runs: list[list[_T]] = []
    for item in items:
        ltr = not any(unicodedata.bidirectional(c) in ("R", "AL") for c in item.text)  # type: ignore[attr-defined]
        if runs and runs[-1][0] is ltr and ltr:
            runs[-1].append(item)
        else:
            runs.append([ltr, item])  # type: ignore[list-item]
    return [item for _ltr, *run in reversed(runs) for item in run]  # type: ignore[misc]


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
        return " ".join(p.text for p in reading_order(self.pieces))

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
        return " ".join(p.text for p in reading_order(self.phrases))


def em_of(pieces: Sequence[Piece]) -> float:
    heights = [p.height for p in pieces if p.height > 0]
    return statistics.median(heights) if heights else 10.0


def group_lines(pieces: Sequence[Piece], em: float) -> list[Line]:
    """Pieces that share a baseline band, top to bottom; small pieces (superscripts) join
    the line they overlap. A small piece of more than three characters is a word in small
    print (or an OCR word measured on its own ink), grouped as any other."""
    for piece in pieces:
        piece.small = piece.height < 0.7 * em
    normal = [p for p in pieces if not p.small or len(p.text) > 3]
    small = [p for p in pieces if p.small and len(p.text) <= 3]
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


def join_numbers(line: Line, em: float) -> None:
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
            # sentence (then the marker starts the next note). A raised one (a superscript:
            # smaller, its foot above the word's baseline) is kept apart from the word by a
            # space, so that the label still reads as itself ("Stolen property 1").
            raised = (
                len(piece.text) <= 3
                and piece.height <= 0.85 * last.height
                and piece.bottom <= last.bottom - 0.15 * last.height
            )
            marker = (piece.small or raised) and len(piece.text) <= 3
            if (
                marker
                and gap <= 0.6 * em
                and not last.small
                and not last.text.endswith((".", ";", ":"))
            ):
                joined = True
            if joined:
                if raised and not last.small:
                    sep = " "
                elif gap <= 0.12 * em or piece.small or piece.text[:1] in ".,":
                    sep = ""
                else:
                    sep = " "
                last.text = f"{last.text}{sep}{piece.text}"
                last.x1 = max(last.x1, piece.x1)
                last.top = min(last.top, piece.top) if not marker else last.top
                last.bottom = max(last.bottom, piece.bottom) if not marker else last.bottom
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
