"""The grid being read (``Draft``: texts by position, spans, flags, boxes) and the spans of
its merged cells.

- **Rules that draw every cell** (enclosing the text, cutting none of it, not grouping
  several records in one cell) give the grid outright, a missing rule a merged cell
  (``read_by_rules``); the table's own rules are those within its text's reach, or its frame's
  further out (a vertical rule down the text's height where rules across the text end).
- **Row labels**: a label with blank label cells below it, beside labels of a second label
  column, covers those rows (``row_parents``).
- Columns where no cell starts are folded into their left neighbour (``drop_empty_columns``).
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from hctqa.core.extraction.layout import Box, Rule
from hctqa.core.extraction.lines import Line, Phrase, is_value


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


def _cluster(values: Sequence[float], tolerance: float) -> list[float]:
    groups: list[list[float]] = []
    for value in sorted(values):
        if groups and value - groups[-1][-1] <= tolerance:
            groups[-1].append(value)
        else:
            groups.append([value])
    return [statistics.fmean(g) for g in groups]


def read_by_rules(
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
    # The table's own rules: within its text's reach (not a page's section rules), or its
    # frame's further out: a vertical rule down the text's height where rules drawn across
    # the text end (a wide last column pads the frame well past its numbers).
    near = 2 * em
    tall = [r for r in vrules if min(r.bottom, bottom) - max(r.top, top) >= 0.5 * (bottom - top)]
    ends = [
        (r.x0, r.x1)
        for r in hrules
        if top - near <= r.top <= bottom + near and r.x0 < x1 and r.x1 > x0
    ]
    left, right = x0 - near, x1 + near
    for rule in tall:
        if any(abs(rule.x0 - a) <= 2 for a, _b in ends):
            left = min(left, rule.x0 - 1)
        if any(abs(rule.x0 - b) <= 2 for _a, b in ends):
            right = max(right, rule.x0 + 1)
    vs = [
        r
        for r in vrules
        if r.bottom - r.top >= em
        and left <= r.x0 <= right
        and r.top >= top - near
        and r.bottom <= bottom + near
    ]
    hs = [
        r
        for r in hrules
        if r.x1 - r.x0 >= em
        and top - near <= r.top <= bottom + near
        and r.x0 >= left
        and r.x1 <= right
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
    # group rows rather than draw them. A label cell may span rows whose values the rules
    # keep apart (a label over two rows of values).
    full_rows: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for line in lines:
        r = min(max(0, bisect.bisect_right(ys, line.middle) - 1), n_rows - 1)
        labels = [p for p in line.phrases if p.x1 <= xs[1] + 0.5 and not p.numeric]
        valued = {
            anchor[(r, min(max(0, bisect.bisect_right(xs, p.x0 + 0.5) - 1), n_cols - 1))][:2]
            for p in line.phrases
            if p.x0 >= xs[1] - 0.5 and p.numeric
        }
        if labels and valued:
            cell = anchor[(r, 0)][:2]
            if cell in full_rows and valued & full_rows[cell]:
                return None
            full_rows.setdefault(cell, set()).update(valued)
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


def row_parents(draft: Draft, header_rows: int) -> None:
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


def drop_empty_columns(draft: Draft) -> Draft:
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
