"""Two checks of the disclosure rule written apart from it (hctqa.core.disclosure works
modulo a prime with a branching search): both build the figures × atoms matrix themselves.

- ``smallest_determined``: exact, by brute force over sets of atoms with rational
  elimination. A set S of atoms holds the support of a nonzero combination of the figures iff
  removing S's columns lowers the matrix's rank. For small systems.
- ``determined_within``: for large systems, in floating point with scipy: the combinations
  vanishing on the atoms of more than ``margin`` questions form a subspace (an SVD null
  space), proportional columns are merged, and a mixed-integer program (HiGHS) looks for one
  resting on at most ``margin`` questions, scaled so that its largest entry is 1.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Hashable, Sequence
from fractions import Fraction
from itertools import combinations

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import Bounds, LinearConstraint, milp

Unknown = tuple[Hashable, Hashable]


def atoms(figures: Sequence[Collection[Unknown]]) -> list[tuple[tuple[int, ...], set[Unknown]]]:
    """The unknowns grouped by the figures that count them (those counted by none left out)."""
    counted_by: dict[Unknown, list[int]] = defaultdict(list)
    for i, figure in enumerate(figures):
        for u in figure:
            counted_by[u].append(i)
    grouped: dict[tuple[int, ...], set[Unknown]] = defaultdict(set)
    for u, where in counted_by.items():
        grouped[tuple(where)].add(u)
    return sorted(grouped.items(), key=lambda kv: sorted(map(repr, kv[1])))


def rank(rows: list[list[Fraction]]) -> int:
    rows = [list(r) for r in rows]
    r = 0
    width = len(rows[0]) if rows else 0
    for c in range(width):
        pivot = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                factor = rows[i][c] / rows[r][c]
                rows[i] = [a - factor * b for a, b in zip(rows[i], rows[r], strict=True)]
        r += 1
    return r


def smallest_determined(
    figures: Sequence[Collection[Unknown]], margin: int
) -> frozenset[Hashable] | None:
    """The questions of a set of atoms resting on at most ``margin`` questions that holds the
    support of a nonzero combination of the figures, or None. Exact; exponential."""
    found = atoms(figures)
    if not found:
        return None
    matrix = [[Fraction(int(i in where)) for where, _ in found] for i in range(len(figures))]
    full = rank(matrix)
    questions = [frozenset(q for q, _ in members) for _, members in found]
    small = [j for j, qs in enumerate(questions) if len(qs) <= margin]
    for size in range(1, len(small) + 1):
        hit = False
        for chosen in combinations(small, size):
            union = frozenset().union(*(questions[j] for j in chosen))
            if len(union) > margin:
                continue
            hit = True
            rest = [[row[j] for j in range(len(found)) if j not in chosen] for row in matrix]
            if rank(rest) < full:
                return union
        if not hit:  # every set of this size rests on too many questions: so do larger ones
            return None
    return None


def determined_within(figures: Sequence[Collection[Unknown]], margin: int) -> bool:
    """Whether some nonzero combination of the figures rests on 1 to ``margin`` questions
    (floating point and HiGHS: for systems too large for ``smallest_determined``).

    First reduced, by two facts about supports: a column (a set of atoms) resting on more
    than ``margin`` questions is zero in every vector sought, so the search keeps the
    combinations vanishing there (a null space); and columns proportional in every vector
    left are zero together, so they are merged. Then a mixed-integer program looks for a
    vector of what is left, its largest entry 1, resting on at most ``margin`` questions."""
    found = atoms(figures)
    if not found:
        return False
    basis = np.array(
        [[float(i in where) for where, _ in found] for i in range(len(figures))], dtype=float
    )
    columns = [frozenset(q for q, _ in members) for _, members in found]
    while True:
        basis = _row_basis(basis)
        if not len(basis):
            return False
        basis, columns = _merge_proportional(basis, columns)
        heavy = [c for c, qs in enumerate(columns) if len(qs) > margin]
        if not heavy:
            break
        keep = null_space(basis[:, heavy].T, rcond=1e-9)
        rest = [c for c in range(len(columns)) if c not in heavy]
        basis = keep.T @ basis[:, rest]
        columns = [columns[c] for c in rest]
    return _milp_finds(basis, columns, margin)


def _row_basis(matrix: np.ndarray) -> np.ndarray:
    if not matrix.size:
        return np.zeros((0, matrix.shape[1]))
    _, s, vt = np.linalg.svd(matrix, full_matrices=False)
    return vt[: int((s > 1e-9 * max(1.0, s[0])).sum())]


def _merge_proportional(
    basis: np.ndarray, columns: list[frozenset]
) -> tuple[np.ndarray, list[frozenset]]:
    groups: dict[tuple, list[int]] = defaultdict(list)
    for c in range(basis.shape[1]):
        col = basis[:, c]
        lead = col[np.argmax(np.abs(col) > 1e-9)]
        if abs(lead) <= 1e-9:
            continue  # zero in every vector: never in a support
        groups[tuple(np.round(col / lead, 7))].append(c)
    firsts = [members[0] for members in groups.values()]
    merged = [frozenset().union(*(columns[c] for c in members)) for members in groups.values()]
    return basis[:, firsts], merged


def _milp_finds(basis: np.ndarray, columns: list[frozenset], margin: int) -> bool:
    dim, n = basis.shape
    touched = sorted(set().union(*columns), key=repr)
    where = {q: i for i, q in enumerate(touched)}
    nq = len(touched)
    # Variables: x (dim, free), v (n, in [-1, 1]), z (n, support), s (n, the entry equal
    # to 1), t (nq, questions touched).
    size = dim + 3 * n + nq
    rows, lower, upper = [], [], []

    def row(entries: dict[int, float], lo: float, hi: float) -> None:
        r = np.zeros(size)
        for k, value in entries.items():
            r[k] = value
        rows.append(r)
        lower.append(lo)
        upper.append(hi)

    v0, z0, s0, t0 = dim, dim + n, dim + 2 * n, dim + 3 * n
    for c in range(n):
        row({**{i: basis[i, c] for i in range(dim)}, v0 + c: -1.0}, 0.0, 0.0)
        row({v0 + c: 1.0, z0 + c: -1.0}, -np.inf, 0.0)
        row({v0 + c: -1.0, z0 + c: -1.0}, -np.inf, 0.0)
        row({v0 + c: 1.0, s0 + c: -2.0}, -1.0, np.inf)  # v_c = 1 where s_c = 1
        for q in columns[c]:
            row({t0 + where[q]: 1.0, z0 + c: -1.0}, 0.0, np.inf)
    row({s0 + c: 1.0 for c in range(n)}, 1.0, 1.0)
    row({t0 + k: 1.0 for k in range(nq)}, 0.0, float(margin))
    lo = np.concatenate([np.full(dim, -np.inf), np.full(n, -1.0), np.zeros(2 * n + nq)])
    hi = np.concatenate([np.full(dim, np.inf), np.full(n, 1.0), np.ones(2 * n + nq)])
    integrality = np.concatenate([np.zeros(dim + n), np.ones(2 * n + nq)])
    result = milp(
        c=np.zeros(size),
        constraints=LinearConstraint(np.array(rows), lower, upper),
        integrality=integrality,
        bounds=Bounds(lo, hi),
    )
    return result.status == 0
