"""The transformation track: row-level figures by hand, columns matched by their values,
and the unpivot baseline on a released family."""

from __future__ import annotations

import pytest

from hctqa.core.tables import write_csv_rows
from hctqa.core.tracks.shared import REASON_INVALID, REASON_MISSING
from hctqa.core.tracks.transformation import (
    relational_gold,
    score_transformation,
    transformation_item,
    transformation_items,
    unpivot,
)

DB_CSV = (
    "Nationality,Year,School type,Value\r\n"
    "Nationality,Year,School_type,Value\r\n"
    "Qatari,2021/2022,Government,99\r\n"
    "Non-Qatari,2021/2022,Government,33\r\n"
    "Qatari,2022/2023,Government,87\r\n"
    "Non-Qatari,2022/2023,Government,97\r\n"
)
HCT_CSV = ",Qatari,Non-Qatari\n2021/2022,99,33\n2022/2023,87,97\n"


@pytest.fixture
def item():
    return transformation_item(table_id="t1", canonical_csv=HCT_CSV, relational_csv=DB_CSV)


def score(item, prediction):
    return score_transformation([item], {item.id: prediction}).results[item.id]


def test_the_gold_is_db_csv_without_its_sql_names(item) -> None:
    assert relational_gold(DB_CSV) == (
        "Nationality,Year,School type,Value\n"
        "Qatari,2021/2022,Government,99\n"
        "Non-Qatari,2021/2022,Government,33\n"
        "Qatari,2022/2023,Government,87\n"
        "Non-Qatari,2022/2023,Government,97\n"
    )
    assert item.gold == relational_gold(DB_CSV)
    assert set(item.inputs["hct"]) == {"csv", "html", "markdown", "json", "latex", "paper"}
    assert "<table>" in item.inputs["hct"]["html"]
    assert score(item, item.gold).figures == {
        "row_precision": 1.0,
        "row_recall": 1.0,
        "row_f1": 1.0,
        "exact": 1.0,
    }


def test_names_order_of_columns_and_rows_and_number_spelling_do_not_count(item) -> None:
    prediction = write_csv_rows(
        [
            ["value", "a", "b", "c"],
            ["97.00", "2022/2023", "non-qatari", " Government "],
            ["99", "2021/2022", "Qatari", "Government"],
            ["87.0", "2022/2023", "Qatari", "Government"],
            ["33", "2021/2022", "Non-Qatari", "Government"],
        ]
    )
    assert score(item, prediction).figures["exact"] == 1.0


def test_row_figures_by_hand(item) -> None:
    # 3 right rows, 1 wrong value, 1 aggregate row too many: P = 3/5, R = 3/4.
    prediction = write_csv_rows(
        [
            ["Nationality", "Year", "School type", "Value"],
            ["Qatari", "2021/2022", "Government", "99"],
            ["Non-Qatari", "2021/2022", "Government", "33"],
            ["Qatari", "2022/2023", "Government", "87"],
            ["Non-Qatari", "2022/2023", "Government", "96"],
            ["Total", "2022/2023", "Government", "184"],
        ]
    )
    figures = score(item, prediction).figures
    assert figures["row_precision"] == pytest.approx(3 / 5)
    assert figures["row_recall"] == pytest.approx(3 / 4)
    assert figures["row_f1"] == pytest.approx(2 * (3 / 5) * (3 / 4) / (3 / 5 + 3 / 4))
    assert figures["exact"] == 0.0


def test_a_missing_or_extra_column(item) -> None:
    # Without School type: no row has every gold value.
    short = "Nationality,Year,Value\nQatari,2021/2022,99\n"
    assert score(item, short).figures["row_recall"] == 0.0
    # An extra column: every row right, but not the exact table.
    extra = write_csv_rows(
        [["n", "y", "s", "v", "note"]]
        + [[*row.split(","), "x"] for row in relational_gold(DB_CSV).splitlines()[1:]]
    )
    figures = score(item, extra).figures
    assert (figures["row_f1"], figures["exact"]) == (1.0, 0.0)


def test_columns_sharing_values_are_matched_to_the_most_values() -> None:
    db = "A,B,Value\nA,B,Value\nx,y,1\ny,x,2\nx,x,3\n"
    item = transformation_item(table_id="t", canonical_csv=HCT_CSV, relational_csv=db)
    # A and B hold the same values; the assignment that matches rows wins by the count.
    swapped = "B,A,Value\ny,x,1\nx,y,2\nx,x,3\n"
    assert score(item, swapped).figures["exact"] == 1.0


@pytest.mark.parametrize(
    ("prediction", "reason"),
    [(None, REASON_MISSING), ("a,b\n\x00", REASON_INVALID), ('a,"b\n', REASON_INVALID)],
)
def test_an_unreadable_prediction_scores_0_with_its_reason(item, prediction, reason) -> None:
    result = score(item, prediction)
    assert result.reason == reason
    assert result.figures["row_f1"] == 0.0


def test_too_large_a_prediction_is_refused(item) -> None:
    wide = ",".join(["c"] * 65) + "\n"
    assert score(item, wide).reason == REASON_INVALID


def test_dropping_a_tenth_scores_nine_tenths(synthetic_tables: list) -> None:
    items = [i for t in synthetic_tables[:100] for i in transformation_items(t)]
    predictions = {i.id: i.gold for n, i in enumerate(items) if n % 10 != 0}
    card = score_transformation(items, predictions)
    assert card.figures == pytest.approx(
        {"row_precision": 0.9, "row_recall": 0.9, "row_f1": 0.9, "exact": 0.9}
    )
    assert card.reasons == {REASON_MISSING: 10}


def test_the_unpivot_baseline_reads_every_released_table(synthetic_tables: list) -> None:
    items = [i for t in synthetic_tables for i in transformation_items(t)]
    card = score_transformation(items, {t.id: unpivot(t.canonical_csv) for t in synthetic_tables})
    assert card.figures["exact"] == 1.0


def test_the_unpivot_leaves_out_aggregates_and_outline_rows() -> None:
    hct = (
        ",__,Male,Female,Average\n"
        "Fire,__,1.50,2.50,2.00\n"
        ",Slight,1.00,2.00,1.50\n"
        "__,Serious,2.00,3.00,2.50\n"
        "Average,,1.50,2.50,2.00\n"
    )
    assert unpivot(hct) == (
        "Attribute 1,Attribute 2,Attribute 3,Value\n"
        "Fire,Slight,Male,1.00\n"
        "Fire,Slight,Female,2.00\n"
        "Fire,Serious,Male,2.00\n"
        "Fire,Serious,Female,3.00\n"
    )
