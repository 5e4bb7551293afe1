"""A table's body rows and their levels.

Each line is a row, unless it continues the row above: a wrapped label (starting in lower
case, or after "and", a comma or a hyphen; or hanging indented under it with the next line
back at its level), a label line without values whose values are on the next line, or text
in a row's cells with the row's label cell empty. A label alone under a row with values
heads the rows below when it ends with a colon or they are indented under it; a section
heading is a row of its own. Where two rules or more cross the body, the lines between two
rules are one row, unless a stretch between rules holds two labelled records (rules around
groups): then the text decides, and a rule still ends a row. Two numbers never share a cell.
Indentation gives each row's level.
"""

from __future__ import annotations

from collections.abc import Sequence

from hctqa.core.extraction.columns import full_rules
from hctqa.core.extraction.headers import is_section_heading
from hctqa.core.extraction.layout import Rule
from hctqa.core.extraction.lines import CONNECTOR, Line, Phrase, starts_lower


def _conflict(cells: dict[int, list[Phrase]], line: list[Phrase]) -> bool:
    """Two values would share a cell."""
    return any(p.c0 in cells and (p.numeric or any(q.numeric for q in cells[p.c0])) for p in line)


def _continues(
    cells: dict[int, list[Phrase]],
    line: list[Phrase],
    gap: float,
    label_share: float,
    em: float,
    following: Sequence[Phrase] = (),
) -> bool:
    """Whether a body line continues the row whose phrases by column are ``cells``;
    ``following`` is the next body line's phrases."""
    if _conflict(cells, line):
        return False
    mine = {p.c0: p for p in line}
    row_has_values = any(p.numeric for c, ps in cells.items() if c > 0 for p in ps)
    line_values = [p for p in line if p.numeric and p.c0 > 0]
    label = mine.get(0)
    last_label = cells[0][-1] if cells.get(0) else None
    if label is not None and last_label is not None:
        if len(line) == 1 and row_has_values:
            # A label alone under a row with values heads the lines below it when it ends
            # with a colon or they are indented under it ("of which:"), unless it reads on
            # from the label above at that label's own indent (a parent's wrapped label over
            # its indented children: "Diseases of the circulatory" / "system"); it wraps the
            # label above when it hangs indented under it and the next line is back at its
            # level.
            after = next((p for p in following if p.c0 == 0), None)
            first = cells[0][0]
            reads_on = starts_lower(label.text) or bool(CONNECTOR.search(last_label.text))
            wraps_in_place = reads_on and abs(label.x0 - first.x0) <= 0.3 * em
            if label.text.rstrip().endswith(":") or (
                after is not None and after.x0 > label.x0 + 0.3 * em and not wraps_in_place
            ):
                return False
            if label.x0 > first.x0 + 0.3 * em and (
                after is None or after.x0 <= first.x0 + 0.3 * em
            ):
                return True
        wrapped = starts_lower(label.text) or bool(CONNECTOR.search(last_label.text))
        if wrapped and (not row_has_values or not line_values):
            return True
        return label.text.startswith("(") and not line_values and gap < 0.6 * em
    if label is None and last_label is not None and label_share >= 0.8:
        # Text under a row's cells with its label cell empty.
        return not line_values and all(not p.numeric for p in line)
    if label is None and last_label is None and cells and not line_values:
        if gap >= 0.5 * em or any(p.numeric for p in line):
            return False
        # Text in several cells again, none of it reading on from the cell above (lower
        # case, or after a connector): a record of its own, its label cells empty.
        return len(line) < 2 or any(
            p.c0 in cells and (starts_lower(p.text) or bool(CONNECTOR.search(cells[p.c0][-1].text)))
            for p in line
        )
    return False


def _rules_group_records(body: list[int], breaks: set[int], placed: list[list[Phrase]]) -> bool:
    """Whether some stretch between two rules holds two records: two lines each with a
    label and values in the same column. Then the rules group rows rather than draw them."""
    valued: set[int] = set()
    for i in body:
        if i in breaks:
            valued = set()
        if not any(p.c0 == 0 and not p.numeric for p in placed[i]):
            continue
        columns = {p.c0 for p in placed[i] if p.numeric and p.c0 > 0}
        if columns & valued:
            return True
        valued |= columns
    return False


def read_body_rows(
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
    across = full_rules(hrules, x0, x1, 0.4)
    breaks = set()
    for a, b in zip(body, body[1:], strict=False):
        if any(lines[a].bottom - 0.3 * em <= r.top <= lines[b].top + 0.3 * em for r in across):
            breaks.add(b)
    ruled = len(breaks) >= 2 or rules_only
    if ruled and not rules_only and _rules_group_records(body, breaks, placed):
        # Rules around groups of records (a group's label, its rows): the rows are read from
        # the text as without rules, and a rule still ends a row.
        ruled = False
    data = [i for i in body if len(placed[i]) >= 2]
    label_share = (
        sum(1 for i in data if any(p.c0 == 0 for p in placed[i])) / len(data) if data else 0.0
    )
    rows: list[list[int]] = []
    cells: dict[int, list[Phrase]] = {}
    lo = min(lines[i].x0 for i in range(len(lines)))
    hi = max(lines[i].x1 for i in range(len(lines)))
    headings = {i for i in body if is_section_heading(lines[i], lo, hi, em)}
    for i in headings:
        for p in placed[i]:
            p.c0 = p.c1 = 0  # a section's heading is a row-group label
    for k, i in enumerate(body):
        if i in headings or (k > 0 and body[k - 1] in headings):
            rows.append([i])
            cells = {p.c0: [p] for p in placed[i]}
            continue
        if rows and i not in breaks:
            gap = lines[i].top - lines[rows[-1][-1]].bottom
            if rules_only:
                joins = True
            elif ruled:
                joins = not _conflict(cells, placed[i])
            else:
                following = placed[body[k + 1]] if k + 1 < len(body) else []
                joins = _continues(cells, placed[i], gap, label_share, em, following)
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


def indent_levels(indents: dict[int, float], em: float) -> dict[int, int]:
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
