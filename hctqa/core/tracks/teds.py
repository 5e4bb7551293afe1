"""TEDS, exactly as ``extraction.metrics.teds`` computes it, in a few milliseconds.

``metrics.teds`` runs APTED, a general tree edit distance in pure Python: seconds for a
table of a few hundred cells (3.7 s for the largest released synthetic table), too slow for
a board that scores thousands of items per submission. A table's tree is special: the root,
its rows, and each row's cells as leaves. For such trees Zhang and Shasha's forest
recurrence over postorder prefixes is exact and needs only O(n1 · n2) states, and each
row of its table can be computed at once with numpy:

- ``fd[p][q]``: the distance between the first ``p`` nodes of one tree in postorder (a
  forest: whole rows, then the first cells of the next row, on their own) and the first
  ``q`` of the other:
  ``min(fd[p-1][q] + 1, fd[p][q-1] + 1, fd[lm(p)-1][lm(q)-1] + γ(p, q) + δ(p, q))``,
  where ``lm`` is a node's leftmost leaf, ``γ`` the rename cost and ``δ`` the distance
  between the two nodes' children (two rows: the weighted edit distance between their
  cell sequences; a row and a cell: the row's cells, all deleted);
- the roots are always mapped to each other in an optimal mapping (mapping them instead of
  anything else never costs more), so the trees' distance is ``fd[n1][n2]``;
- the last term ``min(a[r] + (q - r))`` over ``r ≤ q`` of a row is ``q + cummin(a - r)``;
  the cell sequences of every row of one table against one row of the other are the same
  computation with the minimum restarted at each row.

The costs are ``metrics``' own: renaming a cell costs 1 when the spans differ, otherwise the
normalised Levenshtein distance of the texts; inserting or deleting a node costs 1; rows
rename for free. ``tests/core/tracks/test_teds.py`` checks the result against
``metrics.teds`` on generated and real tables.
"""

from __future__ import annotations

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from hctqa.core.extraction.grid import Grid


def _rows(grid: Grid) -> list[list[int]]:
    """Each row's cells (their positions in ``grid.cells``), as ``metrics._tree`` builds the
    tree: cells in their order, under the row they start in."""
    rows: list[list[int]] = [[] for _ in range(grid.n_rows)]
    for index, cell in enumerate(grid.cells):
        rows[cell.row].append(index)
    return rows


def _cell_costs(one: Grid, other: Grid) -> np.ndarray:
    """Renaming cell i of ``one`` into cell j of ``other``."""
    if not one.cells or not other.cells:
        return np.zeros((len(one.cells), len(other.cells)))
    costs = cdist(
        [c.text for c in one.cells],
        [c.text for c in other.cells],
        scorer=Levenshtein.normalized_distance,
        dtype=np.float64,
        workers=1,
    )
    spans1 = np.array([(c.rowspan, c.colspan) for c in one.cells])
    spans2 = np.array([(c.rowspan, c.colspan) for c in other.cells])
    differ = (spans1[:, None, :] != spans2[None, :, :]).any(axis=2)
    costs[differ] = 1.0
    return costs


def _row_distances(rows1: list[list[int]], rows2: list[list[int]], costs: np.ndarray) -> np.ndarray:
    """The edit distance between the cells of every row of one tree and every row of the
    other (insert or delete a cell: 1; rename: ``costs``)."""
    lengths = np.array([len(r) for r in rows2], dtype=np.int64)
    out = np.empty((len(rows1), len(rows2)))
    if not rows2:
        return out
    # Slots: for each row of the other tree, one slot per prefix of its cells (0 … len).
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    ends = starts + lengths
    size = int(ends[-1]) + 1
    local = np.arange(size) - np.repeat(starts, lengths + 1)
    segment = np.repeat(np.arange(len(rows2)), lengths + 1)
    first = local == 0
    # The cell behind each slot that is not a row's first.
    cell_of = np.full(size, -1, dtype=np.int64)
    cell_of[~first] = np.concatenate([np.array(r, dtype=np.int64) for r in rows2 if r] or [[]])
    big = float(size + max((len(r) for r in rows1), default=0) + 2) * 2
    offset = segment * big
    for i, row in enumerate(rows1):
        d = local.astype(np.float64)  # no cell of this row yet: insert the other's
        for a, cell in enumerate(row, start=1):
            # The slots of a row's start are set below; zeros keep them finite meanwhile.
            rename = np.zeros(size)
            rename[~first] = costs[cell, cell_of[~first]]
            shifted = np.zeros(size)
            shifted[1:] = d[:-1]
            x = np.minimum(d + 1.0, shifted + rename)
            x[first] = a
            # d[t] = min over r ≤ t in the same row of x[r] + (t - r)
            d = local + np.minimum.accumulate(x - local - offset) + offset
        out[i] = d[ends]
    return out


def tree_edit_distance(one: Grid, other: Grid) -> float:
    """The tree edit distance between two tables' ``table/tr/td`` trees."""
    rows1, rows2 = _rows(one), _rows(other)
    costs = _cell_costs(one, other)
    row_costs = _row_distances(rows1, rows2, costs)

    def postorder(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each node in postorder: its kind's index (cell index, or row index as
        -1 - row), its leftmost leaf's position (1-based) and its child count."""
        index, leftmost, children = [], [], []
        for r, row in enumerate(rows):
            start = len(index) + 1
            for cell in row:
                index.append(cell)
                leftmost.append(len(index))
                children.append(0)
            index.append(-1 - r)
            leftmost.append(start)
            children.append(len(row))
        as_ints = [np.array(v, dtype=np.int64) for v in (index, leftmost, children)]
        return as_ints[0], as_ints[1], as_ints[2]

    index1, left1, kids1 = postorder(rows1)
    index2, left2, kids2 = postorder(rows2)
    n1, n2 = len(index1), len(index2)
    # match[p, q]: mapping node p onto node q, renaming it, plus their children's distance.
    is_cell1, is_cell2 = index1 >= 0, index2 >= 0
    match = np.empty((n1, n2))
    both_cells = np.ix_(is_cell1, is_cell2)
    match[both_cells] = costs[np.ix_(index1[is_cell1], index2[is_cell2])]
    both_rows = np.ix_(~is_cell1, ~is_cell2)
    match[both_rows] = row_costs[np.ix_(-1 - index1[~is_cell1], -1 - index2[~is_cell2])]
    match[np.ix_(is_cell1, ~is_cell2)] = 1.0 + kids2[~is_cell2][None, :]
    match[np.ix_(~is_cell1, is_cell2)] = 1.0 + kids1[~is_cell1][:, None]
    q = np.arange(n2 + 1, dtype=np.float64)
    fd = np.empty((n1 + 1, n2 + 1))
    fd[0] = q
    before2 = left2 - 1  # fd column of the forest left of each node's subtree
    a = np.empty(n2 + 1)
    for p in range(1, n1 + 1):
        a[0] = p
        np.minimum(fd[p - 1, 1:] + 1.0, fd[left1[p - 1] - 1, before2] + match[p - 1], out=a[1:])
        a -= q
        np.minimum.accumulate(a, out=fd[p])
        fd[p] += q
    return float(fd[n1, n2])


def teds(predicted: Grid, truth: Grid, *, count_root: bool = True) -> float:
    """``extraction.metrics.teds``, computed as the module says."""
    if predicted == truth:
        return 1.0
    size1 = predicted.n_rows + len(predicted.cells) + count_root
    size2 = truth.n_rows + len(truth.cells) + count_root
    if max(size1, size2) == 0:
        return 1.0
    return max(0.0, 1.0 - tree_edit_distance(predicted, truth) / max(size1, size2))
