"""The extraction core without PDFs: grids and the canonical CSV, HTML tables,
the normal form, the metrics, file sniffing and the page runner's time limit."""

from __future__ import annotations

import pytest

from hctqa.core.extraction.documents import DocumentError, sniff
from hctqa.core.extraction.grid import (
    Grid,
    GridCell,
    grid_from_canonical,
    normalize_canonical,
)
from hctqa.core.extraction.html import HtmlTableError, html_tables
from hctqa.core.extraction.metrics import compare, teds
from hctqa.core.render import to_html
from hctqa.core.tables import parse_table

NESTED = "Region,2019,__,2020,__\n__,Male,Female,Male,Female\nNorth,1,2,3,4\nSouth,5,6,7,8\n"


def test_a_body_row_of_one_cell_is_a_row_group_label_followed_by_blanks() -> None:
    grid = Grid.build(
        3,
        3,
        [
            GridCell(0, 0, 1, 1, "Item"),
            GridCell(0, 1, 1, 1, "A"),
            GridCell(0, 2, 1, 1, "B"),
            GridCell(1, 0, 1, 3, "Group one"),
            GridCell(2, 0, 1, 1, "x"),
            GridCell(2, 1, 1, 1, "1"),
            GridCell(2, 2, 1, 1, "2"),
        ],
    )
    assert grid.to_canonical() == "Item,A,B\nGroup one,,\nx,1,2\n"
    assert parse_table(grid.to_canonical()).cells[3].role == "row_group_label"


def test_the_normal_form_reads_spaces_labels_and_stray_markers_one_way() -> None:
    assert normalize_canonical("a  b,c\nLabel,__,__\nx,1,2\n") == normalize_canonical(
        "a b,c\nLabel,,\nx,1,2\n"
    )
    assert normalize_canonical(NESTED) == NESTED


def test_the_html_path_gives_back_every_release_table(release_tables: list) -> None:
    for table in release_tables:
        page = to_html(parse_table(table.canonical_csv)).encode()
        (found,) = html_tables(page)
        assert found.grid.to_canonical() == normalize_canonical(table.canonical_csv), table.id


def test_html_spans_nested_tables_and_scripts() -> None:
    page = b"""<html><head><script>document.write('<table><tr><td>x</td></tr></table>')</script>
    <style>td{}</style></head><body>
    <table><thead><tr><th rowspan=2>Region<th colspan=2>2019</tr>
    <tr><th>Male<th>Female</thead>
    <tr><td>North<td>1<br>000<td><table><tr><td>inner</td></tr></table>2</td></tr></table>
    </body></html>"""
    outer, inner = html_tables(page)
    assert outer.grid.to_canonical() == "Region,2019,__\n__,Male,Female\nNorth,1 000,2\n"
    assert inner.grid.to_canonical() == "inner\n"


def test_html_spans_are_clamped_as_browsers_do() -> None:
    page = b"<table><tr><td colspan=99999>a</td></tr><tr><td rowspan=0>b</td><td>c</td></tr>"
    page += b"<tr><td>d</td></tr></table>"
    (table,) = html_tables(page)
    assert table.grid.n_cols == 1000
    b = next(c for c in table.grid.cells if c.text == "b")
    assert (b.rowspan, b.colspan) == (2, 1)


def test_a_table_too_large_to_lay_out_is_named_and_skipped() -> None:
    page = b"<table><tr>" + b"<td colspan=1000>x</td>" * 300 + b"</tr></table>"
    page += b"<table><tr><td>ok</td><td>1</td></tr></table>"
    big, small = html_tables(page)
    assert "too many to lay out" in big.skipped_reason
    assert small.grid.to_canonical() == "ok,1\n"


def test_a_web_page_without_a_table_says_so() -> None:
    with pytest.raises(HtmlTableError, match="no <table>"):
        html_tables(b"<html><body><p>Just text</p></body></html>")


def test_a_page_nested_too_deeply_says_so_not_that_it_has_no_table() -> None:
    # Issue 32, item 5: libxml2 stops at 256 levels; the table below them was never read.
    deep = ("<div>" * 300 + "<table><tr><td>a<td>1</table>" + "</div>" * 300).encode()
    with pytest.raises(HtmlTableError, match="nested more than 256 levels deep") as refused:
        html_tables(deep)
    assert "no <table> element" not in str(refused.value)
    # Nested less deeply, the same table is read.
    shallow = ("<div>" * 200 + "<table><tr><td>a<td>1</table>" + "</div>" * 200).encode()
    assert html_tables(shallow)[0].grid.to_canonical() == "a,1\n"


def test_a_latin1_page_is_read_in_its_declared_encoding() -> None:
    page = '<meta charset="iso-8859-1"><table><tr><td>Qatar é</td><td>1</td></tr></table>'
    (table,) = html_tables(page.encode("latin-1"))
    assert table.grid.cells[0].text == "Qatar é"


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n...", "pdf"),
        (b"\xef\xbb\xbf  <!DOCTYPE html><html>", "html"),
        (b"<!-- saved --><html lang=en>", "html"),
        (b"<table><tr><td>1</td></tr></table>", "html"),
    ],
)
def test_files_are_recognised_by_content(head: bytes, kind: str) -> None:
    assert sniff(head) == kind


@pytest.mark.parametrize("head", [b"PK\x03\x04zip", b"\x89PNG\r\n", b"Region,2019\n"])
def test_anything_else_is_refused_by_content(head: bytes) -> None:
    with pytest.raises(DocumentError) as caught:
        sniff(head)
    assert caught.value.code == "not_supported"


def test_teds_is_one_for_the_same_table_and_less_for_a_lost_merge() -> None:
    truth = grid_from_canonical(NESTED)
    unmerged = grid_from_canonical(NESTED.replace("2019,__", "2019,"))
    assert teds(truth, truth) == 1.0
    assert 0.7 < teds(unmerged, truth) < 1.0


def test_compare_counts_right_cells_both_ways() -> None:
    found = NESTED.replace("South,5", "South,50")
    scores = compare(found, NESTED)
    assert not scores.exact
    # 17 non-empty cells on each side, one wrong.
    assert scores.cell_precision == pytest.approx(16 / 17)
    assert scores.cell_recall == pytest.approx(16 / 17)
    assert compare("Region,2019,__\n", "Region,2019,__\n").exact
