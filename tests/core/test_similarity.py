from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hctqa.core.similarity import content_words, near_duplicates, similarity


def test_a_reworded_frame_is_a_near_duplicate() -> None:
    a = "How many women lived in the South in 2020?"
    b = "In 2020, what was the number of women living in the south"
    assert similarity(a, "how many WOMEN lived in the south in 2020") == 1.0
    assert similarity(a, "In 2020 how many women lived in the South?") == 1.0
    assert similarity(a, b) >= 0.5  # "lived"/"living" differ: alike, but below the threshold


def test_a_different_year_region_or_measure_is_a_different_question() -> None:
    a = "How many women lived in the South in 2020?"
    for other in (
        "How many women lived in the South in 2019?",
        "How many women lived in the North in 2020?",
        "How many men lived in the South in 2020?",
    ):
        assert similarity(a, other) < 0.8
        assert near_duplicates(a, [("q1", other)]) == []


def test_near_duplicates_are_listed_most_alike_first() -> None:
    found = near_duplicates(
        "Which region had the most women in 2020?",
        [
            ("t--M0", "Which region had the most women in 2020"),
            ("t--M1", "Which region had the fewest men in 2019?"),
            ("t--M2", "In 2020 which region had the most women, and how many?"),
        ],
        threshold=0.7,
    )
    assert [d.question_id for d in found] == ["t--M0", "t--M2"]
    assert found[0].score == 1.0


def test_function_words_and_punctuation_do_not_count() -> None:
    assert content_words("What is the total of A, in 2020?") == {"2020"}
    assert content_words("Is 1,234.5 more than 7?") == {"1,234.5", "more", "7"}


@given(st.text(max_size=80), st.text(max_size=80))
def test_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    assert similarity(a, b) == similarity(b, a)
    assert 0.0 <= similarity(a, b) <= 1.0


@given(st.text(min_size=1, max_size=80))
def test_a_question_is_a_duplicate_of_itself(a: str) -> None:
    assert similarity(a, a) == 1.0
