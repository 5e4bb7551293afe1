from __future__ import annotations

import csv
import io

from hctqa.core import taxonomy
from hctqa.core.demo import demo_tables
from hctqa.core.synthetic import Dimension, HCTSpec, format_number, generate
from hctqa.core.tables import parse_table


def relational_values(relational_csv: str) -> dict[tuple[str, ...], int]:
    rows = list(csv.reader(io.StringIO(relational_csv)))[2:]
    return {tuple(r[:-1]): int(r[-1]) for r in rows}


SPEC = HCTSpec(
    table_id="synthetic--t",
    value_name="count",
    row_dims=(Dimension("Group", ("A", "B")), Dimension("Item", ("x", "y", "z"))),
    col_dims=(Dimension("Year", ("2020", "2021")), Dimension("Q", ("Q1", "Q2"))),
    subtotal_columns=True,
    total_column=True,
    total_row=True,
    seed=5,
)


def test_the_pivot_nests_columns_and_rows_with_totals() -> None:
    table = parse_table(generate(SPEC).canonical_csv)
    assert (table.header_rows, table.header_columns) == (2, 2)
    assert table.column_names() == [
        "Group",
        "Item",
        "2020 - Q1",
        "2020 - Q2",
        "2020 - Total",
        "2021 - Q1",
        "2021 - Q2",
        "2021 - Total",
        "Total",
    ]
    totals = table.filled_body()[-1][1]
    assert totals[0] == "Total"


def test_aggregate_cells_add_up() -> None:
    generated = generate(SPEC)
    values = relational_values(generated.relational_csv)
    body = parse_table(generated.canonical_csv).filled_body()
    first = body[0][1]  # A, x
    base = [values[("A", "x", y, q)] for y in ("2020", "2021") for q in ("Q1", "Q2")]
    assert first[2:] == [
        str(v)
        for v in (
            base[0],
            base[1],
            base[0] + base[1],
            base[2],
            base[3],
            base[2] + base[3],
            sum(base),
        )
    ]


def test_gold_answers_are_computed_from_the_data() -> None:
    generated = generate(SPEC)
    values = relational_values(generated.relational_csv)
    lookup = generated.questions[0]
    assert lookup.gold_answer.strip("{}") in {str(v) for v in values.values()}
    total = generated.questions[2]
    group, item = [
        part.split(" ", 1)[1]
        for part in total.text.split(" for ", 1)[1].split(", summed")[0].split(", ")
    ]
    expected = sum(v for k, v in values.items() if k[:2] == (group, item))
    assert total.gold_answer == f"{{{expected}}}"


def test_generated_properties_are_consistent() -> None:
    for table in demo_tables():
        assert taxonomy.check(taxonomy.TABLE_PROPERTIES, table.table_properties) == []
        for q in table.questions:
            assert taxonomy.check(taxonomy.QUERY_PROPERTIES, q.query_properties) == [], q.id


def test_the_demo_covers_nesting_row_groups_and_aggregates() -> None:
    covered = set()
    for table in demo_tables():
        covered |= {k for k, v in table.table_properties.items() if v is True}
    assert {
        "standard_relational_table",
        "multi_level_column",
        "row_nesting",
        "row_group_label",
        "global_column_aggregation",
        "local_column_group_aggregation",
        "global_row_aggregation",
    } <= covered


def test_the_demo_is_the_same_every_time() -> None:
    assert demo_tables() == demo_tables()


def test_numbers_are_formatted_without_trailing_zeros() -> None:
    assert [format_number(x) for x in (3.0, 2.5, 78685.3333, 0.125)] == [
        "3",
        "2.5",
        "78685.33",
        "0.12",
    ]
