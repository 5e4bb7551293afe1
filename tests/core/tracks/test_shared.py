"""What the tracks share: splits drawn per table, submission files, and the gold of the
validation split scoring exactly 1 on every figure of every track."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hctqa.core.predictions import PredictionsError
from hctqa.core.release import read_synthetic_zip
from hctqa.core.splits import split_for_table
from hctqa.core.tracks.extraction import score_extraction, synthetic_items
from hctqa.core.tracks.shared import Item, item_splits, read_submission
from hctqa.core.tracks.sql import score_sql, sql_items
from hctqa.core.tracks.transformation import score_transformation, transformation_items


def _item(item_id: str, table_id: str, split_key: str = "") -> Item:
    return Item(id=item_id, track="sql", table_id=table_id, inputs={}, gold="", split_key=split_key)


def test_an_item_takes_its_table_s_split() -> None:
    items = [_item("q1", "t1"), _item("q2", "t1"), _item("q3", "t2")]
    splits = item_splits(items)
    assert splits["q1"] == splits["q2"] == split_for_table("t1")
    assert splits["q3"] == split_for_table("t2")
    assert item_splits(items, {"t1": "test", "t2": "train"}) == {
        "q1": "test",
        "q2": "test",
        "q3": "train",
    }


def test_every_item_of_a_document_takes_its_most_hidden_table_s_split() -> None:
    items = [
        _item("a--region", "doc#1", split_key="doc"),
        _item("b--region", "doc#2", split_key="doc"),
        _item("doc--p1--page", "doc#p1", split_key="doc"),
    ]
    splits = item_splits(items, {"doc#1": "train", "doc#2": "test"})
    assert set(splits.values()) == {"test"}


def test_a_submission_file_is_read_with_the_qa_board_s_reader() -> None:
    lines = [
        {"id": "a", "prediction": {"cells": []}},
        {"id": "b", "prediction": None},
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    assert read_submission(data, track="extraction", known_ids={"a", "b"}) == {
        "a": {"cells": []},
        "b": None,
    }
    with pytest.raises(PredictionsError, match="unknown question id"):
        read_submission(data, track="extraction", known_ids={"a"})
    with pytest.raises(PredictionsError, match="must be a string or null, not dict"):
        read_submission(data, track="sql")
    text = b'{"id": "a", "prediction": "<table></table>"}'
    with pytest.raises(PredictionsError, match="is a string"):
        read_submission(text, track="extraction")
    too_long = json.dumps({"id": "a", "prediction": "S" * 20_001}).encode()
    with pytest.raises(PredictionsError, match="over the limit of 20,000"):
        read_submission(too_long, track="sql")


@pytest.fixture(scope="module")
def validation(data_dir: Path) -> dict[str, list[Item]]:
    """Every track's validation items of the released families (extraction: the students
    family's, drawn to PDF and PNG)."""
    out: dict[str, list[Item]] = {"extraction": [], "transformation": [], "sql": []}
    for family in ("Number_of_students", "Number_of_accidents"):
        for table in read_synthetic_zip(data_dir / "hctqa-synthetic" / f"{family}.zip"):
            if split_for_table(table.id) != "validation":
                continue
            out["transformation"] += transformation_items(table)
            out["sql"] += sql_items(table)
            if family == "Number_of_students":
                out["extraction"] += synthetic_items(
                    table_id=table.id, hct_html=table.synthetic.hct_html, title="Students"
                )
    for items in out.values():
        assert set(item_splits(items).values()) == {"validation"}
    return out


def test_the_validation_gold_scores_exactly_1_on_every_figure(validation: dict) -> None:
    cards = [
        score_extraction(
            validation["extraction"], {i.id: i.gold for i in validation["extraction"]}
        ),
        score_transformation(
            validation["transformation"], {i.id: i.gold for i in validation["transformation"]}
        ),
        score_sql(validation["sql"], {i.id: i.gold for i in validation["sql"]}),
    ]
    for card in cards:
        assert card.n > 20
        figures = {k: v for k, v in card.figures.items() if k != "false_positives"}
        assert set(figures.values()) == {1.0}, card.track
        assert card.reasons == {}
    assert cards[0].figures["false_positives"] == 0.0


def test_dropping_a_tenth_scores_what_a_hand_computation_says(validation: dict) -> None:
    def kept(items: list[Item]) -> dict:
        return {i.id: i.gold for n, i in enumerate(items) if n % 10 != 0}

    for track, score in (("transformation", score_transformation), ("sql", score_sql)):
        items = validation[track]
        share = len(kept(items)) / len(items)
        card = score(items, kept(items))
        assert card.figures == pytest.approx(dict.fromkeys(card.figures, share)), track

    items = validation["extraction"]
    predictions = kept(items)
    card = score_extraction(items, predictions)
    share = len(predictions) / len(items)  # one true table per item
    assert card.figures["teds"] == pytest.approx(share)
    assert card.figures["teds_struct"] == pytest.approx(share)
    assert card.figures["exact"] == pytest.approx(share)
    # Adjacency: every relation found is right (precision 1); recall is the share of true
    # relations in the items kept.
    true = {i.id: card.results[i.id].detail["relations"]["true"] for i in items}
    recall = sum(true[k] for k in predictions) / sum(true.values())
    assert card.figures["adj_f1"] == pytest.approx(2 * recall / (1 + recall))
    pages = [i for i in items if i.inputs["mode"] == "page"]
    found = sum(1 for i in pages if i.id in predictions)
    assert card.figures["detection_recall"] == pytest.approx(found / len(pages))
    assert card.figures["false_positives"] == 0.0
