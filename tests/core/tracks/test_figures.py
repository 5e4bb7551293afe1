"""Each track's figures rebuilt from per-item results equal the scorer's on real items with
damaged predictions, and their bootstrap intervals hold the figure and shrink with items."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from hctqa.core.extraction.icdar import read_folder
from hctqa.core.tracks.extraction import icdar_items, score_extraction
from hctqa.core.tracks.figures import aggregate, figures_of, intervals
from hctqa.core.tracks.shared import ItemResult
from hctqa.core.tracks.sql import score_sql, sql_items
from hctqa.core.tracks.transformation import score_transformation, transformation_items


def _damaged(table: dict, rng: random.Random) -> dict:
    out = copy.deepcopy(table)
    for cell in out["cells"]:
        if rng.random() < 0.2:
            cell["text"] += "x"
    if out["cells"] and rng.random() < 0.5:
        lost = rng.randrange(out["rows"])
        out["cells"] = [c for c in out["cells"] if c["row"] != lost]
    return out


@pytest.fixture(scope="module")
def icdar(data_dir: Path) -> list:
    return icdar_items(read_folder(data_dir / "icdar2013-eu"))


def test_extraction_figures_from_item_results_equal_the_scorer_s(icdar: list) -> None:
    rng = random.Random(7)
    predictions: dict = {}
    for item in icdar:
        roll = rng.random()
        if roll < 0.1:
            continue
        if item.inputs["mode"] == "region":
            predictions[item.id] = _damaged(item.gold, rng)
            continue
        tables = [t for t in item.gold["tables"] if rng.random() > 0.2]
        tables = [_damaged(t, rng) for t in tables]
        if rng.random() < 0.3:
            tables.append({"bbox": [1, 1, 9, 9], "cells": [{"row": 0, "col": 0, "text": "x"}]})
        predictions[item.id] = {"tables": tables}
    for mode in ("region", "page"):
        items = [i for i in icdar if i.inputs["mode"] == mode]
        card = score_extraction(items, predictions)
        assert len(items) > 20
        results = list(card.results.values())
        rebuilt = aggregate("extraction", results, mode)
        assert set(rebuilt) == {f.name for f in figures_of("extraction", mode)}
        assert rebuilt == pytest.approx(card.figures, abs=1e-12), mode
        assert 0 < rebuilt["teds"] < 1
        # Every figure's interval holds the figure; a half of the items gives a wider one.
        whole = intervals("extraction", results, mode)
        half = intervals("extraction", results[::2], mode)
        for name, (low, high) in whole.items():
            assert low <= rebuilt[name] <= high, (mode, name)
        assert half["teds"][1] - half["teds"][0] > whole["teds"][1] - whole["teds"][0]
        assert intervals("extraction", results, mode) == whole  # a fixed seed


def test_mixed_modes_and_a_part_of_the_items(icdar: list) -> None:
    card = score_extraction(icdar, {i.id: i.gold for i in icdar[::3]})
    results = list(card.results.values())
    assert aggregate("extraction", results, "page") == pytest.approx(card.figures)
    # A part of the items (the first ten are region items) gives what scoring it alone does.
    part = [card.results[i.id] for i in icdar[:10]]
    alone = score_extraction(icdar[:10], {i.id: i.gold for i in icdar[:10:3]})
    assert aggregate("extraction", part, "region") == pytest.approx(alone.figures)


def test_transformation_and_sql_figures_are_means_of_item_figures(
    synthetic_tables: list,
) -> None:
    tables = synthetic_tables[:12]
    items = [i for t in tables for i in transformation_items(t)]
    predictions = {i.id: i.gold for i in items[::2]}
    predictions[items[1].id] = "a,b\n1,2\n"
    card = score_transformation(items, predictions)
    assert aggregate("transformation", list(card.results.values())) == pytest.approx(card.figures)
    questions = [i for t in tables for i in sql_items(t)][:60]
    answers = {i.id: i.gold for i in questions[::3]}
    answers[questions[1].id] = "SELECT 1"
    card = score_sql(questions, answers)
    rebuilt = aggregate("sql", list(card.results.values()))
    assert rebuilt == pytest.approx({k: card.figures[k] for k in ("execution_accuracy", "recall")})


def test_no_items_score_each_figure_s_empty_value() -> None:
    assert aggregate("extraction", [], "page")["detection_recall"] == 1.0
    assert aggregate("sql", [])["execution_accuracy"] == 0.0
    assert intervals("transformation", [])["row_f1"] == (0.0, 0.0)
    one = ItemResult("a", {"row_f1": 0.5, "row_precision": 1, "row_recall": 0.3, "exact": 0})
    assert intervals("transformation", [one])["row_f1"] == (0.5, 0.5)
