"""The NL-to-SQL track on the released synthetic questions."""

from __future__ import annotations

import pytest

from hctqa.core.tracks.sandbox import SqlSandbox
from hctqa.core.tracks.shared import REASON_MISSING
from hctqa.core.tracks.sql import (
    REASON_BUDGET,
    orders_rows,
    qa_response,
    schema_of,
    score_sql,
    sql_items,
)

DB_CSV = (
    "Nationality,Year,School type,Value\r\n"
    "Nationality,Year,School_type,Value\r\n"
    "Qatari,2021/2022,Government,99\r\n"
    "Non-Qatari,2021/2022,Government,33\r\n"
    "Qatari,2022/2023,Government,87\r\n"
    "Non-Qatari,2022/2023,Government,97\r\n"
)


@pytest.fixture(scope="module")
def items(synthetic_tables: list) -> list:
    return [item for table in synthetic_tables for item in sql_items(table)]


@pytest.fixture(scope="module")
def sandbox():
    with SqlSandbox() as box:
        yield box


def test_every_synthetic_question_is_an_item_under_its_qa_id(
    synthetic_tables: list, items: list
) -> None:
    assert len(items) == 3361
    first = synthetic_tables[0].questions[0]
    item = items[0]
    assert item.id == first.id
    assert item.gold == first.sql
    assert item.inputs["question"] == first.text
    assert item.reference["gold_answer"] == first.gold_answer
    assert set(item.record(with_gold=False)) == {"id", "question", "schema"}


def test_the_schema_lists_each_attribute_s_values_in_table_order() -> None:
    assert schema_of(DB_CSV) == {
        "table": "DBdata",
        "columns": [
            {"name": "Nationality", "type": "TEXT", "values": ["Qatari", "Non-Qatari"]},
            {"name": "Year", "type": "TEXT", "values": ["2021/2022", "2022/2023"]},
            {"name": "School_type", "type": "TEXT", "values": ["Government"]},
            {"name": "Value", "type": "REAL"},
        ],
    }


def test_the_gold_sql_of_every_question_scores_1(items: list, sandbox: SqlSandbox) -> None:
    card = score_sql(items, {i.id: i.gold for i in items}, sandbox=sandbox)
    assert card.figures == {"execution_accuracy": 1.0, "recall": 1.0, "recall_2025_10": 1.0}
    assert card.reasons == {}


def test_dropping_a_tenth_scores_nine_tenths(items: list, sandbox: SqlSandbox) -> None:
    chosen = items[:200]
    predictions = {i.id: i.gold for n, i in enumerate(chosen) if n % 10 != 3}
    card = score_sql(chosen, predictions, sandbox=sandbox)
    assert card.figures["execution_accuracy"] == pytest.approx(180 / 200)
    assert card.figures["recall"] == pytest.approx(180 / 200)
    assert card.reasons == {REASON_MISSING: 20}
    assert card.results[chosen[3].id].figures["execution_accuracy"] == 0.0


def test_order_counts_only_where_the_gold_orders(items: list, sandbox: SqlSandbox) -> None:
    ordered = next(i for i in items if i.reference["ordered"] and "LIMIT" not in i.gold)
    grouped = next(i for i in items if "GROUP BY" in i.gold and not i.reference["ordered"])
    assert ";" not in ordered.gold
    reversed_order = (
        ordered.gold.replace(" ASC", " DESC")
        if " ASC" in ordered.gold
        else (ordered.gold.replace(" DESC", " ASC"))
    )
    regrouped = grouped.gold + " ORDER BY 1 DESC"
    card = score_sql(
        [ordered, grouped], {ordered.id: reversed_order, grouped.id: regrouped}, sandbox=sandbox
    )
    # Reversed rows: wrong as an ordered answer, the same values to the QA scorer.
    assert card.results[ordered.id].figures == {
        "execution_accuracy": 0.0,
        "recall": 1.0,
        "recall_2025_10": 1.0,
    }
    assert card.results[grouped.id].figures["execution_accuracy"] == 1.0


def test_a_hostile_statement_scores_0_with_its_reason_and_the_rest_is_scored(
    items: list, sandbox: SqlSandbox
) -> None:
    chosen = items[:3]
    predictions = {
        chosen[0].id: "SELECT 1; DROP TABLE DBdata",
        chosen[1].id: "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
        "SELECT count(*) FROM r",
        chosen[2].id: chosen[2].gold,
    }
    card = score_sql(chosen, predictions, sandbox=sandbox)
    assert [card.results[i.id].reason for i in chosen] == ["multiple_statements", "steps", ""]
    assert card.figures["execution_accuracy"] == pytest.approx(1 / 3)


def test_a_spent_budget_leaves_the_rest_unrun_and_accounted_for(
    items: list, sandbox: SqlSandbox
) -> None:
    chosen = items[:5]
    card = score_sql(chosen, {i.id: i.gold for i in chosen}, sandbox=sandbox, budget_seconds=0)
    assert card.reasons == {REASON_BUDGET: 5}
    assert card.figures["execution_accuracy"] == 0.0


def test_the_executed_result_reads_as_a_qa_answer(sandbox: SqlSandbox) -> None:
    execution = sandbox.run(
        DB_CSV, "SELECT Nationality, avg(Value) FROM DBdata GROUP BY Nationality"
    )
    assert qa_response(execution) == "Non-Qatari || 65 || Qatari || 93"


@pytest.mark.parametrize(
    ("sql", "ordered"),
    [
        ("SELECT Value FROM DBdata ORDER BY VALUE DESC LIMIT 2", True),
        ("SELECT Value FROM DBdata order\n by Value", True),
        ("SELECT Value FROM DBdata WHERE Year = 'order by'", False),
        ("SELECT Value FROM DBdata -- order by Value", False),
        ("SELECT x FROM DBdata GROUP BY x", False),
    ],
)
def test_only_an_order_by_outside_strings_and_comments_orders(sql: str, ordered: bool) -> None:
    assert orders_rows(sql) is ordered
