"""The disclosure rule (hctqa.core.disclosure) against checks written apart from it
(tests/core/disclosure_oracle.py): on random memberships, no combination of the figures it
shows rests on 1 to the margin questions, and each figure it withholds would allow one."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hctqa.core import disclosure
from hctqa.core.disclosure import DISCLOSURE_MARGIN, disclosed
from tests.core.disclosure_oracle import determined_within, smallest_determined


def qs(prefix: str, n: int, start: int = 0) -> set[tuple[str, int]]:
    return {(f"{prefix}{i}", 0) for i in range(start, start + n)}


def test_the_issues_triple_is_withheld_though_every_pair_differs_by_many() -> None:
    # returned_columns_expression (126), its in-table (18) and not-in-table (109) parts:
    # 18 + 109 − 126 leaves one question, counted in a part and not in the whole.
    overall = qs("q", 992)
    expression = qs("q", 126)
    in_table = qs("q", 18)
    not_in_table = qs("q", 108, start=18) | {("q500", 0)}
    assert disclosed([overall, expression, in_table, not_in_table]) == [True, True, True, False]
    # Offered in another order, the last of the three is the one withheld.
    assert disclosed([overall, not_in_table, in_table, expression]) == [True, True, True, False]


def test_small_figures_are_withheld_and_those_on_no_hidden_question_are_shown() -> None:
    small = qs("q", DISCLOSURE_MARGIN)
    big_enough = qs("r", DISCLOSURE_MARGIN + 1)
    assert disclosed([small, big_enough, set()]) == [False, True, True]


def test_figures_that_follow_from_those_shown_are_shown() -> None:
    # The same questions again (the two versions of a group where no answer differs), and a
    # whole made of parts shown: they add nothing.
    a, b = qs("a", 40), qs("b", 30)
    assert disclosed([a | b, a, set(a), b]) == [True, True, True, True]


def test_a_group_nested_in_another_by_one_question_is_withheld() -> None:
    row_nesting, balanced = qs("q", 126), qs("q", 125)
    assert disclosed([qs("q", 900), row_nesting, balanced]) == [True, True, False]


def test_two_scores_of_one_question_are_one_question() -> None:
    # Two figures differ only in the two scores of q0 (its answer read differently by the
    # two versions): together they give one question away, though two unknowns differ.
    older = qs("q", 50)
    newer = (older - {("q0", 0)}) | {("q0", 1)}
    assert disclosed([older, newer]) == [True, False]


def test_a_search_past_its_limit_withholds_its_figure(monkeypatch) -> None:
    # Five random halves of 40 questions beside the whole: all may be shown, but past the
    # third, proving it takes more than one branch.
    rng = random.Random(3)
    whole = qs("q", 40)
    figures = [whole] + [{u for u in sorted(whole) if rng.random() < 0.5} for _ in range(5)]
    assert disclosed(figures) == [True] * 6
    disclosure.forget_decisions()
    monkeypatch.setattr(disclosure, "SEARCH_LIMIT", 1)
    assert disclosed(figures) == [True, True, True, False, False, False]
    disclosure.forget_decisions()


# --- Random memberships ---------------------------------------------------------------------


MARGIN = 3


@st.composite
def systems(draw, max_unknowns: int = 2) -> list[set[tuple[str, int]]]:
    """Figures over up to 12 questions, each question with one or more unknowns; each figure
    counts a random set of unknowns (mostly one per question, as a figure does)."""
    n = draw(st.integers(4, 12))
    unknowns = {f"q{i}": draw(st.integers(1, max_unknowns)) for i in range(n)}
    figures = []
    for _ in range(draw(st.integers(1, 6))):
        figure = set()
        for q, k in unknowns.items():
            if draw(st.booleans()):
                figure.add((q, draw(st.integers(0, k - 1))))
        figures.append(figure)
    return figures


@given(systems(max_unknowns=1))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_each_figure_is_shown_exactly_when_nothing_small_follows(figures) -> None:
    flags = disclosed(figures, margin=MARGIN)
    shown: list[set[tuple[str, int]]] = []
    for figure, flag in zip(figures, flags, strict=True):
        leak = smallest_determined([*shown, figure], MARGIN)
        if flag:
            assert leak is None, f"shown, but {sorted(leak)} follow"
            shown.append(figure)
        else:
            assert leak is not None, "withheld, though nothing small follows"


@given(systems(max_unknowns=3))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_with_several_scores_per_question_nothing_small_follows_from_what_is_shown(
    figures,
) -> None:
    flags = disclosed(figures, margin=MARGIN)
    shown = [f for f, flag in zip(figures, flags, strict=True) if flag]
    assert smallest_determined(shown, MARGIN) is None


@given(systems(max_unknowns=1))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_floating_point_check_agrees_with_the_exact_one(figures) -> None:
    # The check used on the real data, held against the exact one where both can run.
    assert determined_within(figures, MARGIN) == (smallest_determined(figures, MARGIN) is not None)


@pytest.mark.parametrize("margin", [1, DISCLOSURE_MARGIN])
def test_the_margin_is_the_callers(margin: int) -> None:
    assert disclosed([qs("q", margin + 1), qs("q", margin)], margin=margin) == [True, False]
