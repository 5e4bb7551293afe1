"""The fast TEDS equals the reference (``extraction.metrics.teds``, APTED) on every input."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from hctqa.core.extraction import metrics
from hctqa.core.extraction.grid import Grid, GridCell
from hctqa.core.extraction.html import html_tables
from hctqa.core.tracks.teds import teds

TEXTS = st.sampled_from(["", "a", "ab", "b", "Total", "12", "1.5", "x y"])


@st.composite
def grids(draw: st.DrawFn) -> Grid:
    n_rows = draw(st.integers(0, 5))
    n_cols = draw(st.integers(1, 5))
    cells = []
    for r in range(n_rows):
        for c in range(n_cols):
            if draw(st.integers(0, 4)) == 0:
                continue  # a position left for a span or left empty
            rowspan = draw(st.integers(1, 2))
            colspan = draw(st.integers(1, 3))
            cells.append(GridCell(r, c, rowspan, colspan, draw(TEXTS)))
    return Grid.build(n_rows, n_cols, cells)


@settings(max_examples=300, deadline=None)
@given(grids(), grids(), st.booleans())
def test_it_equals_the_apted_reference(one: Grid, other: Grid, count_root: bool) -> None:
    if not (one.n_rows + len(one.cells)) and not (other.n_rows + len(other.cells)):
        return
    expected = metrics.teds(one, other, count_root=count_root)
    assert math.isclose(teds(one, other, count_root=count_root), expected, abs_tol=1e-9)


def test_it_equals_the_reference_on_real_synthetic_tables(synthetic_tables: list) -> None:
    for table in synthetic_tables[:12]:
        truth = metrics.competition_form(html_tables(table.synthetic.hct_html.encode())[0].grid)
        damaged = Grid.build(
            truth.n_rows + 1,
            truth.n_cols,
            [
                GridCell(
                    c.row + (c.row > 1), c.col, c.rowspan, c.colspan, c.text + "0"[: c.col % 2]
                )
                for c in truth.cells
                if c.col != 2
            ],
        )
        for count_root in (True, False):
            expected = metrics.teds(damaged, truth, count_root=count_root)
            assert math.isclose(teds(damaged, truth, count_root=count_root), expected, abs_tol=1e-9)
            assert teds(truth, truth, count_root=count_root) == 1.0
