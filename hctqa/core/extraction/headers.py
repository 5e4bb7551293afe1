"""A table's column headers: where they end and how their cells stack and span.

- **Header and body.** The body starts at the first line that holds values (numbers, or the
  signs for none; not a line of years) beside a label, or below the first rule across the
  table under the top lines, or below the bold lines at the top of a table of text (or the
  top lines set into one another, as a one-line label centred beside two-line ones is); a
  lone label (at the left edge, or a section heading centred across the table) right above
  the values is a row-group label.
- **Header cells.** Header phrases stacked in the same columns (closer than 0.4 em, no rule
  between) are one cell; a phrase spans the columns between vertical rules around it, over a
  rule drawn under it, or that it is centred over (split labels below it; labels of later
  lines set beside it are not below it).
- **Header rows** are the fewest cuts between stacked cells; a cell reaches up and down where
  its columns are free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hctqa.core.extraction.columns import full_rules
from hctqa.core.extraction.layout import Rule
from hctqa.core.extraction.lines import Line, Phrase, is_data_line, starts_lower
from hctqa.core.extraction.spans import Draft


def is_section_heading(line: Line, x0: float, x1: float, em: float) -> bool:
    """A line of one label centred across a table (from ``x0`` to ``x1``) that starts a
    section of it ("Male", "Female"): no value, not in parentheses, not in lower case."""
    if len(line.phrases) != 1:
        return False
    phrase = line.phrases[0]
    text = phrase.text
    if phrase.numeric or text.startswith(("(", "[")) or starts_lower(text):
        return False
    centre = (phrase.x0 + phrase.x1) / 2
    return phrase.x0 > x0 + 2 * em and abs(centre - (x0 + x1) / 2) <= max(2 * em, 0.1 * (x1 - x0))


def header_line_count(lines: Sequence[Line], hrules: Sequence[Rule], em: float) -> int:
    """How many lines at the top are column headers: those above the first line of values
    (when it comes in the first half), else those above the first rule across the table
    under the top lines, else the bold lines at the top, else the top lines set into one
    another, else the first line."""
    if len(lines) < 2:
        return 0
    x0 = min(line.x0 for line in lines)
    x1 = max(line.x1 for line in lines)
    first_data = next((i for i, line in enumerate(lines) if is_data_line(line)), None)
    ruled_end = None
    for rule in sorted(full_rules(hrules, x0, x1, 0.6), key=lambda r: r.top):
        above = sum(1 for line in lines if line.bottom <= rule.top + 0.3 * em)
        if 0 < above < len(lines) and above <= max(1, len(lines) // 2):
            ruled_end = above
            break
    if first_data is not None and 0 < first_data <= max(1, len(lines) // 2 + 1):
        if ruled_end is not None and ruled_end < first_data:
            # A rule within the header (under a spanning label) does not end it.
            between = lines[ruled_end:first_data]
            if any(is_data_line(line) for line in between):
                return ruled_end
        # A label alone at the left edge, or a section heading, right above the values is a
        # row-group label.
        end = first_data
        while (
            end > 1
            and len(lines[end - 1].phrases) == 1
            and (
                lines[end - 1].x0 <= x0 + 0.5 * em or is_section_heading(lines[end - 1], x0, x1, em)
            )
            and len(lines[end - 2].phrases) >= 2
        ):
            end -= 1
        return end
    if ruled_end is not None:
        return ruled_end
    # A table of text (no line of values): the bold lines at its top, over regular ones;
    # else the top lines set into one another.
    bold = 0
    while bold < len(lines) and _is_bold(lines[bold]):
        bold += 1
    if 0 < bold <= max(1, len(lines) // 2):
        return bold
    interleaved = _interleaved_top(lines, em)
    if interleaved <= max(1, len(lines) // 2):
        return interleaved
    return 1


def _interleaved_top(lines: Sequence[Line], em: float) -> int:
    """How many lines at the top each start before the one above ends: the lines of one
    header row where a one-line label is centred beside two-line ones ("Code" / "Region"
    beside "Region name") and so reaches into both of their lines."""
    n = 1
    while n < len(lines) and lines[n].top < lines[n - 1].bottom - 0.1 * em:
        n += 1
    return n


def _is_bold(line: Line) -> bool:
    return all(w.bold for p in line.pieces for w in p.words)


@dataclass
class HeaderBlock:
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


def widen_header(
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
            # Labels of later lines that sit beside it (a one-line label set between the
            # two lines of its neighbours) are not below it.
            below = [
                q
                for j in range(i + 1, len(placed))
                for q in placed[j]
                if q.top >= phrase.bottom - 0.2 * em
            ]
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


def header_blocks(
    placed: list[list[Phrase]],
    hrules: Sequence[Rule],
    em: float,
    ruled: dict[int, bool],
) -> list[HeaderBlock]:
    """Header phrases stacked into cells: a phrase joins the block right above it in the same
    columns (or one nested in it, when it has no sibling there), unless a rule lies between."""
    blocks: list[HeaderBlock] = []
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
            blocks.append(HeaderBlock([phrase], phrase.c0, phrase.c1, ruled.get(id(phrase), False)))
        else:
            target.phrases.append(phrase)
            target.c0, target.c1 = min(target.c0, phrase.c0), max(target.c1, phrase.c1)
            target.ruled = target.ruled or ruled.get(id(phrase), False)
    return blocks


def header_row_bands(blocks: list[HeaderBlock], em: float) -> list[tuple[float, float]]:
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


def place_header(draft: Draft, blocks: list[HeaderBlock], rows: list[tuple[float, float]]) -> None:
    n = len(rows)
    placed: list[tuple[HeaderBlock, int, int]] = []
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

    def taken(r0: int, r1: int, c0: int, c1: int, me: HeaderBlock) -> bool:
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
