from __future__ import annotations

import pytest

from hctqa.core.answers import (
    AnswerFormatError,
    answer_fits_question,
    canonical_answer,
    parse_answer,
)


def test_rows_of_values_in_braces() -> None:
    assert parse_answer("{Psychology | 86} || {Linguistics | 90}") == [
        ["Psychology", "86"],
        ["Linguistics", "90"],
    ]
    assert parse_answer("{1146}") == [["1146"]]


def test_spacing_is_forgiven_and_made_canonical() -> None:
    assert canonical_answer("  {a|b}||{c |d }  ") == "{a | b} || {c | d}"


def test_yes_and_no_are_bare_in_any_case() -> None:
    assert canonical_answer("yes") == "Yes"
    assert canonical_answer(" NO ") == "No"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "The answer is empty"),
        ("42", "Row 1 must be wrapped in braces, like {a | b}: '42'"),
        ("{a} ||", "Row 2 is empty: rows are joined by ' || '"),
        ("{a | } ", "Row 1, value 2 is empty"),
        ("{a | 1} || {b}", "Row 2 has 1 value but row 1 has 2: every row reports the same columns"),
        ("{a} {b}", "Row 1 has a brace inside it; join rows with ' || ': '{a} {b}'"),
        ("{a | {b}}", "Row 1 has a brace inside it"),
        ("{a} | {b}", "Row 1 has a brace inside it"),
        ("Maybe", "Row 1 must be wrapped in braces"),
    ],
)
def test_broken_answers_are_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(AnswerFormatError) as info:
        parse_answer(text)
    assert str(info.value).startswith(reason)


def test_most_release_answers_follow_the_format(release_tables: list) -> None:
    golds = [q.gold_answer for t in release_tables for q in t.questions]
    ok = 0
    for gold in golds:
        try:
            parse_answer(gold)
            ok += 1
        except AnswerFormatError:
            pass
    # The release has some sloppy answers (ragged rows, stray braces); new ones may not.
    assert ok / len(golds) > 0.97


def test_a_yes_no_question_and_its_answer_go_together() -> None:
    assert answer_fits_question(parse_answer("yes"), yes_no=True) is None
    assert answer_fits_question(parse_answer("{Yes} || {no}"), yes_no=True) is None
    assert "answered Yes or No" in answer_fits_question(parse_answer("{1}"), yes_no=True)
    assert "tick Yes/No" in answer_fits_question(parse_answer("No"), yes_no=False)
    assert answer_fits_question(parse_answer("{North | 1}"), yes_no=False) is None
