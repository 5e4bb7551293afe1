from __future__ import annotations

from hctqa.core.disclosure import DISCLOSURE_MARGIN, withheld_groups


def ids(prefix: str, n: int) -> frozenset[str]:
    return frozenset(f"{prefix}{i}" for i in range(n))


def test_a_group_nested_in_another_by_one_question_is_withheld() -> None:
    # The attack: row_nesting over 126 hidden questions, balanced_row_nesting over 125 of them.
    row_nesting = ids("q", 126)
    balanced = ids("q", 125)
    overall = ids("q", 900)
    assert withheld_groups([row_nesting, balanced], published=[overall]) == [False, True]
    # Containing, rather than nested: the same.
    assert withheld_groups([balanced, row_nesting], published=[overall]) == [False, True]


def test_a_group_near_a_published_figure_is_withheld() -> None:
    overall = ids("q", 300)
    assert withheld_groups([ids("q", 299), ids("q", 290), ids("q", 289)], published=[overall]) == [
        True,
        True,
        False,
    ]


def test_small_groups_are_withheld_and_groups_without_hidden_questions_are_not() -> None:
    small = ids("q", DISCLOSURE_MARGIN)
    big_enough = ids("r", DISCLOSURE_MARGIN + 1)
    assert withheld_groups([small, big_enough, frozenset()], published=[]) == [True, False, False]


def test_groups_differing_by_more_than_the_margin_are_published() -> None:
    a = ids("a", 50)
    b = frozenset(list(a)[:20]) | ids("b", 30)  # same size as a, 60 questions apart
    assert withheld_groups([a, b], published=[]) == [False, False]
    # Identical groups give nothing away by subtraction.
    assert withheld_groups([a, frozenset(a)], published=[]) == [False, False]


def test_a_withheld_group_is_not_compared_with_later_ones() -> None:
    overall = ids("q", 100)
    near_overall = ids("q", 95)  # withheld
    near_that = ids("q", 85)  # 10 from the withheld group, 15 from the overall: published
    assert withheld_groups([near_overall, near_that], published=[overall]) == [True, False]
