from __future__ import annotations

import random

import pytest

from hctqa.core.stats import (
    group_means,
    paired_bootstrap,
    regress_on_table_properties,
    regression_properties,
)


def test_identical_systems_are_not_significantly_different() -> None:
    rng = random.Random(1)
    scores = [rng.random() for _ in range(500)]
    result = paired_bootstrap(scores, scores)
    assert result.difference == 0 and result.p_value == 1


def test_a_clearly_better_system_is_significant() -> None:
    rng = random.Random(2)
    b = [rng.random() for _ in range(400)]
    a = [min(1.0, x + 0.2) for x in b]
    result = paired_bootstrap(a, b)
    assert result.difference > 0.15
    assert result.ci_low > 0 and result.p_value < 0.01


def test_the_bootstrap_is_reproducible() -> None:
    a, b = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]
    assert paired_bootstrap(a, b) == paired_bootstrap(a, b)
    with pytest.raises(ValueError, match="share no questions"):
        paired_bootstrap([], [])


def test_the_regression_recovers_a_known_effect() -> None:
    rng = random.Random(3)
    outcome, props = {}, {}
    for i in range(400):
        label = rng.random() < 0.5
        noise = rng.gauss(0, 0.05)
        outcome[f"t{i}"] = 0.6 - 0.2 * label + noise
        props[f"t{i}"] = {"row_group_label": label, "split_header_cell": rng.random() < 0.3}
    result = regress_on_table_properties(outcome, props)
    coefs = {c.code: c for c in result.coefficients}
    assert coefs["row_group_label"].coef == pytest.approx(-0.2, abs=0.02)
    assert coefs["row_group_label"].p_value < 1e-6
    assert coefs["split_header_cell"].p_value > 0.01
    assert result.intercept == pytest.approx(0.6, abs=0.02)
    # Properties no table has cannot be estimated and are reported as dropped.
    assert "multi_level_column" not in coefs and "balanced_row_nesting" in result.dropped


def test_the_regressors_are_leaves_and_standalone_properties() -> None:
    codes = regression_properties()
    assert "row_group_label" in codes and "balanced_multi_level_column" in codes
    assert "multi_level_column" not in codes and "standard_relational_table" not in codes


def test_group_means_skip_empty_groups() -> None:
    rows = group_means({"a": 1.0, "b": 0.0}, {"x": ["a", "b"], "y": ["c"]}, {"x": "Group X"})
    assert [(r.key, r.label, r.mean, r.n) for r in rows] == [("x", "Group X", 0.5, 2)]
