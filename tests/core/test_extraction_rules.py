"""Each extraction rule on a small page made of words and rules (``PageLayout``), as a PDF's
text layer or OCR gives them: no PDF needed, so each rule is seen alone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hctqa.core.extraction.extract import extract_box, extract_page
from hctqa.core.extraction.layout import PageLayout, Rule, Word, layout_of_words, words_from_chars
from hctqa.core.extraction.structure import DroppedText, check_nothing_dropped
from hctqa.core.extraction.table import (
    FLAG_INFERRED_SPAN,
    FLAG_JOINED_LINES,
    FLAG_LOW_CONFIDENCE,
    FLAG_NEAR_BOUNDARY,
    Cell,
    Table,
)
from hctqa.core.tables import parse_table

SIZE = 10.0
CHAR = 0.5 * SIZE  # a glyph's width, roughly


def words(y: float, *items: tuple[float, str], size: float = SIZE, **extra: object) -> list[Word]:
    """The words of one line: each item is (x, text); a text with spaces is several words a
    word space apart."""
    out = []
    for x, text in items:
        for word in text.split(" "):
            width = len(word) * CHAR * size / SIZE
            out.append(Word(word, x, y, x + width, y + size, size, **extra))  # type: ignore[arg-type]
            x += width + 0.25 * size
    return out


def page(*lines: list[Word], rules: tuple[Rule, ...] = (), source: str = "text") -> PageLayout:
    return layout_of_words(1, 600, 800, [w for line in lines for w in line], rules, source=source)  # type: ignore[arg-type]


def box_of(layout: PageLayout) -> tuple[float, float, float, float]:
    return (
        min(w.x0 for w in layout.words),
        min(w.top for w in layout.words),
        max(w.x1 for w in layout.words),
        max(w.bottom for w in layout.words),
    )


def rows(table: Table) -> list[list[str]]:
    return table.grid.to_rows()


def cell(table: Table, text: str) -> Cell:
    return next(c for c in table.cells if c.text == text)


def simple(*body: list[tuple[float, str]], header=((10, "Item"), (100, "2019"), (160, "2020"))):
    """A borderless table: a header line and body lines 14 pt apart."""
    lines = [words(100, *header)]
    lines += [words(114 + 14 * k, *items) for k, items in enumerate(body)]
    return page(*lines)


# --- Columns ----------------------------------------------------------------------------------


def test_right_aligned_and_decimal_numbers_stay_whole() -> None:
    layout = page(
        words(100, (10, "Offense"), (120, "Total")),
        # "11,062" and ".6" are two runs of glyphs, a hair apart.
        [*words(114, (10, "Total")), *words(114, (108, "11,062")), *words(114, (138.5, ".6"))],
        words(128, (10, "Rape"), (128, "(X)")),
        words(142, (10, "Arson"), (133, "–")),
        words(156, (10, "Ratio"), (118, "1.2e-3")),
    )
    table = extract_box(layout, box_of(layout))
    assert rows(table) == [
        ["Offense", "Total"],
        ["Total", "11,062.6"],
        ["Rape", "(X)"],
        ["Arson", "–"],
        ["Ratio", "1.2e-3"],
    ]


def test_narrow_numeric_columns_are_not_merged() -> None:
    # Seven-digit values whose columns stand less than a character apart.
    layout = page(
        words(100, (10, "State"), (80, "2008"), (125, "2009")),
        words(114, (10, "Alpha"), (80, "3,068,550"), (127, "3,103,540")),
        words(128, (10, "Beta"), (80, "1,212,001"), (127, "1,300,100")),
        words(142, (10, "Gamma"), (80, "2,000,000"), (127, "2,100,000")),
    )
    table = extract_box(layout, box_of(layout))
    assert table.cols == 3
    assert rows(table)[1] == ["Alpha", "3,068,550", "3,103,540"]


def test_leader_dots_are_removed_from_labels_and_kept_as_values() -> None:
    layout = page(
        words(100, (10, "Offense"), (150, "Count")),
        words(114, (10, "Burglary"), (52, ". . . . . . . . ."), (150, "240.9")),
        words(128, (10, "Robbery."), (54, ". . . . . . . ."), (150, "102.1")),
        words(142, (10, "Arson......."), (150, "..")),
    )
    table = extract_box(layout, box_of(layout))
    assert rows(table)[1:] == [["Burglary", "240.9"], ["Robbery", "102.1"], ["Arson", ".."]]


def test_a_footnote_marker_stays_in_its_cell_apart_from_the_label() -> None:
    marker = Word("1", 86, 113, 89, 119, 6.0)  # small and raised
    layout = page(
        words(100, (10, "Offense"), (150, "Count")),
        [*words(114, (10, "Stolen property"), (150, "84.3")), marker],
        words(128, (10, "Vandalism"), (150, "217.4")),
    )
    table = extract_box(layout, box_of(layout))
    assert table.cols == 2
    assert rows(table)[1] == ["Stolen property 1", "84.3"]


def test_a_number_near_a_column_boundary_is_marked() -> None:
    layout = page(
        words(100, (10, "Item"), (100, "North"), (140, "South")),
        words(114, (10, "Apples"), (100, "12"), (140, "13")),
        words(128, (10, "Pears"), (100, "14"), (124, "1,234,567")),
    )
    table = extract_box(layout, box_of(layout))
    assert FLAG_NEAR_BOUNDARY in cell(table, "1,234,567").flags
    assert not cell(table, "13").flags


# --- Rows -------------------------------------------------------------------------------------


def test_a_label_wrapped_over_two_lines_is_one_cell_and_marked() -> None:
    layout = simple(
        [(10, "Murder and nonnegligent")],
        [(14, "manslaughter"), (100, "10.0"), (160, "9.1")],
        [(10, "Robbery"), (100, "102.1"), (160, "76.6")],
    )
    table = extract_box(layout, box_of(layout))
    assert rows(table)[1:] == [
        ["Murder and nonnegligent manslaughter", "10.0", "9.1"],
        ["Robbery", "102.1", "76.6"],
    ]
    assert FLAG_JOINED_LINES in cell(table, "Murder and nonnegligent manslaughter").flags
    assert not cell(table, "Robbery").flags


def test_indentation_gives_row_nesting_in_the_canonical_csv() -> None:
    layout = simple(
        [(10, "Total"), (100, "30"), (160, "34")],
        [(10, "Violent crime"), (100, "20"), (160, "22")],
        [(16, "Murder"), (100, "5"), (160, "6")],
        [(16, "Robbery"), (100, "15"), (160, "16")],
        [(10, "Fraud"), (100, "10"), (160, "12")],
    )
    table = extract_box(layout, box_of(layout))
    assert table.row_levels == (0, 0, 0, 1, 1, 0)
    assert table.to_canonical() == (
        "Item,__,2019,2020\n"
        "Total,,30,34\n"
        "Violent crime,,20,22\n"
        "__,Murder,5,6\n"
        "__,Robbery,15,16\n"
        "Fraud,,10,12\n"
    )
    parsed = parse_table(table.to_canonical())
    assert parsed.header_columns == 2
    violent = next(c for c in parsed.cells if c.text == "Violent crime")
    assert (violent.rowspan, violent.colspan) == (3, 1)


def test_a_row_group_label_line_stays_a_row_group_label() -> None:
    layout = simple(
        [(10, "Schools")],
        [(10, "Government"), (100, "120"), (160, "125")],
        [(10, "Private"), (100, "300"), (160, "310")],
        [(10, "Students")],
        [(10, "Government"), (100, "51000"), (160, "52000")],
    )
    table = extract_box(layout, box_of(layout))
    assert table.header_rows == 1
    assert rows(table) == [
        ["Item", "2019", "2020"],
        ["Schools", "", ""],
        ["Government", "120", "125"],
        ["Private", "300", "310"],
        ["Students", "", ""],
        ["Government", "51000", "52000"],
    ]
    assert parse_table(table.to_canonical()).cells[3].role == "row_group_label"


# --- Headers ----------------------------------------------------------------------------------


def test_stacked_headers_keep_their_levels_and_a_centred_label_spans_its_columns() -> None:
    layout = page(
        words(100, (112, "Total"), (212, "Male")),
        words(
            114,
            (10, "Region"),
            (80, "Under 18"),
            (140, "Adults"),
            (180, "Under 18"),
            (240, "Adults"),
        ),
        words(128, (10, "North"), (90, "1.5"), (150, "2.5"), (190, "3.5"), (250, "4.5")),
        words(142, (10, "South"), (90, "5.5"), (150, "6.5"), (190, "7.5"), (250, "8.5")),
    )
    table = extract_box(layout, box_of(layout))
    assert (table.header_rows, table.header_cols) == (2, 1)
    assert rows(table)[:2] == [
        ["Region", "Total", "__", "Male", "__"],
        ["__", "Under 18", "Adults", "Under 18", "Adults"],
    ]
    total = cell(table, "Total")
    assert (total.colspan, FLAG_INFERRED_SPAN in total.flags) == (2, True)
    assert cell(table, "Region").rowspan == 2


def test_a_header_over_two_lines_is_one_cell() -> None:
    layout = page(
        words(100, (80, "Number of"), (150, "Share")),
        words(110.5, (80, "outlets"), (150, "(%)")),
        words(124, (10, "Spain"), (85, "440.2"), (152, "8.5")),
        words(138, (10, "Italy"), (85, "627.2"), (152, "9.1")),
    )
    table = extract_box(layout, box_of(layout))
    assert rows(table)[0] == ["", "Number of outlets", "Share (%)"]
    assert table.header_rows == 1


def test_two_line_header_cells_beside_a_centred_one_line_label_are_one_header_row() -> None:
    # A table of text and codes (no line of values), its header in regular weight with no
    # rule under it: "Region name" is set between the two lines of "Code" / "Region".
    places = ["Hill Farm", "Lake Side", "Old Mill", "Green Wood", "Red Rock", "Elm Court"]
    layout = page(
        words(100, (10, "Code"), (150, "Code")),
        words(106, (50, "Region name"), (190, "District name")),
        words(112, (8, "Region"), (146, "District")),
        *(
            words(128 + 14 * k, (14, f"0{k}"), (50, "North"), (154, f"00{k}"), (190, place))
            for k, place in enumerate(places)
        ),
    )
    [table] = extract_page(layout)
    assert table.header_rows == 1
    assert rows(table)[:2] == [
        ["Code Region", "Region name", "Code District", "District name"],
        ["00", "North", "000", "Hill Farm"],
    ]
    assert table.rows == 1 + len(places)


def test_a_line_of_years_is_a_header() -> None:
    layout = simple(
        [(10, "Exports"), (100, "1.2"), (160, "1.4")], [(10, "Imports"), (100, "2.2"), (160, "2.4")]
    )
    assert extract_box(layout, box_of(layout)).header_rows == 1


# --- Rules ------------------------------------------------------------------------------------


def _grid_rules(xs: list[float], ys: list[float]) -> tuple[Rule, ...]:
    h = tuple(Rule(xs[0], y, xs[-1], y) for y in ys)
    v = tuple(Rule(x, ys[0], x, ys[-1]) for x in xs)
    return h + v


def test_rules_around_every_cell_give_the_grid_and_a_missing_rule_a_span() -> None:
    # A 3 × 3 grid; the header's top-right cell has no rule between its two columns.
    xs, ys = [5.0, 75.0, 135.0, 195.0], [95.0, 112.0, 126.0, 140.0]
    rules = [r for r in _grid_rules(xs, ys) if not (r.x0 == 135.0 and r.top == 95.0)]
    rules += [Rule(135.0, 112.0, 135.0, 140.0)]
    layout = page(
        words(98, (10, "Region"), (130, "Share")),
        words(114, (10, "North"), (80, "1"), (140, "2")),
        words(128, (10, "South"), (80, "3"), (140, "4")),
        rules=tuple(rules),
    )
    table = extract_box(layout, box_of(layout))
    assert table.strategy == "lines"
    assert rows(table) == [["Region", "Share", "__"], ["North", "1", "2"], ["South", "3", "4"]]
    assert cell(table, "Share").flags == ()  # a rule-drawn span is no guess


def test_a_box_drawn_tight_to_the_text_still_sees_the_outer_rules() -> None:
    # A two-line cell ("Ethyl" / "benzene") that only the ruled rows keep together.
    xs, ys = [2.0, 70.0, 130.0], [96.0, 112.0, 140.0, 154.0]
    layout = page(
        words(99, (10, "Name"), (80, "Value")),
        words(115, (10, "Ethyl")),
        words(125, (10, "benzene"), (80, "12")),
        words(141, (10, "Toluene"), (80, "7")),
        rules=_grid_rules(xs, ys),
    )
    tight = (10.0, 99.0, 95.0, 151.0)
    table = extract_box(layout, tight)
    assert rows(table) == [["Name", "Value"], ["Ethyl benzene", "12"], ["Toluene", "7"]]


def test_a_ruled_header_over_an_unruled_body_uses_both() -> None:
    # Rules under the header and around the groups; the body's columns are text alone.
    rules = (
        Rule(5, 96, 250, 96),
        Rule(70, 109, 250, 109),
        Rule(5, 123, 250, 123),
        Rule(70, 96, 70, 170),
        Rule(160, 96, 160, 170),
    )
    layout = page(
        words(98, (95, "Total"), (185, "Male")),
        words(111, (10, "Item"), (80, "Young"), (120, "Old"), (170, "Young"), (210, "Old")),
        words(126, (10, "Apples"), (85, "1.0"), (125, "2.0"), (175, "3.0"), (215, "4.0")),
        words(140, (10, "Pears"), (85, "5.0"), (125, "6.0"), (175, "7.0"), (215, "8.0")),
        words(154, (10, "Plums"), (85, "9.0"), (125, "1.5"), (175, "2.5"), (215, "3.5")),
        rules=rules,
    )
    table = extract_box(layout, box_of(layout))
    assert rows(table) == [
        ["Item", "Total", "__", "Male", "__"],
        ["__", "Young", "Old", "Young", "Old"],
        ["Apples", "1.0", "2.0", "3.0", "4.0"],
        ["Pears", "5.0", "6.0", "7.0", "8.0"],
        ["Plums", "9.0", "1.5", "2.5", "3.5"],
    ]
    assert FLAG_INFERRED_SPAN not in cell(table, "Total").flags  # the rules draw it


# --- Whole pages, titles and notes ------------------------------------------------------------


def _table_lines(top: float, x: float = 40, title: str = "") -> list[list[Word]]:
    lines = [words(top - 16, (x, title))] if title else []
    lines.append(words(top, (x, "Country"), (x + 90, "2019"), (x + 140, "2020")))
    for k, name in enumerate(["Spain", "Italy", "France", "Greece"]):
        lines.append(words(top + 14 * (k + 1), (x, name), (x + 90, f"{k}.5"), (x + 140, f"{k}.7")))
    return lines


def test_a_whole_page_gives_each_table_with_its_title_and_notes_and_no_prose() -> None:
    prose = "The tables below show the figures for the last two years of the survey in each country"
    layout = page(
        words(40, (40, prose)),
        *_table_lines(100, title="Table 1. Exports by country (in millions)"),
        words(180, (40, "Source: National statistics offices.")),
        words(230, (40, prose)),
        *_table_lines(300, title="Table 2. Imports by country"),
    )
    tables = extract_page(layout)
    assert [t.title for t in tables] == [
        "Table 1. Exports by country (in millions)",
        "Table 2. Imports by country",
    ]
    assert [t.notes for t in tables] == ["Source: National statistics offices.", ""]
    assert [(t.rows, t.cols) for t in tables] == [(5, 3), (5, 3)]
    assert all(prose.split()[1] not in c.text for t in tables for c in t.cells)


def test_two_tables_side_by_side_are_two_tables() -> None:
    layout = page(*_table_lines(100, x=20), *_table_lines(100, x=250))
    tables = extract_page(layout)
    assert [(round(t.bbox[0]), t.rows, t.cols) for t in tables] == [(20, 5, 3), (250, 5, 3)]


def test_a_page_of_prose_has_no_table() -> None:
    text = "A paragraph of running text that goes on across the whole width of the page"
    layout = page(*(words(100 + 14 * k, (40, text)) for k in range(6)))
    assert extract_page(layout) == []


def test_ruled_blocks_joined_by_rows_whose_side_rules_were_lost_are_one_table() -> None:
    # A scan: the side rules of rows 4 to 7 did not survive, so the rules make two frames.
    tops = [100.0 + 14 * k for k in range(12)]
    lines = [
        words(top, (30, f"Region {k}"), (110, f"{k}.5"), (160, f"{k}.7"))
        for k, top in enumerate(tops)
    ]
    rules = [Rule(20, top - 2, 200, top - 2) for top in tops] + [
        Rule(20, tops[-1] + 12, 200, tops[-1] + 12)
    ]
    for first, last in ((0, 3), (8, 11)):
        rules += [Rule(x, tops[first] - 2, x, tops[last] + 12) for x in (20, 200)]
    tables = extract_page(page(*lines, rules=tuple(rules)))
    assert [(t.rows, t.cols) for t in tables] == [(12, 3)]


def test_a_figure_caption_past_a_tables_source_line_belongs_to_the_figure() -> None:
    layout = page(
        *_table_lines(100, title="Table 3. European issuance"),
        words(170, (40, "Source: Moody's.")),
        words(188, (40, "Chart 5")),
    )
    tables = extract_page(layout)
    assert [(t.rows, t.cols, t.notes) for t in tables] == [(5, 3, "Source: Moody's.")]


def test_a_caption_and_footnotes_inside_a_drawn_box_become_title_and_notes() -> None:
    layout = page(
        words(84, (10, "Table 3. Prices")),
        *_table_lines(100, x=10),
        words(176, (10, "Note: provisional figures.")),
    )
    table = extract_box(layout, box_of(layout))
    assert (table.title, table.notes) == ("Table 3. Prices", "Note: provisional figures.")
    assert rows(table)[0] == ["Country", "2019", "2020"]


# --- OCR layouts and the invariant ------------------------------------------------------------


def test_ocr_words_without_characters_go_through_the_same_rules() -> None:
    low = dict(confidence=0.35)
    layout = page(
        words(100, (10, "Item"), (100, "2019"), (160, "2020"), confidence=0.98),
        words(114, (10, "Apples"), (100, "12"), (160, "13"), confidence=0.97),
        [*words(128, (10, "Pears"), (100, "14"), confidence=0.95), *words(128, (160, "1S"), **low)],
        source="ocr",
    )
    assert layout.chars == ()
    table = extract_box(layout, box_of(layout))
    assert rows(table)[2] == ["Pears", "14", "1S"]
    assert FLAG_LOW_CONFIDENCE in cell(table, "1S").flags


def test_text_that_no_cell_holds_is_caught() -> None:
    found = page(words(100, (10, "Apples"), (100, "12")), words(114, (10, "Pears"), (100, "14")))
    table = extract_box(found, box_of(found))
    check_nothing_dropped(found.words, table, [])
    short = table.with_cells(c for c in table.cells if c.text != "14")
    with pytest.raises(DroppedText, match="14"):
        check_nothing_dropped(found.words, short, [])


_TOKENS = ["Total", "12", "3,068,550", ".", "..", "–", "(X)", "1", "Item", "and", "11,062", ".6"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_TOKENS),
            st.floats(0, 300),
            st.integers(0, 12),
            st.sampled_from([6.0, 10.0]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_no_layout_loses_a_character(items: list[tuple[str, float, int, float]]) -> None:
    """Whatever the words and wherever they sit, every character ends up in a cell, the
    title or the notes (the extractor raises ``DroppedText`` otherwise)."""
    layout = page(*(words(100 + 12 * line, (x, text), size=size) for text, x, line, size in items))
    extract_box(layout, box_of(layout))
    extract_page(layout)


# --- Words from a text layer ------------------------------------------------------------------


def _glyphs(items: list[tuple[str, float]], size: float = SIZE) -> list[dict[str, object]]:
    """pdfplumber's characters of one line: each item is (text, x), a glyph half an em wide."""
    return [
        {
            "text": text,
            "x0": x,
            "x1": x + 0.5 * size,
            "top": 100.0,
            "bottom": 100.0 + size,
            "doctop": 100.0,
            "width": 0.5 * size,
            "height": size,
            "size": size,
            "fontname": "NotoNaskhArabic",
            "upright": True,
            "matrix": (1, 0, 0, 1, x, 700),
        }
        for text, x in items
    ]


def test_a_ligature_glyph_keeps_its_letters_order_in_right_to_left_text() -> None:
    # "أم صلال" as a word processor writes it: glyphs left to right on the page, the lam-alef
    # ligature one glyph whose text is its two letters in reading order.
    chars = _glyphs([("ل", 100), ("لا", 105), ("ص", 110), ("م", 130), ("أ", 135)])
    assert [w.text for w in words_from_chars(chars)] == ["صلال", "أم"]
