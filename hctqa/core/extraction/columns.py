"""A table's columns, and the ruling lines that bound them.

- **Columns** are the gaps that the body's lines of several phrases leave open, allowing a
  few lines to cross them; a gap only one body line has text on both sides of counts when
  no line crosses it and a header line also has labels on both sides; text standing alone
  well inside a gap, on lines of values, is a sparse column of its own. A boundary sits
  where the fewest header labels are, a vertical rule that separates text is one, and a
  column where no body phrase starts is none, unless its header stands clear of every body line
  (a column whose only text is its header).
- **Rules**: segments on one line that touch are one rule (grouped by position first, then
  joined end to end).
- **Placing phrases**: a body phrase over a boundary between two of its words is split there,
  otherwise it sits in the column holding most of it; a header phrase over a boundary spans.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from hctqa.core.extraction.layout import Box, Rule
from hctqa.core.extraction.lines import Line, Phrase

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


def _islands_are_records(lines: Sequence[Line], a: float, b: float) -> bool:
    """Whether the text standing alone between ``a`` and ``b`` belongs to lines of values
    (records), not to header lines taken for the body."""
    crossing = [line for line in lines if any(p.x0 < b and p.x1 > a for p in line.phrases)]
    return bool(crossing) and all(any(p.numeric for p in line.phrases) for line in crossing)


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
        runs: list[tuple[float, float]] = []
        run_start = None
        for a, b, c, _s in corridor + [(0, 0, least + 1, 0)]:
            if c == least:
                run_start = a if run_start is None else run_start
                run_end = b
            elif run_start is not None:
                runs.append((run_start, run_end))
                run_start = None
        wide = [r for r in runs if r[1] - r[0] >= 0.12 * em]
        clear = [r for r in runs if r[1] - r[0] >= 0.5 * em]
        if (
            least == 0
            and len(clear) >= 2
            and _islands_are_records(multi, clear[0][1], clear[-1][0])
        ):
            # Text standing well apart inside the gap, with every other line open on both
            # sides of it: a sparse column's values. Each clear run around them is a boundary.
            for run in clear:
                separators.append((run[0] + run[1]) / 2)
                gaps.append(run)
        elif wide:
            best = max(wide, key=lambda r: r[1] - r[0])
            separators.append((best[0] + best[1]) / 2)
            gaps.append((corridor[0][0], corridor[-1][1]))
        corridor.clear()

    # A gap only one body line has text on both sides of (a column with one value) counts
    # when no body line crosses it and a header line also has labels on both sides of it.
    header_spans = [[(p.x0, p.x1) for p in line.phrases] for line in header_lines]

    def header_supports(a: float, b: float) -> bool:
        mid = (a + b) / 2
        return any(
            not any(x0 < mid < x1 for x0, x1 in spans)
            and any(x1 <= mid for _x0, x1 in spans)
            and any(x0 >= mid for x0, _x1 in spans)
            for spans in header_spans
        )

    for a, b, crossing, supporting in intervals:
        if (supporting >= need and crossing <= 0.12 * (crossing + supporting)) or (
            supporting == 1 and crossing == 0 and header_supports(a, b)
        ):
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
    separators = sorted(separators + _header_only_columns(lines, header_lines, em))
    return separators, {x for x in ruled if x in separators}


def _header_only_columns(
    lines: Sequence[Line], header_lines: Sequence[Line], em: float
) -> list[float]:
    """Boundaries of columns whose only text is their header ("Revised" over no values): a
    header label standing clear of every body line, right (or left) of all of them by a
    column's gap, and apart from the labels beside it and from the end of every label over the
    body's columns (not the tail of a label over the last column: "Total" "EURbn"; not the
    units "(%)" a word's gap past "Weight of indicator in 2006", on a line of their own)."""
    heads = {id(line) for line in header_lines}
    body = [p for line in lines if id(line) not in heads for p in line.phrases]
    if not body or not header_lines:
        return []
    lo, hi = min(p.x0 for p in body), max(p.x1 for p in body)
    labels = [p for line in header_lines for p in line.phrases]
    # How far the labels over the body's columns reach past them, on any header line: a label
    # under or over a word of a justified "Fraction of" / "Wealth Lost" reaches past it.
    reach_right = max([hi] + [q.x1 for q in labels if q.x0 < hi])
    reach_left = min([lo] + [q.x0 for q in labels if q.x1 > lo])

    right, left = [], []
    for line in header_lines:
        for k, p in enumerate(line.phrases):
            before = line.phrases[k - 1].x1 if k else -1e9
            after = line.phrases[k + 1].x0 if k + 1 < len(line.phrases) else 1e9
            clear_right = p.x0 - max(before, reach_right) >= em
            if p.x0 >= hi + 1.5 * em and clear_right:
                right.append(p.x0)
            clear_left = min(after, reach_left) - p.x1 >= em
            if p.x1 <= lo - 1.5 * em and clear_left:
                left.append(p.x1)
    out = []
    if right:
        out.append((hi + min(right)) / 2)
    if left:
        out.append((lo + max(left)) / 2)
    return out


def _merge_collinear(
    segments: Sequence[tuple[float, float, float]], tolerance: float
) -> list[tuple[float, float, float]]:
    """``(position, start, end)`` segments on one line (positions within ``tolerance``) that
    touch or overlap, as one segment each (at the first one's position). Positions are
    grouped before the ends are compared, so that a rule a hair off its neighbours still
    joins them wherever it starts."""
    groups: list[list[tuple[float, float, float]]] = []
    for segment in sorted(segments):
        if groups and segment[0] - groups[-1][-1][0] <= tolerance:
            groups[-1].append(segment)
        else:
            groups.append([segment])
    out: list[tuple[float, float, float]] = []
    for group in groups:
        merged: list[list[float]] = []
        for position, start, end in sorted(group, key=lambda g: g[1]):
            if merged and start <= merged[-1][2] + tolerance:
                merged[-1][2] = max(merged[-1][2], end)
            else:
                merged.append([position, start, end])
        out += [(m[0], m[1], m[2]) for m in merged]
    return out


def merge_vertical(vrules: Sequence[Rule], tolerance: float = 1.5) -> list[Rule]:
    """Vertical segments on one x that touch, as one rule each."""
    merged = _merge_collinear([((r.x0 + r.x1) / 2, r.top, r.bottom) for r in vrules], tolerance)
    return sorted(
        (Rule(x, top, x, bottom) for x, top, bottom in merged), key=lambda r: (r.x0, r.top)
    )


def merge_horizontal(hrules: Sequence[Rule], tolerance: float = 1.5) -> list[Rule]:
    """Horizontal segments on one y that touch, as one rule each."""
    merged = _merge_collinear([((r.top + r.bottom) / 2, r.x0, r.x1) for r in hrules], tolerance)
    return sorted((Rule(x0, y, x1, y) for y, x0, x1 in merged), key=lambda r: (r.top, r.x0))


def full_rules(hrules: Sequence[Rule], x0: float, x1: float, share: float) -> list[Rule]:
    width = max(1e-6, x1 - x0)
    return [r for r in hrules if min(r.x1, x1) - max(r.x0, x0) >= share * width]


def column_of(x: float, bounds: Sequence[float]) -> int:
    """The column holding x, given the inner boundaries."""
    return bisect.bisect_right(bounds, x)


def column_edges(bounds: Sequence[float], lo: float, hi: float) -> list[float]:
    return [
        min(lo, bounds[0] - 1) if bounds else lo,
        *bounds,
        max(hi, bounds[-1] + 1) if bounds else hi,
    ]


def assign_columns(line: Line, bounds: Sequence[float], em: float, header: bool) -> list[Phrase]:
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
            c0 = column_of(part.x0 + inset, bounds)
            c1 = max(c0, column_of(part.x1 - inset, bounds))
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
