"""Each kind of table that failed on pages nobody here had seen (issue 30), on a PDF page written
in the test (``tests/pdfpages.py``): drawn the way word processors and report generators draw
them, read by pdfplumber as any upload is, and extracted by the same functions as the command."""

from __future__ import annotations

import io

import pdfplumber

from hctqa.core.extraction.extract import extract_box, extract_page
from hctqa.core.extraction.layout import PageLayout, layout_from_pdfplumber
from hctqa.core.extraction.table import Table
from tests.pdfpages import PdfPage

PROSE = "The figures below come from the national statistics offices of each country in the survey."


def layout(page: PdfPage) -> PageLayout:
    with pdfplumber.open(io.BytesIO(page.pdf())) as document:
        return layout_from_pdfplumber(document.pages[0], 1)


def rows(table: Table) -> list[list[str]]:
    """The table as a list of rows, a merged cell's text in its first position."""
    out = [[""] * table.cols for _ in range(table.rows)]
    for cell in table.cells:
        out[cell.row][cell.col] = cell.text
    return out


def paragraph(page: PdfPage, top: float, lines: int = 3) -> None:
    for k in range(lines):
        page.text(60, top + 13 * k, PROSE)


def grid_text(page: PdfPage, xs: list[float], ys: list[float], cells: list[list[str]]) -> None:
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            if text:
                page.text(xs[c] + 4, ys[r] + 4, text)


# --- Rules drawn as rectangles and paths --------------------------------------------------------


def test_a_frame_drawn_as_one_closed_path_closes_the_grid() -> None:
    # The outer frame is one closed path (pdfplumber reports a curve); the inner rules are lines.
    page = PdfPage()
    paragraph(page, 60)
    xs, ys = [60.0, 200.0, 300.0, 400.0], [120.0 + 18 * k for k in range(5)]
    cells = [["Country", "2019", "2020"], ["Spain", "1.5", "2.5"]]
    cells += [["Italy", "3.5", "4.5"], ["France", "5.5", "6.5"]]
    grid_text(page, xs, ys, cells)
    # Started halfway along the top edge: pdfminer keeps such a path a curve.
    middle = (xs[0] + xs[-1]) / 2
    corners = [(middle, ys[0]), (xs[-1], ys[0]), (xs[-1], ys[-1]), (xs[0], ys[-1]), (xs[0], ys[0])]
    page.path(corners, close=True)
    for y in ys[1:-1]:
        page.line(xs[0], y, xs[-1], y)
    for x in xs[1:-1]:
        page.line(x, ys[0], x, ys[-1])
    paragraph(page, 230)
    (table,) = extract_page(layout(page))
    assert (table.strategy, rows(table)) == ("lines", cells)


def test_a_table_ruled_with_thin_filled_rectangles_between_paragraphs_is_found() -> None:
    # Word processors export every rule as a filled rectangle a fraction of a point thick
    # (here 0.3 pt, and the vertical ones 0.25 pt wide); the whole page must find the table
    # between the two paragraphs and read it by its rules.
    page = PdfPage()
    paragraph(page, 60)
    xs, ys = [60.0, 200.0, 300.0, 400.0], [120.0 + 18 * k for k in range(5)]
    cells = [["Country", "2019", "2020"], ["Spain", "1.5", "2.5"]]
    cells += [["Italy", "3.5", "4.5"], ["France", "5.5", "6.5"]]
    grid_text(page, xs, ys, cells)
    for y in ys:
        page.rect(xs[0], y, xs[-1], y + 0.3)
    for x in xs:
        page.rect(x, ys[0], x + 0.25, ys[-1])
    paragraph(page, 230)
    (table,) = extract_page(layout(page))
    assert (table.strategy, rows(table)) == ("lines", cells)


def test_a_header_label_beside_a_rule_that_starts_lower_down_stays_apart() -> None:
    # The rule between the last two columns is drawn cell by cell, the header's piece a tenth
    # of a point right of the body's (as exporters place them), and the labels either side of
    # it are close: the rule still separates them.
    page = PdfPage()
    xs, ys = [60.0, 160.0, 230.0, 280.0], [100.0, 118.0, 136.0, 154.0]
    for r, (label, left, right) in enumerate(
        [("Region", "Men", "Women"), ("North", "1.5", "2.5"), ("South", "3.5", "4.5")]
    ):
        page.text(64, ys[r] + 4, label)
        page.text(226 - 5.6 * len(left), ys[r] + 4, left)  # set against the rule
        page.text(234, ys[r] + 4, right)
    for y in ys:
        page.rect(xs[0], y, xs[-1], y + 0.45)
    for x in xs[:2] + xs[3:]:
        page.rect(x, ys[0], x + 0.45, ys[-1])
    page.rect(230.55, ys[0], 231.0, ys[1])  # rounds to 231
    for top, bottom in zip(ys[1:], ys[2:], strict=False):
        page.rect(230.45, top, 230.9, bottom)  # rounds to 230
    table = extract_box(layout(page), (xs[0], ys[0], xs[-1], ys[-1]))
    assert table.strategy == "lines"
    assert rows(table) == [
        ["Region", "Men", "Women"],
        ["North", "1.5", "2.5"],
        ["South", "3.5", "4.5"],
    ]


def test_a_row_label_over_two_ruled_rows_of_values_spans_them() -> None:
    # A label of two lines with no rule under its cell, beside two rows of values whose rules
    # are drawn: the rules still draw the table, and the label spans both rows.
    page = PdfPage()
    xs, ys = [60.0, 190.0, 260.0, 300.0], [100.0 + 18 * k for k in range(4)]
    page.text(64, 104, "Group")
    page.text(194, 104, "Men")
    page.text(264, 104, "Women")
    page.text(64, 122, "Blood")
    page.text(64, 140, "pressure")
    for r, (a, b) in enumerate([("10", "12"), ("14", "16")]):
        page.text(194, 122 + 18 * r, a)
        page.text(264, 122 + 18 * r, b)
    for x in xs:
        page.line(x, ys[0], x, ys[-1])
    page.line(xs[0], ys[0], xs[-1], ys[0])
    page.line(xs[0], ys[1], xs[-1], ys[1])
    page.line(xs[1], ys[2], xs[-1], ys[2])  # not under the label
    page.line(xs[0], ys[3], xs[-1], ys[3])
    table = extract_box(layout(page), (xs[0], ys[0], xs[-1], ys[-1]))
    assert table.strategy == "lines"
    assert rows(table) == [
        ["Group", "Men", "Women"],
        ["Blood pressure", "10", "12"],
        ["", "14", "16"],
    ]
    assert next(c for c in table.cells if c.text == "Blood pressure").rowspan == 2


# --- Columns -----------------------------------------------------------------------------------


def test_columns_with_one_value_each_are_not_merged() -> None:
    # Two outer columns hold a value in the first row only; their header labels stand apart.
    page = PdfPage()
    header = [(60, "Outer 1"), (130, "Outer 2"), (200, "Long 1"), (270, "Long 2"), (340, "Inner")]
    header.append((410, "Long 3"))
    for x, text in header:
        page.text(x, 100, text)
    for x, text in zip(
        (66, 136, 206, 276, 346, 416), ("A1", "B1", "C1", "D1", "E1", "F1"), strict=True
    ):
        page.text(x, 114, text)
    for k in (2, 3, 4):
        for x, column in ((206, "C"), (276, "D"), (416, "F")):
            page.text(x, 100 + 14 * k, f"{column}{k}")
    table = extract_box(layout(page), (60, 100, 450, 170))
    assert rows(table) == [
        ["Outer 1", "Outer 2", "Long 1", "Long 2", "Inner", "Long 3"],
        ["A1", "B1", "C1", "D1", "E1", "F1"],
        ["", "", "C2", "D2", "", "F2"],
        ["", "", "C3", "D3", "", "F3"],
        ["", "", "C4", "D4", "", "F4"],
    ]


def test_a_column_with_a_value_in_one_row_of_many_keeps_it_apart() -> None:
    # Twelve rows; the middle column has one value. Every other row leaves its gap open.
    page = PdfPage()
    page.text(60, 100, "Region")
    page.text(180, 100, "Note")
    page.text(262, 100, "Total")
    for k in range(12):
        top = 114 + 14 * k
        page.text(60, top, f"Region {k + 1}")
        page.text(270, top, f"{100 + 7 * k}.5")
    page.text(185, 114 + 14 * 5, "(p)")
    table = extract_box(layout(page), (60, 100, 300, 114 + 14 * 12))
    assert table.cols == 3
    assert rows(table)[6] == ["Region 6", "(p)", "135.5"]


def test_a_column_whose_only_text_is_its_header_stays_a_column() -> None:
    # "Revised" heads a column no row has a value in yet; its neighbours keep their headers.
    table = lined_table(
        [
            [(60, "Item"), (150, "Men"), (250, "Women"), (330, "Revised")],
            [(140, "2019"), (180, "2020"), (240, "2019"), (280, "2020")],
            [(60, "Alpha"), (145, "12"), (185, "13"), (245, "14"), (285, "15")],
            [(60, "Beta"), (145, "22"), (185, "23"), (245, "24"), (285, "25")],
        ]
    )
    assert rows(table)[0][-1] == "Revised"
    assert rows(table)[2] == ["Alpha", "12", "13", "14", "15", ""]
    # A justified label's last word pushed out past the values is not a column.
    justified = lined_table(
        [
            [(60, "Item"), (200, "Share"), (260, "Fraction"), (324, "of")],
            [(260, "Wealth Lost")],
            [(60, "Alpha"), (205, "12"), (265, "13")],
            [(60, "Beta"), (205, "22"), (265, "23")],
        ]
    )
    assert justified.cols == 3
    assert sorted(rows(justified)[0][2].split()) == ["Fraction", "Lost", "Wealth", "of"]


def test_units_set_just_past_a_header_label_are_not_a_column_of_their_own() -> None:
    # The caption's "(%)" on a line of its own, a word's gap past the end of the label over
    # the values: it stands clear of the values by a column's gap but belongs to that label.
    table = lined_table(
        [
            [(276, "(%)")],
            [(60, "Indicator"), (150, "Weight of indicator in 2006")],
            [(60, "Employment"), (200, "40")],
            [(60, "Dropping out"), (200, "15")],
            [(60, "Staff development"), (205, "6")],
        ]
    )
    assert table.cols == 2
    assert rows(table)[0] == ["Indicator", "(%) Weight of indicator in 2006"]
    assert rows(table)[1:] == [
        ["Employment", "40"],
        ["Dropping out", "15"],
        ["Staff development", "6"],
    ]


def test_a_frame_padded_far_past_the_text_still_draws_the_grid() -> None:
    # The last column is four times as wide as its numbers; no rule is drawn under "North" in
    # the label column, which makes it one cell over two rows.
    page = PdfPage()
    xs, ys = [60.0, 140.0, 190.0, 330.0], [100.0 + 18 * k for k in range(5)]
    cells = [("Region", "Men", "Women"), ("North", "1.5", "2.5"), ("", "3.5", "4.5")]
    cells.append(("South", "5.5", "6.5"))
    for r, row in enumerate(cells):
        for x, text in zip((64, 144, 194), row, strict=True):
            if text:
                page.text(x, ys[r] + 4, text)
    for k, y in enumerate(ys):
        page.line(xs[1] if k == 2 else xs[0], y, xs[-1], y)
    for x in xs:
        page.line(x, ys[0], x, ys[-1])
    table = extract_box(layout(page), (xs[0], ys[0], xs[-1], ys[-1]))
    assert rows(table) == [list(row) for row in cells]
    assert next(c for c in table.cells if c.text == "North").rowspan == 2


# --- Rows and header cells ---------------------------------------------------------------------


def lined_table(
    lines: list[list[tuple[float, str]]], *, rules_above: tuple[int, ...] = ()
) -> Table:
    """A table of text lines 14 pt apart (each item: x, text), with a rule across it above the
    lines numbered in ``rules_above``; read from a box around it."""
    page = PdfPage()
    for k, items in enumerate(lines):
        for x, text in items:
            page.text(x, 100 + 14 * k, text)
    for k in rules_above:
        page.line(55, 97.5 + 14 * k, 300, 97.5 + 14 * k)
    right = max(x + 6 * len(text) for items in lines for x, text in items) + 5
    return extract_box(layout(page), (55, 95, max(300, right), 100 + 14 * len(lines)))


HEADER = [(60, "Item"), (200, "2019"), (260, "2020")]


def test_rules_around_groups_of_rows_leave_each_groups_label_a_row_of_its_own() -> None:
    # Rules under the header, under the total and between the groups: each stretch between two
    # rules holds a group's label and its rows, not one row.
    table = lined_table(
        [
            HEADER,
            [(60, "Total"), (205, "30"), (265, "34")],
            [(60, "Male")],
            [(66, "Young"), (205, "10"), (265, "11")],
            [(66, "Old"), (210, "5"), (270, "6")],
            [(60, "Female")],
            [(66, "Young"), (205, "10"), (265, "11")],
            [(66, "Old"), (210, "5"), (270, "6")],
        ],
        rules_above=(1, 2, 5),
    )
    assert rows(table) == [
        ["Item", "2019", "2020"],
        ["Total", "30", "34"],
        ["Male", "", ""],
        ["Young", "10", "11"],
        ["Old", "5", "6"],
        ["Female", "", ""],
        ["Young", "10", "11"],
        ["Old", "5", "6"],
    ]


def test_a_label_line_hanging_under_a_row_continues_its_label() -> None:
    table = lined_table(
        [
            HEADER,
            [(60, "Exports to the United"), (205, "12"), (265, "13")],
            [(70, "Kingdom")],
            [(60, "Imports"), (205, "14"), (265, "15")],
        ]
    )
    assert rows(table)[1:] == [
        ["Exports to the United Kingdom", "12", "13"],
        ["Imports", "14", "15"],
    ]


def test_a_parents_label_wrapped_in_place_over_indented_children_continues_it() -> None:
    table = lined_table(
        [
            HEADER,
            [(60, "Diseases of the circulatory"), (205, "12"), (265, "13")],
            [(60, "system")],
            [(68, "Ischaemic heart diseases"), (210, "4"), (270, "5")],
            [(68, "Cerebrovascular diseases"), (210, "8"), (270, "8")],
        ]
    )
    assert rows(table)[1:] == [
        ["Diseases of the circulatory system", "12", "13"],
        ["Ischaemic heart diseases", "4", "5"],
        ["Cerebrovascular diseases", "8", "8"],
    ]


def test_a_label_line_ending_in_a_colon_heads_the_rows_below_it() -> None:
    table = lined_table(
        [
            HEADER,
            [(60, "Total population"), (200, "100"), (260, "200")],
            [(60, "of which:")],
            [(70, "Women"), (205, "50"), (260, "100")],
            [(70, "Men"), (205, "50"), (260, "100")],
        ]
    )
    assert rows(table)[1:3] == [["Total population", "100", "200"], ["of which:", "", ""]]


def test_two_line_header_labels_beside_one_line_labels_are_one_header_row() -> None:
    # A table of codes and names: bold two-line labels ("Code" / "State"), and one-line
    # labels set between their two lines.
    page = PdfPage()
    for x, first, second in ((60, "Code", "State"), (200, "Code", "District")):
        page.text(x, 100, first, bold=True)
        page.text(x, 112, second, bold=True)
    page.text(100, 106, "Name of state", bold=True)
    page.text(250, 106, "Name of district", bold=True)
    records = [
        ("01", "Aguascalientes", "001", "Calvillo"),
        ("02", "Baja California", "002", "Mexicali"),
    ]
    records.append(("03", "Campeche", "003", "Carmen"))
    for k, record in enumerate(records):
        for x, text in zip((64, 100, 204, 250), record, strict=True):
            page.text(x, 130 + 12 * k, text)
    table = extract_box(layout(page), (55, 95, 340, 170))
    assert table.header_rows == 1
    assert rows(table) == [
        ["Code State", "Name of state", "Code District", "Name of district"],
        *[list(record) for record in records],
    ]


# --- Whole pages: one table, not cut short ----------------------------------------------------


def section_rows(page: PdfPage, top: float, indent: float = 0) -> float:
    for label, a, b in [("Under 18", "1.5", "2.5"), ("18 to 64", "3.5", "4.5")]:
        page.text(60 + indent, top, label)
        page.text(205, top, a)
        page.text(265, top, b)
        top += 14
    return top


SECTION = [["Under 18", "1.5", "2.5"], ["18 to 64", "3.5", "4.5"]]


def test_sections_under_centred_headings_after_a_gap_are_one_table() -> None:
    page = PdfPage()
    paragraph(page, 40)
    for x, text in ((60, "Age"), (200, "2019"), (260, "2020")):
        page.text(x, 100, text)
    top = 120.0
    for heading in ("Male", "Female"):
        page.text(160, top, heading, bold=True)  # centred over the table
        top = section_rows(page, top + 18) + 14  # a blank line's gap after each section
    paragraph(page, top + 20)
    (table,) = extract_page(layout(page))
    assert rows(table) == [
        ["Age", "2019", "2020"],
        ["Male", "", ""],
        *SECTION,
        ["Female", "", ""],
        *SECTION,
    ]


def test_sections_under_headings_at_the_left_after_a_wide_gap_are_one_table() -> None:
    page = PdfPage()
    paragraph(page, 40)
    for x, text in ((60, "Age"), (200, "2019"), (260, "2020")):
        page.text(x, 100, text)
    top = 118.0
    for heading in ("Male", "Female"):
        page.text(60, top, heading, bold=True)
        top = section_rows(page, top + 16, indent=6) + 22
    paragraph(page, top + 10)
    (table,) = extract_page(layout(page))
    assert [r[0] for r in rows(table)] == ["Age", "Male", "Under 18", "18 to 64"] + [
        "Female",
        "Under 18",
        "18 to 64",
    ]


def test_two_tables_in_the_same_columns_under_their_own_headers_stay_two() -> None:
    page = PdfPage()
    for k, (header, years) in enumerate(
        [("Exports", ("2019", "2020")), ("Imports", ("2017", "2018"))]
    ):
        top = 100 + 70 * k
        page.text(60, top, header)
        page.text(200, top, years[0])
        page.text(260, top, years[1])
        section_rows(page, top + 16)
    assert len(extract_page(layout(page))) == 2


def test_the_last_rows_wrapped_label_stays_in_the_table() -> None:
    page = PdfPage()
    paragraph(page, 40)
    for x, text in ((60, "Offense"), (200, "2019"), (260, "2020")):
        page.text(x, 100, text)
    for k, label in enumerate(["Robbery", "Burglary", "All other offenses (except"]):
        page.text(60, 114 + 14 * k, label)
        page.text(205, 114 + 14 * k, f"{k}.5")
        page.text(265, 114 + 14 * k, f"{k}.7")
    page.text(66, 156, "traffic and parking)")
    paragraph(page, 190)
    (table,) = extract_page(layout(page))
    assert rows(table)[-1] == ["All other offenses (except traffic and parking)", "2.5", "2.7"]


def test_row_labels_left_of_a_ruled_frame_are_the_tables_first_column() -> None:
    page = PdfPage()
    paragraph(page, 40)
    xs, ys = [180.0, 240.0, 300.0], [100.0 + 16 * k for k in range(5)]
    cells = [("Offense", "2019", "2020"), ("Robbery", "1.5", "2.5")]
    cells += [("Burglary", "3.5", "4.5"), ("Arson", "5.5", "6.5")]
    for k, row in enumerate(cells):
        for x, text in zip((60, 190, 250), row, strict=True):
            page.text(x, ys[k] + 4, text)
    for y in ys:
        page.line(xs[0], y, xs[-1], y)
    for x in xs:
        page.line(x, ys[0], x, ys[-1])
    paragraph(page, 200)
    (table,) = extract_page(layout(page))
    assert rows(table) == [list(row) for row in cells]


def test_a_totals_row_framed_on_its_own_below_the_grid_is_part_of_the_table() -> None:
    page = PdfPage()
    paragraph(page, 40)
    xs, ys = [60.0, 180.0, 240.0, 300.0], [100.0 + 16 * k for k in range(5)]
    cells = [("Offense", "2019", "2020"), ("Robbery", "1.5", "2.5")]
    cells += [("Burglary", "3.5", "4.5"), ("Arson", "5.5", "6.5")]
    for k, row in enumerate(cells):
        for x, text in zip((64, 190, 250), row, strict=True):
            page.text(x, ys[k] + 4, text)
    for y in ys:
        page.line(xs[0], y, xs[-1], y)
    for x in xs:
        page.line(x, ys[0], x, ys[-1])
    page.rect(xs[0], ys[-1] + 8, xs[-1], ys[-1] + 24, fill=False, stroke=True)
    for x, text in zip((64, 190, 250), ("Total", "10.5", "13.5"), strict=True):
        page.text(x, ys[-1] + 12, text)
    paragraph(page, 210)
    (table,) = extract_page(layout(page))
    assert rows(table) == [list(row) for row in cells] + [["Total", "10.5", "13.5"]]


# --- Text direction and footnote markers --------------------------------------------------------


def test_right_to_left_text_is_stored_in_the_order_it_is_written(print_pdf) -> None:
    # Chromium, as most PDF producers, draws Arabic as presentation forms in visual order.
    names = [("الدوحة الكبرى", "956457"), ("الريان", "605712"), ("مدينة الخور", "202031")]
    body = "".join(f"<tr><td>{name}</td><td>{count}</td></tr>" for name, count in names)
    html = (
        '<!doctype html><html><head><meta charset="utf-8"><style>body{font: 12px "DejaVu Sans";'
        "margin: 24px} td, th {padding: 3px 10px; border: 1px solid #000} table "
        "{border-collapse: collapse}</style></head><body><table dir=rtl>"
        f"<tr><th>المنطقة</th><th>السكان</th></tr>{body}</table></body></html>"
    )
    with pdfplumber.open(io.BytesIO(print_pdf(html, a4=True))) as document:
        (table,) = extract_page(layout_from_pdfplumber(document.pages[0], 1))
    # The columns as the page lays them out, left to right; each cell's text as written.
    assert rows(table) == [["السكان", "المنطقة"]] + [[count, name] for name, count in names]


def test_column_headers_set_vertically_read_in_their_direction() -> None:
    page = PdfPage()
    xs, ys = [60.0, 140.0, 190.0, 240.0], [100.0, 190.0, 208.0, 226.0]
    page.text(64, 175, "County")
    page.vertical_text(170, 185, "Number of voters")  # reads up the page
    page.vertical_text(220, 185, "Poll Book Totals")
    for k, (name, a, b) in enumerate([("Alcona", "963", "439"), ("Curtis", "1026", "349")]):
        for x, text in ((64, name), (150, a), (200, b)):
            page.text(x, ys[k + 1] + 4, text)
    for y in ys:
        page.line(xs[0], y, xs[-1], y)
    for x in xs:
        page.line(x, ys[0], x, ys[-1])
    table = extract_box(layout(page), (xs[0], ys[0], xs[-1], ys[-1]))
    assert rows(table) == [
        ["County", "Number of voters", "Poll Book Totals"],
        ["Alcona", "963", "439"],
        ["Curtis", "1026", "349"],
    ]


def test_a_superscript_marker_glued_to_a_label_is_kept_apart_from_it() -> None:
    # One run of glyphs: "Stolen property" then a smaller, raised "1".
    page = PdfPage()
    page.text(60, 100, "Offense")
    page.text(200, 100, "Count")
    page.text_with_marker(60, 114, "Stolen property", "1")
    page.text(205, 114, "84.3")
    page.text_with_marker(60, 128, "Sex offenses", "2")
    page.text(205, 128, "61.5")
    page.text(60, 142, "Fraud")
    page.text(205, 142, "12.0")
    table = extract_box(layout(page), (55, 95, 260, 155))
    assert [r[0] for r in rows(table)] == [
        "Offense",
        "Stolen property 1",
        "Sex offenses 2",
        "Fraud",
    ]
