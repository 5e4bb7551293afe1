from __future__ import annotations

from hctqa.core.disclosure import (
    DISCLOSURE_MARGIN,
    too_few,
    withheld_groups,
    withheld_whole_and_parts,
)


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


def test_a_figure_on_one_to_ten_hidden_questions_is_too_few() -> None:
    assert [too_few(n) for n in (0, 1, DISCLOSURE_MARGIN, DISCLOSURE_MARGIN + 1)] == [
        False,
        True,
        True,
        False,
    ]


def test_a_source_on_one_guess_is_withheld_and_so_is_the_rest_it_would_give() -> None:
    # The attack: every psa answer given, one guess per small source, the rest left out.
    parts = {"psa": ids("psa", 600), "pak": ids("pak", 1), "census": ids("census", 1)}
    whole = frozenset().union(*parts.values())
    # pak and census alone are too few; psa is shown only if the whole minus it (2) is
    # not: it is withheld too, and only the whole is shown.
    assert withheld_whole_and_parts(whole, parts) == (
        False,
        {"psa": True, "pak": True, "census": True},
    )


def test_the_withheld_parts_take_the_smallest_shown_one_along() -> None:
    parts = {"psa": ids("psa", 30), "pak": ids("pak", 20), "census": ids("census", 5)}
    whole = frozenset().union(*parts.values())
    # census (5) is withheld; the whole minus psa and pak would give it: pak goes too.
    assert withheld_whole_and_parts(whole, parts) == (
        False,
        {"psa": False, "pak": True, "census": True},
    )


def test_parts_without_hidden_questions_and_a_small_whole() -> None:
    # Sources with public gold only hide nothing; a whole of three hidden questions is
    # withheld with its one hidden source, and then nothing gives it away.
    parts = {"psa": frozenset(), "pak": ids("pak", 3), "arxiv": frozenset()}
    assert withheld_whole_and_parts(ids("pak", 3), parts) == (
        True,
        {"psa": False, "pak": True, "arxiv": False},
    )
    big = {"psa": ids("psa", 40), "pak": ids("pak", 40)}
    assert withheld_whole_and_parts(ids("psa", 40) | ids("pak", 40), big) == (
        False,
        {"psa": False, "pak": False},
    )
