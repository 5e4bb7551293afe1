from __future__ import annotations

from collections import Counter

import pytest

from hctqa.core.tables import (
    TableFormatError,
    canonical_from_embedded_csv,
    canonical_from_html,
    canonical_from_release_csv,
    parse_table,
)


def spans(table) -> list[tuple[str, int, int, int, int, str]]:
    return [(c.text, c.row, c.col, c.rowspan, c.colspan, c.role) for c in table.cells]


def test_a_column_parent_spans_its_children_and_a_corner_spans_down() -> None:
    table = parse_table("Region,2019,__,2020,__\n__,Male,Female,Male,Female\nNorth,1,2,3,4\n")
    assert table.header_rows == 2
    assert table.header_columns == 1
    assert spans(table)[:3] == [
        ("Region", 0, 0, 2, 1, "corner"),
        ("2019", 0, 1, 1, 2, "column_header"),
        ("2020", 0, 3, 1, 2, "column_header"),
    ]
    assert table.column_names() == [
        "Region",
        "2019 - Male",
        "2019 - Female",
        "2020 - Male",
        "2020 - Female",
    ]


def test_a_row_parent_spans_the_rows_of_its_children() -> None:
    table = parse_table("Sector,Job,Value\nPublic,Clerk,1\n__,Manager,2\nPrivate,Clerk,3\n")
    assert table.header_columns == 2
    assert ("Public", 1, 0, 2, 1, "row_header") in spans(table)
    assert ("Manager", 2, 1, 1, 1, "row_header") in spans(table)


def test_a_row_group_label_spans_the_whole_row() -> None:
    table = parse_table("District,Male,Female\nNorth,__,__\nAl Khor,1,2\nSouth,,\nAl Wakra,3,4\n")
    labels = [c for c in table.cells if c.role == "row_group_label"]
    assert [(c.text, c.row, c.colspan) for c in labels] == [("North", 1, 3), ("South", 3, 3)]
    assert table.header_rows == 1


def test_a_value_merged_sideways_in_the_body_is_not_taken_by_the_header_above() -> None:
    # The release writes some merged body cells as "value,__"; a header cell above must not
    # swallow the column (this once turned a whole table into header rows).
    table = parse_table("County,Labor,__\n__,Total,Rate\nAlpha,10,__\nBeta,20,__\n")
    assert table.header_rows == 2
    assert ("10", 2, 1, 1, 2, "value") in spans(table)


def test_a_data_row_is_not_mistaken_for_header_children() -> None:
    table = parse_table("Model,Score,__\nA,0.51,__\nB,0.52,0.6\n")
    assert table.header_rows == 1


def test_a_title_over_every_column_has_the_column_names_under_it() -> None:
    table = parse_table("Search time,__,__\nDatabase,Linear,Tree\nX,1.5,0.2\n")
    assert table.header_rows == 2


def test_ragged_rows_are_padded_and_nul_bytes_refused() -> None:
    assert parse_table("a,b,c\n1,2\n").grid[1] == ("1", "2", "")
    with pytest.raises(TableFormatError, match="NUL"):
        parse_table("a,b\n1,\x00\n")
    with pytest.raises(TableFormatError, match="no rows"):
        parse_table("\n\n")


def test_the_release_csv_loses_only_its_numbered_header_line() -> None:
    raw = "0,1,2\nYear,Women,Men\n2007,65.0,75.\n"
    assert canonical_from_release_csv(raw) == "Year,Women,Men\n2007,65.0,75.\n"
    with pytest.raises(TableFormatError, match="number the columns"):
        canonical_from_release_csv("Year,Women,Men\n2007,1,2\n")


def test_the_embedded_csv_loses_its_index_column_and_header_row() -> None:
    embedded = ",0,1\n0,Year,Men\n1,2007,75\n"
    assert canonical_from_embedded_csv(embedded) == "Year,Men\n2007,75\n"
    with pytest.raises(TableFormatError, match="Row 2 should start with its index 1"):
        canonical_from_embedded_csv(",0,1\n0,Year,Men\n7,2007,75\n")


def test_html_spans_become_canonical_markers() -> None:
    html = (
        "<table><tr><th rowspan=2>&nbsp;</th><th colspan=2>2018</th></tr>"
        "<tr><th>Male</th><th>Female</th></tr>"
        "<tr><th>Fire</th><td>1</td><td>2</td></tr></table>"
    )
    assert canonical_from_html(html) == ",2018,__\n__,Male,Female\nFire,1,2\n"


def test_multi_level_real_tables_parse_as_people_see_them(release_by_id: dict) -> None:
    # pak--1--726: "Year" spans two header rows, the rate header spans three columns,
    # and All Areas / Urban / Rural are row-group labels.
    table = parse_table(release_by_id["pak--1--726"].canonical_csv)
    assert (table.header_rows, table.header_columns) == (2, 1)
    cells = spans(table)
    assert ("Year", 0, 0, 2, 1, "corner") in cells
    assert ("Infant Mortality Rates Per 1000 Population.", 0, 1, 1, 3, "column_header") in cells
    assert [c.text for c in table.cells if c.role == "row_group_label"] == [
        "All Areas",
        "Urban",
        "Rural",
    ]
    # arxiv--4--4924: a corner spanning two label columns and row nesting below it.
    table = parse_table(release_by_id["arxiv--4--4924"].canonical_csv)
    assert (table.header_rows, table.header_columns) == (1, 2)
    assert ("Exploration", 1, 0, 4, 1, "row_header") in spans(table)


def test_three_level_column_headers_parse(release_by_id: dict) -> None:
    deep = [
        t
        for t in release_by_id.values()
        if t.table_properties["multi_level_column"]
        and parse_table(t.canonical_csv).header_rows == 3
    ]
    assert len(deep) > 100
    table = parse_table(deep[0].canonical_csv)
    assert any(len(path) == 3 for path in table.column_paths())


def test_every_release_table_parses_into_cells_that_tile_the_grid(release_tables: list) -> None:
    for t in release_tables:
        table = parse_table(t.canonical_csv)
        owners = Counter(
            (r, c)
            for cell in table.cells
            for r in range(cell.row, cell.row + cell.rowspan)
            for c in range(cell.col, cell.col + cell.colspan)
        )
        assert len(owners) == table.n_rows * table.n_columns, t.id
        assert set(owners.values()) == {1}, t.id


def test_parsed_structure_agrees_with_the_release_labels(release_tables: list) -> None:
    agree = Counter()
    for t in release_tables:
        table = parse_table(t.canonical_csv)
        props = t.table_properties
        agree["columns"] += (table.header_rows > 1) == props["multi_level_column"]
        agree["rows"] += (table.header_columns > 1) == props["row_nesting"]
        has_label = any(c.role == "row_group_label" for c in table.cells)
        agree["labels"] += has_label == props["row_group_label"]
    n = len(release_tables)
    # Labels come from the images and the CSVs from an extractor; they mostly agree.
    assert agree["columns"] / n > 0.95
    assert agree["rows"] / n > 0.95
    assert agree["labels"] / n > 0.95
