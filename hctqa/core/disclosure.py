"""Which figures on hidden (test-split) questions may be shown without giving away the scores
of a few hidden questions. Every figure on test-split questions goes through here: the overall
and per-source scores and the breakdown groups, under both rules versions, for everyone, the
owner included.

A figure is a mean over questions, shown with how many it counts, so it gives the sum of their
scores. Questions whose gold is public can be scored by anyone and hide nothing, so a figure
is, for a reader, the sum of the scores of its hidden questions: the *unknowns*. Which hidden
questions each figure counts is public (the groups' memberships are in the API), so a reader
can take any linear combination of the figures shown. The rule: **no nonzero combination of
the figures shown may rest on 1 to** ``DISCLOSURE_MARGIN`` **hidden questions**, whatever its
coefficients. Pairs are not enough: ``18·r(expression_in_table) + 109·r(expression_not_in_table)
− 126·r(expression)`` isolates one question although every pair of the three differs by many.

An unknown is a pair (question id, which score): one submission's answer to a question has one
score under both rules versions when the versions read the same values from it, and two
unknowns of the same question otherwise (a version left it out, or normalised it differently).
What a combination "rests on" is the questions of the unknowns it weighs.

The method, and why it is exact:

- *Atoms.* Unknowns counted by exactly the same figures are interchangeable: every combination
  weighs them alike. The figures are rows of a 0/1 matrix over the atoms, and a combination
  is a vector ``v`` of that matrix's row space; it rests on the atoms where ``v`` is nonzero.
  Its minimal supports are the cocircuits of the matrix's column matroid.
- *Greedy, in the caller's priority order.* The figures already shown (``R``) reveal nothing
  on 1 to the margin questions. A candidate ``f`` adds the combinations ``c·f + u`` (``u`` in
  ``R``, ``c ≠ 0``); dividing by ``c``, it may join iff the coset ``f + R`` holds no vector
  resting on 1 to the margin questions (a decoding question: ``f``'s distance to ``R``).
  If ``f`` is in ``R`` already it reveals nothing new and is shown.
- *The search is exhaustive.* Vectors of the coset are ``b + z·A`` (``b`` = ``f`` reduced by
  ``R``, ``A`` = a basis of ``R``). Each atom asks ``z`` to lie on a hyperplane (the atom's
  entry is zero) or pays its questions. The search branches on the heaviest undecided atom
  (zero, or paid), and prunes a branch only for a reason that holds for every vector in it:
  the questions already paid exceed the margin, an atom assumed nonzero is forced to zero, or
  an atom heavier than what is left must be zero (so it is imposed, not branched on). Atoms
  whose entries are proportional in every vector of the branch are zero together, so they are
  merged, their weights added. A branch where every atom is decided holds exactly one vector;
  it is found if it rests on few enough questions. Nothing is ever skipped by a guess.
- *Arithmetic.* Elimination runs modulo the prime ``PRIME``. That is exact for the rational
  question as long as the figures' rank modulo ``PRIME`` equals their rational rank: then a
  rational vector resting on few questions, scaled to coprime integers, reduces to a nonzero
  vector modulo ``PRIME`` of the row space with no larger support, and the search finds it.
  A candidate independent modulo ``PRIME`` raises both ranks by one. A candidate dependent
  modulo ``PRIME`` is taken as dependent over the rationals only when it is so modulo enough
  further primes that their product exceeds Hadamard's bound on the minors of a 0/1 matrix
  (a nonzero minor would be divisible by all of them); otherwise it is withheld.
- *Weights.* A question with several unknowns weighs ``1/k`` on each of its ``k`` (in whole
  units of their least common multiple), so a support's weight never exceeds the number of
  questions it rests on: no combination on few questions is missed, at the price of a little
  more caution where a question has several unknowns.
- *A bound on the work.* A search that takes more than ``SEARCH_LIMIT`` branches withholds
  its figure: the rule may withhold too much, never too little. On the gemma sample's official
  test answers, with every breakdown under both versions, no decision takes 200 branches.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Sequence
from functools import lru_cache

import numpy as np

# A shown combination rests on none or more than this many hidden questions.
DISCLOSURE_MARGIN = 10

# 2^31 − 1: the product of two residues fits in a 64-bit integer.
PRIME = 2_147_483_647

# Branches one decision may take before its figure is withheld.
SEARCH_LIMIT = 20_000

Unknown = tuple[Hashable, Hashable]  # (question id, which of its scores)


def disclosed(
    candidates: Sequence[Collection[Unknown]], *, margin: int = DISCLOSURE_MARGIN
) -> list[bool]:
    """For each candidate figure in priority order (each the set of hidden unknowns it counts),
    whether it is shown: it is, when together with the candidates shown before it no nonzero
    linear combination rests on 1 to ``margin`` hidden questions. A figure on no hidden
    unknown is always shown."""
    key = tuple(frozenset(c) for c in candidates)
    return list(_disclosed(key, margin))


@lru_cache(maxsize=32)
def _disclosed(candidates: tuple[frozenset[Unknown], ...], margin: int) -> tuple[bool, ...]:
    # Kept: a re-scoring of many files with the same structure decides once.
    shown = _Shown(candidates, margin)
    return tuple(shown.admit(c) for c in candidates)


def forget_decisions() -> None:
    """Empty the decisions kept for figures of the same structure (tests, benchmarks)."""
    _disclosed.cache_clear()


class _TooLong(Exception):
    pass


class _Shown:
    """The figures shown so far: a basis of their row space over the atoms, modulo PRIME, in
    reduced row echelon form."""

    def __init__(self, candidates: Sequence[frozenset[Unknown]], margin: int) -> None:
        unknowns = sorted({u for c in candidates for u in c}, key=repr)
        self.index = {u: i for i, u in enumerate(unknowns)}
        per_question: dict[Hashable, int] = {}
        for question, _ in unknowns:
            per_question[question] = per_question.get(question, 0) + 1
        unit = math.lcm(1, *per_question.values())
        self.unit_weight = np.array([unit // per_question[q] for q, _ in unknowns], np.int64)
        self.budget = margin * unit
        # Every unknown starts in one atom, which no figure shown counts yet.
        self.atom_of = np.zeros(len(unknowns), np.int64)
        self.rows = np.zeros((0, 1), np.int64)
        self.pivots: list[int] = []
        self.figures: list[np.ndarray] = []  # the independent figures shown, as unknown indices

    def admit(self, candidate: frozenset[Unknown]) -> bool:
        if not candidate:
            return True
        members = np.fromiter((self.index[u] for u in candidate), np.int64, len(candidate))
        self._split_atoms(members)
        f = np.zeros(self.rows.shape[1], np.int64)
        f[self.atom_of[members]] = 1
        b = (f - f[self.pivots] @ self.rows) % PRIME if self.pivots else f
        if not b.any():
            return self._dependent(members)
        weights = np.bincount(self.atom_of, self.unit_weight, self.rows.shape[1]).astype(np.int64)
        try:
            if _near(np.vstack([b, self.rows]), weights, self.budget):
                return False
        except _TooLong:
            return False
        self._add(b, weights)
        self.figures.append(members)
        return True

    def _split_atoms(self, members: np.ndarray) -> None:
        inside = np.zeros(len(self.atom_of), np.int64)
        inside[members] = 1
        parents, self.atom_of = np.unique(self.atom_of * 2 + inside, return_inverse=True)
        parents //= 2
        self.rows = self.rows[:, parents]
        # A pivot atom split in two keeps one part as its pivot: both parts are equal columns.
        first = {}
        for new, old in enumerate(parents.tolist()):
            first.setdefault(old, new)
        self.pivots = [first[p] for p in self.pivots]

    def _add(self, b: np.ndarray, weights: np.ndarray) -> None:
        # The heaviest atom as pivot: the search makes heavy atoms zero first, and a pivot's
        # column is nonzero in one row only, so that costs one row's update.
        support = np.flatnonzero(b)
        c = int(support[np.argmax(weights[support])])
        b = b * pow(int(b[c]), -1, PRIME) % PRIME
        if len(self.rows):
            self.rows = (self.rows - self.rows[:, [c]] * b[None, :] % PRIME) % PRIME
        self.rows = np.vstack([self.rows, b])
        self.pivots.append(c)

    def _dependent(self, members: np.ndarray) -> bool:
        """Whether a candidate dependent modulo PRIME is dependent over the rationals, so that
        it adds nothing: it is, if it is so modulo primes whose product exceeds Hadamard's
        bound on the (r+1)-minors of a 0/1 matrix, (r+1)^((r+1)/2)."""
        if any(np.array_equal(np.sort(members), np.sort(f)) for f in self.figures):
            return True
        n = len(self.figures) + 1
        matrix = np.zeros((n, self.rows.shape[1]), np.int64)
        for i, f in enumerate([*self.figures, members]):
            matrix[i, self.atom_of[f]] = 1
        needed = n / 2 * math.log2(n) - math.log2(PRIME)
        for prime in _primes_below(PRIME):
            if needed < 0:
                return True
            if _rank(matrix, prime) == n:
                return False
            needed -= math.log2(prime)
        return False  # pragma: no cover - the primes below 2^31 run out past any real rank


def _near(m: np.ndarray, w: np.ndarray, budget: int) -> bool:
    """Whether some vector ``m[0] + z·m[1:]`` (rows of ``m[1:]`` independent, ``m[0]`` not
    in their span) rests on at most ``budget`` weight of columns (``w``)."""
    branches = [0]

    def search(m: np.ndarray, w: np.ndarray, off: np.ndarray, paid: int, merged: bool) -> bool:
        branches[0] += 1
        if branches[0] > SEARCH_LIMIT:
            raise _TooLong
        while True:
            decided = ~m[1:].any(axis=0)
            zero = decided & (m[0] == 0)
            if (zero & off).any():
                return False  # an entry assumed nonzero is zero in every vector left
            paid += int(w[decided & ~zero & ~off].sum())
            if paid > budget:
                return False
            keep = ~decided
            m, w, off = m[:, keep], w[keep], off[keep]
            if len(m) == 1 or not (~off).any():
                return True  # one vector left, or every entry left may be nonzero: paid
            heavy = np.flatnonzero(~off & (w > budget - paid))
            if len(heavy):
                m = _eliminate(m, int(heavy[0]))  # too heavy to pay: it is zero
                merged = False
            elif not merged:
                m, w, off, paid = _merge(m, w, off, paid)
                merged = True
            else:
                break
        free = np.flatnonzero(~off)
        c = int(free[np.argmax(w[free])])
        if search(_eliminate(m, c), w, off, paid, False):
            return True
        off = off.copy()
        off[c] = True
        return search(m, w, off, paid + int(w[c]), True)

    return search(m, w, np.zeros(len(w), bool), 0, False)


def _eliminate(m: np.ndarray, c: int) -> np.ndarray:
    """The vectors of ``m``'s family that are zero in column ``c``: one direction fewer."""
    j = 1 + int(np.flatnonzero(m[1:, c])[0])
    pivot = m[j] * pow(int(m[j, c]), -1, PRIME) % PRIME
    rows = np.flatnonzero(m[:, c])
    rows = rows[rows != j]  # only rows with an entry in the column change
    m = np.delete(m, j, axis=0)
    rows[rows > j] -= 1
    m[rows] = (m[rows] - m[rows, c][:, None] * pivot[None, :] % PRIME) % PRIME
    return m


def _merge(
    m: np.ndarray, w: np.ndarray, off: np.ndarray, paid: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Merge columns proportional to each other (zero together in every vector of the
    family), adding their weights; a column merged with one assumed nonzero is paid too."""
    lead = m[np.argmax(m != 0, axis=0), np.arange(m.shape[1])]
    inverses = np.array([pow(int(x), -1, PRIME) for x in lead.tolist()], np.int64)
    normal = m * inverses[None, :] % PRIME
    # Columns are grouped by a hash of their normal form, then compared in full.
    hashes = _HASH_WEIGHTS[: len(m)] @ normal if len(m) <= len(_HASH_WEIGHTS) else normal[0]
    _, first, group = np.unique(hashes, return_index=True, return_inverse=True)
    if len(first) == m.shape[1]:
        return m, w, off, paid
    if not np.array_equal(normal[:, first[group]], normal):
        _, first, group = np.unique(normal.T, axis=0, return_index=True, return_inverse=True)
        group = group.ravel()
    weights = np.bincount(group, w).astype(np.int64)
    any_off = np.bincount(group, off).astype(bool)
    paid += int(w[any_off[group] & ~off].sum())
    return m[:, first], weights, any_off, paid


# Random odd multipliers for hashing columns (the products wrap around: only a hash).
_HASH_WEIGHTS = np.random.default_rng(20251).integers(1, 2**62, 4096, dtype=np.int64) | 1


def _rank(matrix: np.ndarray, prime: int) -> int:
    """The rank of a matrix of small integers modulo ``prime`` (< 2^31)."""
    m = matrix % prime
    rank = 0
    for i in range(len(m)):
        nonzero = np.flatnonzero(m[i])
        if not len(nonzero):
            continue
        c = int(nonzero[0])
        m[i] = m[i] * pow(int(m[i, c]), -1, prime) % prime
        below = m[i + 1 :]
        m[i + 1 :] = (below - np.outer(below[:, c], m[i]) % prime) % prime
        rank += 1
    return rank


def _primes_below(limit: int):
    """Primes below ``limit`` (< 3.4·10^14), largest first (deterministic Miller-Rabin)."""
    n = limit - 1
    while n > 2:
        if _is_prime(n):
            yield n
        n -= 1


def _is_prime(n: int) -> bool:
    if n % 2 == 0:
        return n == 2
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in (2, 3, 5, 7, 11, 13, 17):
        if a % n == 0:
            continue
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True
