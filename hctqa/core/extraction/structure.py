"""One table's structure from the words and ruling lines of its region.

The rules read a region the way a person reads a table, from evidence on the page; every
distance is in ems (the region's median text height), so they hold at any font size and for
OCR words as for a text layer. ``read_structure`` puts them together:

- ``lines``: words made pieces, lines and phrases (leader dots dropped, numbers and footnote
  markers joined, right-to-left text in reading order), and the kinds of text;
- ``spans``: the grid being read; rules that draw every cell give it outright, a missing
  rule a merged cell;
- otherwise the table is read from its text's alignment, with the rules where they are:
  ``columns`` (the gaps the body leaves open, rules that separate text), ``headers`` (where
  the header ends, its stacked and spanning cells) and ``rows`` (which lines continue a row);
- **title and notes** inside the region: a caption line at the top ("Table 3. …") and the
  lines that explain units; footnotes and source lines at the bottom.

Every character of the region's words ends up in a cell, the title or the notes, leader dots
aside: ``check_nothing_dropped`` verifies it for each table.
"""

from __future__ import annotations

import statistics
import unicodedata
from collections import Counter
from collections.abc import Sequence

from hctqa.core.extraction.columns import (
    assign_columns,
    column_edges,
    column_separators,
    merge_horizontal,
    merge_vertical,
)
from hctqa.core.extraction.headers import (
    HeaderBlock,
    header_blocks,
    header_line_count,
    header_row_bands,
    place_header,
    widen_header,
)
from hctqa.core.extraction.layout import Box, Rule, Word
from hctqa.core.extraction.lines import (
    CAPTION,
    NOTE_START,
    UNITS,
    Line,
    em_of,
    group_lines,
    is_value,
    join_numbers,
    make_phrases,
    strip_leaders,
)
from hctqa.core.extraction.rows import indent_levels, read_body_rows
from hctqa.core.extraction.spans import Draft, drop_empty_columns, read_by_rules, row_parents
from hctqa.core.extraction.table import (
    FLAG_INFERRED_SPAN,
    FLAG_JOINED_LINES,
    FLAG_NEAR_BOUNDARY,
    STRATEGY_LINES,
    STRATEGY_TEXT,
    Cell,
    Table,
)

__all__ = [
    "DroppedText",
    "check_nothing_dropped",
    "merge_horizontal",
    "merge_vertical",
    "read_structure",
]


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
        assign_columns(line, bounds, em, header=i < header_end) for i, line in enumerate(lines)
    ]
    lo = min(line.x0 for line in lines)
    hi = max(line.x1 for line in lines)
    edges = column_edges(bounds, lo, hi)
    header_bands: list[tuple[float, float]] = []
    blocks: list[HeaderBlock] = []
    if header_end:
        ruled_phrases = widen_header(
            placed[:header_end], lines[:header_end], hrules, vrules, edges, em
        )
        blocks = header_blocks(placed[:header_end], hrules, em, ruled_phrases)
        header_bands = header_row_bands(blocks, em)
    header_rows = len(header_bands)
    body = list(range(header_end, len(lines)))
    body_rows, ruled_rows = read_body_rows(lines, placed, body, hrules, em, rules_only=rules_only)
    draft = Draft(header_rows + len(body_rows), n_cols)
    if blocks:
        place_header(draft, blocks, header_bands)
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
    row_parents(draft, header_rows)
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
    em = em_of(pieces)
    hrules = [] if text_only else merge_horizontal([r for r in rules if r.horizontal])
    vrules = [] if text_only else merge_vertical([r for r in rules if not r.horizontal])
    lines = group_lines(pieces, em)
    for line in lines:
        join_numbers(line, em)
        make_phrases(line, em, vrules)
    title_lines, notes_lines = _title_and_notes(lines, em) if find_title else ([], [])
    lines = lines[len(title_lines) : len(lines) - len(notes_lines)]
    if not lines:
        return None
    header_end = header_line_count(lines, hrules, em)
    by_rules = None if text_only else read_by_rules(lines, hrules, vrules, header_end, em)
    if by_rules is not None:
        draft, header_rows = by_rules
        drawn = True
    else:
        draft, header_rows, drawn = _read_by_text(
            lines, hrules, vrules, header_end, em, box, rules_only
        )
    draft = drop_empty_columns(draft)
    if draft.n_cols < 2 or draft.n_rows < 1:
        return None
    levels = indent_levels(draft.indent, em)
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
    if lines and len(lines[0].phrases) == 1 and CAPTION.match(lines[0].text):
        title.append(lines[0])
        i = 1
        while (
            i < len(lines) - 2
            and len(lines[i].phrases) == 1
            and (
                UNITS.match(lines[i].text)
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
        if len(line.phrases) == 1 and NOTE_START.match(line.text):
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
