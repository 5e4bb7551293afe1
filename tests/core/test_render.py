from __future__ import annotations

import csv
import gzip
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hctqa.core.render import (
    PANDAS_NA_VALUES,
    pandas_text,
    render,
    text_frame,
    to_html,
    to_markdown,
    to_pandas_text,
    to_plain_csv,
    to_records,
)
from hctqa.core.tables import parse_table, write_csv_rows

NESTED = (
    "Sector,Job,2019,__,Total\n"
    "__,__,Male,Female,__\n"
    "Public,Clerk,1,2,3\n"
    "__,Manager,4,5,9\n"
    "Private,Clerk,6,7,13\n"
)
GROUPED = "District,Male,Female\nNorth,__,__\nAl Khor,1,2\nSouth,__,__\nAl Wakra,3,4\n"


def test_html_has_real_spans_in_header_cells() -> None:
    html = to_html(parse_table(NESTED))
    assert '<th scope="colgroup" colspan="2" data-row="0" data-col="2">2019</th>' in html
    assert 'rowspan="2"' in html and ">Total</th>" in html
    assert '<th scope="rowgroup" rowspan="2" data-row="2" data-col="0">Public</th>' in html
    thead = html[html.index("<thead>") : html.index("</thead>")]
    assert "Male" in thead and "Clerk" not in thead


def test_html_escapes_cell_text() -> None:
    html = to_html(parse_table('a,b\n<script>x</script>,"1 & 2"\n'))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html and "1 &amp; 2" in html


def test_html_row_group_label_spans_the_row() -> None:
    html = to_html(parse_table(GROUPED))
    assert '<tr class="hct-group-row"><th scope="rowgroup" colspan="3"' in html


def test_plain_csv_blanks_the_merge_markers() -> None:
    assert to_plain_csv(parse_table(NESTED)).splitlines()[:2] == [
        "Sector,Job,2019,,Total",
        ",,Male,Female,",
    ]


def test_markdown_flattens_headers_and_repeats_row_parents() -> None:
    lines = to_markdown(parse_table(NESTED)).splitlines()
    assert lines[0] == "| Sector | Job | 2019 - Male | 2019 - Female | Total |"
    assert lines[3] == "| Public | Manager | 4 | 5 | 9 |"


def test_markdown_bolds_row_group_labels_and_escapes_pipes() -> None:
    md = to_markdown(parse_table(GROUPED))
    assert "| **North** |  |  |" in md
    assert "\\|" in to_markdown(parse_table("a,b\nx|y,1\n"))


def test_json_records_carry_the_row_group() -> None:
    records = to_records(parse_table(GROUPED))
    assert records[0] == {"Row group": "North", "District": "Al Khor", "Male": "1", "Female": "2"}
    assert records[1]["Row group"] == "South"
    assert to_records(parse_table(NESTED))[1] == {
        "Sector": "Public",
        "Job": "Manager",
        "2019 - Male": "4",
        "2019 - Female": "5",
        "Total": "9",
    }


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown table format 'latex'"):
        render(parse_table(NESTED), NESTED, "latex")


class _Grid(HTMLParser):
    """Where each cell of an HTML table lands, spans included."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: dict[tuple[int, int], int] = {}
        self.row = -1
        self.col = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.row, self.col = self.row + 1, 0
        elif tag in ("td", "th"):
            spans = dict(attrs)
            while (self.row, self.col) in self.taken:
                self.col += 1
            for r in range(int(spans.get("rowspan") or 1)):
                for c in range(int(spans.get("colspan") or 1)):
                    key = (self.row + r, self.col + c)
                    self.taken[key] = self.taken.get(key, 0) + 1
            self.col += int(spans.get("colspan") or 1)


def test_every_release_table_renders_in_every_format(release_tables: list) -> None:
    for t in release_tables:
        table = parse_table(t.canonical_csv)
        rows = list(csv.reader(io.StringIO(t.canonical_csv)))
        height, width = len(rows), max(len(r) for r in rows)
        # HTML: the spans tile the canonical grid exactly, no cell covered twice or missing.
        grid = _Grid()
        grid.feed(render(table, t.canonical_csv, "html"))
        assert set(grid.taken.values()) == {1}, t.id
        assert set(grid.taken) == {(r, c) for r in range(height) for c in range(width)}, t.id
        # CSV keeps the shape; JSON has one record per body row; Markdown renders.
        plain = list(csv.reader(io.StringIO(render(table, t.canonical_csv, "csv"))))
        assert (len(plain), max(len(r) for r in plain)) == (height, width), t.id
        records = json.loads(render(table, t.canonical_csv, "json"))
        body_rows = [values for is_label, values in table.filled_body() if not is_label]
        assert isinstance(records, list) and len(records) == len(body_rows), t.id
        assert render(table, t.canonical_csv, "markdown").count("\n") >= len(records), t.id


def test_pandas_text_is_the_released_prompt_table_for_every_table(
    data_dir: Path, release_by_id: dict
) -> None:
    pattern = re.compile(r"Table: \n`(.*)` \n\nQuestion:", re.S)
    seen: set[str] = set()
    with gzip.open(data_dir / "hctqa-real" / "prompts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record["table_id"] in seen:
                continue
            seen.add(record["table_id"])
            released = pattern.search(record["prompt"][1]["content"]).group(1)
            table = release_by_id[record["table_id"]]
            assert to_pandas_text(table.canonical_csv) == released, record["table_id"]
    assert len(seen) == 1880


def test_the_na_strings_are_pandas_own() -> None:
    from pandas._libs.parsers import STR_NA_VALUES

    assert PANDAS_NA_VALUES == STR_NA_VALUES


def test_the_fast_text_is_pandas_own_on_every_synthetic_table(synthetic_tables: list) -> None:
    fast = 0
    for t in synthetic_tables:
        text = text_frame(t.canonical_csv)
        if text is not None:
            fast += 1
            assert text == pandas_text(t.canonical_csv), t.id
    assert fast == len(synthetic_tables)


_CELLS = st.sampled_from(
    [
        "Total",
        "North",
        "Al Khor",
        "__",
        "",
        "NA",
        "nan",
        "None",
        "N/A",
        "-",
        "12",
        "-3",
        "1.50",
        "1e5",
        " 7",
        "8 ",
        "inf",
        "True",
        "false",
        "é",
        "Qatari/Non-Qatari",
        "a\tb",
        "x  y",
        "0",
        "2019",
        "1,234",
        "#N/A",
        "<NA>",
        "null",
        ".",
        "+",
    ]
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=1, max_value=7).flatmap(
        lambda width: st.lists(
            st.lists(_CELLS, min_size=width, max_size=width), min_size=1, max_size=8
        )
    )
)
def test_the_fast_text_is_pandas_own_on_any_table(grid: list[list[str]]) -> None:
    csv_text = write_csv_rows(grid)
    text = text_frame(csv_text)
    if text is not None:
        assert text == pandas_text(csv_text)


def test_the_fast_text_leaves_numeric_and_empty_columns_to_pandas() -> None:
    assert text_frame("Region,Male\nNorth,1\nSouth,2\n") is not None
    assert text_frame("Region,\nNorth,1\nSouth,2\n") is None  # a column of numbers
    assert text_frame("Region,x\nNorth,\nSouth,\n") is not None
    assert text_frame("Region,\nNorth,\nSouth,\n") is None  # a column of NA only
    assert to_pandas_text("Region,\nNorth,1\nSouth,2\n") == pandas_text(
        "Region,\nNorth,1\nSouth,2\n"
    )
