"""Deliberately wrong gold answers: plausible, the same shape, and wrong by the scorer's own
reading whatever the gold answer and the table."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hctqa.core.answers import canonical_answer, format_answer, parse_answer
from hctqa.core.gold_control import wrong_answer
from hctqa.core.scoring import gold_values, score_text

CELLS = ["Region", "2019", "Male", "Female", "North", "1", "2", "South", "5", "1,234", "__"]

# The characters the scorer's normalisation cares about: digits, points, zeros, commas,
# letters in both cases, spaces, and signs.
value_text = st.text(alphabet="0123456789.,0aAbBzZ %-", min_size=1, max_size=12).filter(
    lambda v: v.strip() != ""
)


@st.composite
def gold_answers(draw: st.DrawFn) -> str:
    if draw(st.booleans()) and draw(st.booleans()):
        return draw(st.sampled_from(["Yes", "No", "{Yes} || {No}", "{No | Yes}"]))
    columns = draw(st.integers(1, 3))
    rows = draw(
        st.lists(st.lists(value_text, min_size=columns, max_size=columns), min_size=1, max_size=3)
    )
    return format_answer([[v.strip() for v in row] for row in rows])


def shape(answer: str) -> list[int] | str:
    parsed = parse_answer(answer)
    return "yes/no" if isinstance(parsed, str) else [len(row) for row in parsed]


@settings(max_examples=200, deadline=None)
@given(gold=gold_answers(), cells=st.lists(value_text, max_size=8), seed=st.integers(0, 2**32))
def test_it_is_always_wrong_by_the_scorers_reading(gold: str, cells: list[str], seed: int) -> None:
    wrong = wrong_answer(gold, cells, random.Random(seed))
    assert shape(wrong) == shape(gold)
    assert canonical_answer(wrong) == wrong
    # A gold value the scorer reads is missing: copying the wrong answer never scores recall 1.
    assert set(gold_values(gold)) - set(gold_values(wrong))
    parsed = parse_answer(wrong)
    values = [parsed] if isinstance(parsed, str) else [v for row in parsed for v in row]
    assert score_text(gold, " || ".join(values)).recall < 1


def test_a_number_becomes_another_number_of_the_table() -> None:
    wrongs = {wrong_answer("{20}", CELLS, random.Random(seed)) for seed in range(40)}
    assert wrongs <= {"{2019}", "{1}", "{2}", "{5}", "{1,234}"}
    assert len(wrongs) > 1  # drawn at random, not always the same cell


def test_a_label_becomes_another_label_and_the_row_keeps_its_shape() -> None:
    gold = parse_answer("{North | 1} || {South | 5}")
    for seed in range(20):
        wrong = parse_answer(wrong_answer("{North | 1} || {South | 5}", CELLS, random.Random(seed)))
        changed = [
            (g, w)
            for g_row, w_row in zip(gold, wrong, strict=True)
            for g, w in zip(g_row, w_row, strict=True)
            if g != w
        ]
        assert len(changed) == 1
        ((was, now),) = changed
        assert now in CELLS and now not in ("North", "South", "1", "5", "__")
        assert now.replace(",", "").isdigit() == was.isdigit()


def test_without_other_cells_a_digit_changes_and_trailing_zeros_do_not_hide_it() -> None:
    for seed in range(20):
        wrong = wrong_answer("{12.50}", [], random.Random(seed))
        assert gold_values(wrong) != ["12.5"], wrong


def test_yes_and_no_swap() -> None:
    assert wrong_answer("Yes", CELLS, random.Random(0)) == "No"
    assert wrong_answer("No", CELLS, random.Random(0)) == "Yes"
    assert wrong_answer("{Yes}", [], random.Random(0)) == "{No}"


def test_cells_that_cannot_be_values_are_never_used() -> None:
    for seed in range(20):
        wrong = wrong_answer("{a}", ["x | y", "{b}", "__", "   "], random.Random(seed))
        assert wrong in ("{0}", "{1}")
