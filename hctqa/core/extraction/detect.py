"""Where the tables of a page are, bordered or not, and the title and notes around each.

- **Ruled grids**: ruling segments that touch one another make a frame; one with at least two
  horizontal and two vertical rules around text is a table. A column of short labels left of
  its frame, one on each of most of its lines, is its row-label column.
- **Text tables**: lines whose words stand apart in several phrases (values beside labels,
  or three phrases or more) are table lines; a run of them, with the odd label line between,
  is a table. Prose (long runs of words), captions and a wide vertical gap end a run; the
  line carrying on the last row's wrapped label does not. Header lines right above a run,
  inside its width, join it; so do the lines between rules drawn across it.
- **One table, not several**: the next run set in the same columns, at most 3 em below, with
  nothing but up to two section headings between ("Male", "Female"), is a section of the same
  table, unless it has column headers of its own; a lone row of a label and values right
  below or above a table, in its columns (a totals row framed on its own), is part of it.
- **Not tables**: a run under or over a "Figure" caption is a chart's labels.
- **Title**: the caption above a table ("Table 3. …") and the lines between it and the table
  (units, head notes); or a units line right above it. **Notes**: the footnotes and source
  lines right below it.

A table found here is then read by ``structure.read_structure`` like a drawn box.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hctqa.core.extraction.layout import Box, PageLayout, Rule
from hctqa.core.extraction.lines import (
    CAPTION,
    CONNECTOR,
    NOTE_START,
    UNITS,
    Line,
    em_of,
    group_lines,
    is_data_line,
    is_value,
    join_numbers,
    make_phrases,
    starts_lower,
    strip_leaders,
)

_FIGURE = re.compile(r"^(?i:figure|fig|chart|graph|graphique|map|diagram)\b\.?\s*[\dA-Z]")
# Lines further apart than this (in ems) are not one table.
MAX_GAP = 2.2
HEADER_LINES = 6


@dataclass(frozen=True)
class Region:
    """A table's place on the page, with its title and notes."""

    bbox: Box
    title: str = ""
    notes: str = ""


def _words(text: str) -> int:
    return len(text.split())


def _is_prose(line: Line, text_width: float, em: float) -> bool:
    """A line of running text: one long phrase, or only long phrases."""
    long = [p for p in line.phrases if _words(p.text) >= 7 or (p.x1 - p.x0) >= 0.5 * text_width]
    return bool(line.phrases) and len(long) == len(line.phrases)


def _gaps(line: Line) -> list[float]:
    return [b.x0 - a.x1 for a, b in zip(line.phrases, line.phrases[1:], strict=False)]


def _is_table_line(line: Line, text_width: float, em: float) -> bool:
    phrases = line.phrases
    if len(phrases) < 2 or _is_prose(line, text_width, em):
        return False
    if max(_gaps(line)) < 0.9 * em:
        return False
    values = sum(p.numeric for p in phrases[1:])
    if values:
        return True
    if len(phrases) >= 3:
        return True
    return all(_words(p.text) <= 5 for p in phrases) and max(_gaps(line)) >= 1.5 * em


def _components(rules: Sequence[Rule], tolerance: float = 2.0) -> list[list[Rule]]:
    """Rules that touch one another, as groups (swept top to bottom)."""
    ordered = sorted(rules, key=lambda r: r.top)
    parent = list(range(len(ordered)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            if b.top - tolerance > a.bottom:
                break  # every later rule starts lower still
            if a.x0 - tolerance <= b.x1 and b.x0 - tolerance <= a.x1:
                parent[find(i)] = find(j)
    groups: dict[int, list[Rule]] = {}
    for i, rule in enumerate(ordered):
        groups.setdefault(find(i), []).append(rule)
    return list(groups.values())


def _grids(rules: Sequence[Rule], lines: Sequence[Line], em: float) -> list[Box]:
    """Frames of touching rules, two horizontal and two vertical at least, around rows of
    several cells (a chart's grid holds labels one by one)."""
    found: list[tuple[Box, list[int]]] = []
    long_rules = [r for r in rules if r.length >= em]
    for group in _components(long_rules):
        horizontal = [r for r in group if r.horizontal]
        vertical = [r for r in group if not r.horizontal]
        if len(horizontal) < 2 or len(vertical) < 2:
            continue
        box = (
            min(r.x0 for r in group),
            min(r.top for r in group),
            max(r.x1 for r in group),
            max(r.bottom for r in group),
        )
        rows = [
            line
            for line in lines
            if box[1] <= line.middle <= box[3]
            and sum(box[0] - 1 <= p.x0 and p.x1 <= box[2] + 1 for p in line.phrases) >= 2
        ]
        if len(rows) >= 2 and box[2] - box[0] >= 4 * em:
            found.append((box, sorted(round(r.top) for r in horizontal)))
    # Blocks of one table drawn apart (side by side, on the same rows) are one grid.
    merged: list[tuple[Box, list[int]]] = []
    for box, ys in sorted(found, key=lambda f: f[0][0]):
        for k, (other, other_ys) in enumerate(merged):
            same_rows = abs(other[1] - box[1]) <= em and abs(other[3] - box[3]) <= em
            close = 0 <= box[0] - other[2] <= 2.5 * em
            shared = len(set(ys) & set(other_ys)) >= 0.5 * min(len(ys), len(other_ys))
            if same_rows and close and shared and not _labels_start(lines, other, box):
                merged[k] = (_union(other, box), sorted(set(ys) | set(other_ys)))
                break
        else:
            merged.append((box, ys))
    return [box for box, _ys in merged]


def _labels_start(lines: Sequence[Line], left: Box, right: Box) -> bool:
    """Values end the left block and labels start the right one: two tables side by side."""
    total = values = labels = 0
    for line in lines:
        before = [p for p in line.phrases if left[0] - 1 <= p.x0 and p.x1 <= left[2] + 1]
        after = [p for p in line.phrases if right[0] - 1 <= p.x0 and p.x1 <= right[2] + 1]
        if not before or not after or not (left[1] <= line.middle <= left[3]):
            continue
        total += 1
        values += before[-1].numeric
        labels += not after[0].numeric
    return total >= 2 and values >= 0.6 * total and labels >= 0.6 * total


def _overlap(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _lines_box(lines: Sequence[Line]) -> Box:
    return (
        min(line.x0 for line in lines),
        min(line.top for line in lines),
        max(line.x1 for line in lines),
        max(line.bottom for line in lines),
    )


def _lines_of(pieces: Sequence, em: float) -> list[Line]:
    lines = group_lines(pieces, em)
    for line in lines:
        join_numbers(line, em)
        make_phrases(line, em, ())
    return lines


def _kinds(lines: Sequence[Line], text_width: float, em: float) -> list[str]:
    kinds = []
    for line in lines:
        if CAPTION.match(line.text) or _FIGURE.match(line.text):
            kinds.append("caption")
        elif _is_prose(line, text_width, em):
            kinds.append("prose")
        elif _is_table_line(line, text_width, em):
            kinds.append("table")
        else:
            kinds.append("other")
    return kinds


def _runs(lines: Sequence[Line], kinds: Sequence[str], em: float) -> list[tuple[int, int]]:
    """Runs of table lines (first and last line), with their header lines above."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if kinds[i] != "table":
            i += 1
            continue
        start = end = i
        left = lines[i].x0
        k = i + 1
        while k < len(lines):
            gap = lines[k].top - lines[end].bottom
            if gap > MAX_GAP * em or kinds[k] in ("caption", "prose"):
                break
            if kinds[k] == "table":
                end = k
                left = min(left, lines[k].x0)
                k += 1
                continue
            # A label line between table lines starts in the label column; a line standing
            # apart from it (a centred heading) ends the table.
            if lines[k].x0 > left + 2 * em:
                break
            ahead = next(
                (
                    m
                    for m in range(k + 1, min(len(lines), k + 4))
                    if kinds[m] == "table" and lines[m].top - lines[m - 1].bottom <= MAX_GAP * em
                ),
                None,
            )
            if ahead is None or any(
                kinds[m] in ("caption", "prose") or lines[m].x0 > left + 2 * em
                for m in range(k, ahead)
            ):
                break
            end = ahead
            k = ahead + 1
        while (
            end + 1 < len(lines)
            and kinds[end + 1] == "other"
            and _continues_last_row(lines, end, left, em)
        ):
            end += 1
        if sum(1 for m in range(start, end + 1) if kinds[m] == "table") >= 2:
            # Header lines right above, inside the run's width.
            x0, _t, x1, _b = _lines_box(lines[start : end + 1])
            up = start
            while (
                up > 0
                and start - up < HEADER_LINES
                and kinds[up - 1] in ("other", "table")
                and lines[up].top - lines[up - 1].bottom <= 1.2 * em
                and lines[up - 1].x0 >= x0 - 2 * em
                and lines[up - 1].x1 <= x1 + 2 * em
                and not NOTE_START.match(lines[up - 1].text)
            ):
                up -= 1
            runs.append((up, end))
        i = end + 1
    return runs


def _continues_last_row(lines: Sequence[Line], end: int, left: float, em: float) -> bool:
    """Whether the line after a table's last line carries on its last row's wrapped label:
    as close as a wrapped line, in the label column, no values, not a note, and reading on
    (lower case, after a connector or an open bracket, or hanging indented under the label)."""
    line, last = lines[end + 1], lines[end]
    if line.top - last.bottom > 0.6 * em or not last.phrases or len(line.phrases) > 1:
        return False
    text = line.text
    if NOTE_START.match(text) or line.pieces[0].small or is_value(text):
        return False
    label = last.phrases[0]
    if label.numeric or not (left - 0.5 * em <= line.x0 < label.x1):
        return False
    if len(last.phrases) > 1 and line.x1 > last.phrases[1].x0:
        return False  # reaches into the values
    open_bracket = label.text.count("(") > label.text.count(")")
    return (
        starts_lower(text)
        or bool(CONNECTOR.search(label.text))
        or open_bracket
        or line.x0 >= label.x0 + 0.3 * em
    )


def _same_columns(upper: Sequence[Line], lower: Sequence[Line], em: float) -> bool:
    """Whether two runs of table lines set their values in the same columns: most values of
    the lower one end (or start) where values of the upper one do."""
    ups = [p for line in upper for p in line.phrases[1:] if p.numeric]
    downs = [p for line in lower for p in line.phrases[1:] if p.numeric]
    if not ups or not downs:
        return False
    aligned = sum(
        any(abs(p.x1 - q.x1) <= 0.6 * em or abs(p.x0 - q.x0) <= 0.6 * em for q in ups)
        for p in downs
    )
    counts = sorted(len(line.phrases) for line in lower if len(line.phrases) >= 2)
    usual = sorted(len(line.phrases) for line in upper if len(line.phrases) >= 2)
    similar = bool(counts and usual) and abs(counts[len(counts) // 2] - usual[len(usual) // 2]) <= 1
    return similar and aligned >= 0.8 * len(downs)


def _join_sections(
    lines: Sequence[Line], kinds: Sequence[str], runs: list[tuple[int, int]], em: float
) -> list[tuple[int, int]]:
    """Runs of one table split into sections: the next run set in the same columns, at most
    three ems below, with nothing between but section headings ("Male", "Female": a short
    label line each, at most two), is the same table; its own column headers would make it
    another table, unless they repeat the first one's."""
    joined: list[tuple[int, int]] = []
    for start, end in runs:
        if joined:
            first, last = joined[-1]
            between = lines[last + 1 : start]
            gaps = [
                b.top - a.bottom
                for a, b in zip(lines[last:start], lines[last + 1 : start + 1], strict=False)
            ]
            lead = next((m for m in range(start, end + 1) if is_data_line(lines[m])), start)
            heads = [lines[m] for m in range(start, lead)]
            own_header = [
                h
                for h in heads
                if len(h.phrases) >= 2
                and h.text not in {lines[m].text for m in range(first, last + 1)}
            ]
            if (
                len(between) <= 2
                and all(g <= 3 * em for g in gaps)
                and all(_is_heading(line, kinds[last + 1 + k]) for k, line in enumerate(between))
                and not own_header
                and _same_columns(
                    [lines[m] for m in range(first, last + 1) if kinds[m] == "table"],
                    [lines[m] for m in range(start, end + 1) if kinds[m] == "table"],
                    em,
                )
            ):
                joined[-1] = (first, end)
                continue
        joined.append((start, end))
    return joined


def _is_heading(line: Line, kind: str) -> bool:
    """A section heading between parts of a table: one short label, not a note, a caption,
    a units line or a value."""
    return (
        kind in ("other", "table")
        and len(line.phrases) == 1
        and len(line.text.split()) <= 6
        and not NOTE_START.match(line.text)
        and not UNITS.match(line.text)
        and not is_value(line.text)
    )


def _split_side_by_side(lines: Sequence[Line], em: float) -> list[list[Line]]:
    """Tables side by side: a gap that no phrase of any line crosses, with values left of it
    and labels right of it, divides them."""
    if not lines:
        return []
    spans = sorted((p.x0, p.x1) for line in lines for p in line.phrases)
    reach = spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= 1.5 * em:
            cut = (reach + x0) / 2
            left_values = right_labels = total = 0
            for line in lines:
                before = [p for p in line.phrases if p.x1 <= cut]
                after = [p for p in line.phrases if p.x0 >= cut]
                if not before or not after:
                    continue
                total += 1
                left_values += before[-1].numeric
                right_labels += not after[0].numeric
            if total >= 2 and left_values >= 0.6 * total and right_labels >= 0.6 * total:
                left = [_part(line, cut, True) for line in lines]
                right = [_part(line, cut, False) for line in lines]
                return _split_side_by_side([x for x in left if x], em) + _split_side_by_side(
                    [x for x in right if x], em
                )
        reach = max(reach, x1)
    return [list(lines)]


def _part(line: Line, cut: float, left: bool) -> Line | None:
    phrases = [p for p in line.phrases if (p.x1 <= cut) == left]
    if not phrases:
        return None
    pieces = [piece for p in phrases for piece in p.pieces]
    part = Line(pieces, min(p.top for p in pieces), max(p.bottom for p in pieces))
    part.phrases = phrases
    return part


def _touch(a: Box, b: Box, em: float) -> bool:
    """Overlapping, or one right above the other sharing most of their width."""
    if _overlap(a, b):
        return True
    gap = max(a[1], b[1]) - min(a[3], b[3])
    shared = min(a[2], b[2]) - max(a[0], b[0])
    return gap <= 1.5 * em and shared >= 0.5 * min(a[2] - a[0], b[2] - b[0])


def find_regions(layout: PageLayout) -> list[Region]:
    """The tables of a page, top to bottom."""
    pieces, _leaders = strip_leaders([w for w in layout.words if w.upright])
    if not pieces:
        return []
    em = em_of(pieces)
    lines = _lines_of(pieces, em)
    text_width = max(line.x1 for line in lines) - min(line.x0 for line in lines)
    kinds = _kinds(lines, text_width, em)
    # Ruled grids first; their words are theirs.
    grids = [_with_labels_outside(g, lines, em) for g in _grids(layout.rules, lines, em)]
    rest = [
        p
        for p in pieces
        if not any(g[0] <= (p.x0 + p.x1) / 2 <= g[2] and g[1] <= p.middle <= g[3] for g in grids)
    ]
    boxes: list[Box] = []
    if rest:
        rest_lines = _lines_of(rest, em)
        rest_kinds = _kinds(rest_lines, text_width, em)
        runs = _join_sections(rest_lines, rest_kinds, _runs(rest_lines, rest_kinds, em), em)
        for a, b in runs:
            for part in _split_side_by_side(rest_lines[a : b + 1], em):
                if sum(len(line.phrases) >= 2 for line in part) >= 2:
                    boxes.append(_lines_box(part))
        # Rules drawn across a run's width just above or below it belong to it.
        boxes = [_extend_to_rules(box, layout.rules, lines, em) for box in boxes]
    # A text run touching a grid (a ruled header over an unruled body) is part of it. One
    # touching several grids joins them: blocks of one table whose rules broke between them
    # (a scan's faint or interrupted rules).
    merged: list[Box | None] = list(grids)
    for box in boxes:
        touching = [
            k for k, g in enumerate(merged[: len(grids)]) if g is not None and _touch(box, g, em)
        ]
        if not touching:
            merged.append(box)
            continue
        for k in touching:
            box = _union(box, merged[k])  # type: ignore[arg-type]
            merged[k] = None
        merged[touching[0]] = box
    final: list[Box] = []
    for box in sorted((b for b in merged if b is not None), key=lambda b: b[1]):
        for k, other in enumerate(final):
            if _overlap(box, other):
                final[k] = _union(box, other)
                break
        else:
            final.append(box)
    final = _with_stray_rows(final, lines, kinds, em)
    regions = []
    for box in sorted(final, key=lambda b: (b[1], b[0])):
        inside = [
            n
            for n, line in enumerate(lines)
            if box[1] - 0.5 <= line.middle <= box[3] + 0.5
            and any(box[0] - 1 <= p.x0 and p.x1 <= box[2] + 1 for p in line.phrases)
        ]
        if not inside:
            continue
        if _near_figure_caption(lines, kinds, inside[0], inside[-1], em):
            continue
        if _is_chart(box, layout.graphics):
            continue
        title = _title_above(lines, kinds, inside[0], box, em)
        notes = _notes_below(lines, kinds, inside[-1], box, em)
        regions.append(Region(box, title, notes))
    return regions


def _with_labels_outside(box: Box, lines: Sequence[Line], em: float) -> Box:
    """A ruled grid whose rows have their labels left of its frame (a row label column
    outside the rules) takes them in: on most of its lines a short phrase stands left of the
    frame, and they line up as a column."""
    inside = [
        line
        for line in lines
        if box[1] <= line.middle <= box[3]
        and any(box[0] - 1 <= p.x0 and p.x1 <= box[2] + 1 for p in line.phrases)
    ]
    labels = []
    for line in inside:
        left = [p for p in line.phrases if p.x1 <= box[0] + 1]
        if len(left) > 1:
            return box  # more than a label column: text beside the table
        labels += left
    if len(labels) < max(2, 0.6 * len(inside)):
        return box
    if any(_words(p.text) > 8 or p.numeric for p in labels):
        return box
    if min(box[0] - p.x1 for p in labels) > max(8 * em, box[2] - box[0]):
        return box  # the longest label still far from the frame: not its labels
    start = min(p.x0 for p in labels)
    if sum(p.x0 - start <= 3 * em for p in labels) < 0.8 * len(labels):
        return box
    return (start, box[1], box[2], box[3])


def _with_stray_rows(
    boxes: list[Box], lines: Sequence[Line], kinds: Sequence[str], em: float
) -> list[Box]:
    """A lone row of values right below or above a table, in its columns (a totals row framed
    on its own, a row set apart by a wider gap), is part of it."""
    out = list(boxes)
    for n, line in enumerate(lines):
        if kinds[n] != "table" or NOTE_START.match(line.text) or line.pieces[0].small:
            continue
        if len(line.phrases) < 2 or not all(p.numeric for p in line.phrases[1:]):
            continue  # a row: its label, then values only
        if any(_inside(line, box) for box in out):
            continue
        for k, box in enumerate(out):
            near = 0 <= line.top - box[3] <= 2.5 * em or 0 <= box[1] - line.bottom <= 2.5 * em
            if not near or abs(line.x0 - box[0]) > 2 * em or line.x1 > box[2] + 2 * em:
                continue
            members = [m for m in lines if _inside(m, box) and len(m.phrases) >= 2]
            if _same_columns(members, [line], em):
                out[k] = _union(box, _lines_box([line]))
                break
    return out


def _is_chart(box: Box, graphics: Sequence[Box]) -> bool:
    """Curves and slanted lines inside: a chart's marks, not a table's rules."""
    area = max(1.0, (box[2] - box[0]) * (box[3] - box[1]))
    inside = [
        g
        for g in graphics
        if box[0] <= (g[0] + g[2]) / 2 <= box[2] and box[1] <= (g[1] + g[3]) / 2 <= box[3]
    ]
    covered = sum((g[2] - g[0]) * (g[3] - g[1]) for g in inside)
    return len(inside) >= 6 or covered >= 0.1 * area


def _inside(line: Line, box: Box) -> bool:
    return (
        box[1] - 0.5 <= line.middle <= box[3] + 0.5
        and line.x0 >= box[0] - 1
        and line.x1 <= box[2] + 1
    )


def _extend_to_rules(box: Box, rules: Sequence[Rule], lines: Sequence[Line], em: float) -> Box:
    width = box[2] - box[0]
    x0, top, x1, bottom = box
    for rule in rules:
        if not rule.horizontal or min(rule.x1, x1) - max(rule.x0, x0) < 0.8 * width:
            continue
        if rule.x1 - rule.x0 > 1.6 * width:
            continue
        if top - 2.5 * em <= rule.top < top:
            between = [
                line
                for line in lines
                if rule.top <= line.middle <= top and line.x0 >= x0 - em and line.x1 <= x1 + em
            ]
            if len(between) <= HEADER_LINES:
                top = rule.top
        if bottom < rule.top <= bottom + 1.5 * em:
            bottom = rule.top
    if (x0, top, x1, bottom) != box:
        included = [line for line in lines if _inside(line, (x0, top, x1, bottom))]
        if included:
            lb = _lines_box(included)
            return (min(lb[0], x0), min(lb[1], box[1]), max(lb[2], x1), max(lb[3], box[3]))
    return box


def _near_figure_caption(
    lines: Sequence[Line], kinds: Sequence[str], first: int, last: int, em: float
) -> bool:
    for k in (first - 1, first - 2, last + 1, last + 2):
        if not (0 <= k < len(lines)) or kinds[k] != "caption" or not _FIGURE.match(lines[k].text):
            continue
        between = k + 1 if k < first else k - 1
        if between not in (first, last) and NOTE_START.match(lines[between].text):
            continue  # the run's source or note line ends it: the caption is the next one's
        near = (
            lines[first].top - lines[k].bottom if k < first else lines[k].top - lines[last].bottom
        )
        if near <= 3 * em:
            return True
    return False


def _title_above(
    lines: Sequence[Line], kinds: Sequence[str], first: int, box: Box, em: float
) -> str:
    """The caption above the table and what lies between them, or a units line."""
    taken: list[Line] = []
    k = first - 1
    while k >= 0 and first - k <= 8:
        line = lines[k]
        below = lines[k + 1]
        if below.top - line.bottom > 1.5 * em:
            break
        taken.append(line)
        if kinds[k] == "caption":
            if _FIGURE.match(line.text):
                return ""
            return " ".join(x.text for x in reversed(taken))
        if kinds[k] == "table":
            break
        k -= 1
    if taken and UNITS.match(taken[0].text):
        return taken[0].text
    return ""


def _notes_below(
    lines: Sequence[Line], kinds: Sequence[str], last: int, box: Box, em: float
) -> str:
    """Footnotes and source lines right below the table."""
    taken: list[Line] = []
    k = last + 1
    while k < len(lines):
        line = lines[k]
        above = lines[k - 1]
        if line.top - above.bottom > (1.5 if not taken else 1.0) * em or kinds[k] == "caption":
            break
        note = bool(NOTE_START.match(line.text)) or line.pieces[0].small
        if taken and abs(line.bottom - line.top - (taken[0].bottom - taken[0].top)) > 0.3 * em:
            break  # a running footer in another size
        if not taken and not note:
            break
        if taken and kinds[k] == "table" and not note:
            break
        # Past a note's full stop only another note follows; the next paragraph does not.
        if taken and not note and taken[-1].text.rstrip().endswith((".", ";")):
            break
        taken.append(line)
        k += 1
    return " ".join(line.text for line in taken)
