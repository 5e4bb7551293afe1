from __future__ import annotations

import pytest

from hctqa.core.agreement import agreement_report, cohen_kappa, krippendorff_alpha, majority


def test_alpha_matches_krippendorffs_worked_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", nominal data with
    # missing values: alpha = 0.743.
    coders = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    units = [{c: v[i] for c, v in coders.items() if v[i] is not None} for i in range(12)]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=0.0005)


def test_kappa_matches_the_textbook_example() -> None:
    # 50 items: both yes 20, yes/no 5, no/yes 10, both no 15 → po 0.7, pe 0.5, kappa 0.4.
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def test_undefined_agreement_is_none() -> None:
    assert cohen_kappa([(True, True), (True, True)]) is None
    assert krippendorff_alpha([{"a": True, "b": True}]) is None
    assert krippendorff_alpha([{"a": True}]) is None


def test_the_report_lists_disagreements_per_table() -> None:
    annotations = {
        "t1": {"release": {"x": True, "y": False}, "ann": {"x": True, "y": True}},
        "t2": {"release": {"x": False, "y": False}, "ann": {"x": False, "y": False}},
        "t3": {"release": {"x": True}},
    }
    report = agreement_report(annotations, ["x", "y"])
    assert [(d.table_id, d.properties) for d in report.disagreements] == [("t1", ("y",))]
    by_code = {p.code: p for p in report.properties}
    assert (
        by_code["x"].tables == 2 and by_code["x"].disagreements == 0 and by_code["x"].alpha == 1.0
    )
    [pair] = report.pairs
    assert (pair.a, pair.b, pair.tables) == ("ann", "release", 2)


def test_majority_needs_more_than_half() -> None:
    by = {"a": {"x": True, "y": True}, "b": {"x": True}, "c": {"y": False}}
    assert majority(by, ["x", "y"]) == {"x": True, "y": False}
