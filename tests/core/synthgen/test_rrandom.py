"""R's random numbers, rounding and printing, against values R gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from hctqa.core.synthgen.collation import windows_sorted
from hctqa.core.synthgen.params import read_params
from hctqa.core.synthgen.rrandom import RRandom, r_colon, r_format, r_round, sample_r
from hctqa.core.synthgen.tables import relational_table, table_specs


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (1, [0.2655087, 0.3721239, 0.5728534]),  # set.seed(1); runif(3)
        (42, [0.9148060]),
        (123, [0.2875775]),
        (0, [0.8966972]),
    ],
)
def test_runif_gives_rs_values(seed: int, expected: list[float]) -> None:
    rng = RRandom(seed)
    assert [round(rng.unif_rand(), 7) for _ in expected] == expected


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (1, [9, 4, 7, 1, 2, 5, 3, 10, 6, 8]),  # set.seed(1); sample(10), R >= 3.6
        (42, [1, 5, 10, 8, 2, 4, 6, 9, 7, 3]),
        (123, [3, 10, 2, 8, 6, 9, 1, 7, 5, 4]),
    ],
)
def test_sample_gives_rs_permutations(seed: int, expected: list[int]) -> None:
    assert RRandom(seed).sample_int(10) == expected


def test_a_single_number_is_sampled_as_one_to_that_number() -> None:
    assert sorted(sample_r(RRandom(5), [4])) == [1, 2, 3, 4]
    assert r_colon(3, 1) == [3, 2, 1]


def test_even_one_choice_costs_a_draw() -> None:
    a, b = RRandom(7), RRandom(7)
    a.unif_index(1)
    b.unif_rand()
    assert a.unif_rand() == b.unif_rand()


def test_burning_a_permutation_draws_what_sampling_it_draws() -> None:
    for n in (210, 5985, 70000):
        a, b = RRandom(3), RRandom(3)
        a.burn_permutation(n)
        b.sample_int(n)
        assert a.words_drawn == b.words_drawn
        assert a.unif_rand() == b.unif_rand()


def test_round_is_rs_not_pythons() -> None:
    assert r_round(80.735) == 80.74 and round(80.735, 2) == 80.73
    assert [r_round(x) for x in (0.125, 2.675, -1.555, 73.5, 47.666666)] == [
        0.12,
        2.67,
        -1.55,
        73.5,
        47.67,
    ]


def test_numbers_print_as_r_prints_them() -> None:
    values = [1e5, 123456, 0.0001, 73.5, -0.0, 41.809999999999995, 0.1 + 0.2, -2.5, 70.75]
    assert [r_format(v) for v in values] == [
        "1e+05",
        "123456",
        "1e-04",
        "73.5",
        "0",
        "41.81",
        "0.3",
        "-2.5",
        "70.75",
    ]


def test_the_spec_worked_example_comes_from_seed_1844(data_dir: Path) -> None:
    """Number_of_students_set99_4 (SYNTHETIC.md §5): spec 369, replica 4, seed 1844."""
    params = read_params(data_dir / "hctqa-synthetic")
    spec = next(s for s in table_specs(params) if s.name == "Number_of_students_set99")
    assert (spec.itab, spec.seed(4)) == (369, 1844)
    table = relational_table(params, spec, 4)
    assert table.values == [99, 33, 87, 97, 14, 12, 51, 71]
    assert table.rows[1] == ("Non-Qatari", "2021/2022", "Government")


def test_windows_collation_puts_underscore_before_digits_and_dash_before_space() -> None:
    names = ["x_set100_1", "x_set1_2", "x_set101_1", "x_set1_1"]
    assert windows_sorted(names) == ["x_set1_1", "x_set1_2", "x_set100_1", "x_set101_1"]
    pair = ["##Non-Qatari or Qatari-----Male@@", "##Non-Qatari-----Female@@"]
    assert windows_sorted(pair) == list(reversed(pair))
    assert windows_sorted(["b", "B", "a"]) == ["a", "b", "B"]
