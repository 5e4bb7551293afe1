"""Extraction on real documents nobody here made: tables of the ICDAR 2013 competition's EU
half against their human ground truth, every EU table and page read without dropping a
character, and tables 324 and 325 of the US Statistical Abstract 2012 (page 206) exactly."""

from __future__ import annotations

import statistics
from functools import cache
from pathlib import Path

import pdfplumber
import pytest

from hctqa.core.extraction.extract import extract_box, extract_page
from hctqa.core.extraction.icdar import TrueTable, read_folder
from hctqa.core.extraction.layout import PageLayout, layout_from_pdfplumber
from hctqa.core.extraction.metrics import AdjacencyCount, competition_form, teds
from hctqa.core.tables import parse_table
from tests.conftest import DATA_DIR

ICDAR = DATA_DIR / "icdar2013-eu"
STATISTICAL_ABSTRACT = DATA_DIR / "real-pdfs" / "12s0324.pdf"


@pytest.fixture(scope="module")
def icdar() -> dict[str, TrueTable]:
    if not ICDAR.is_dir():
        pytest.fail(f"The ICDAR 2013 EU set is not at {ICDAR}; set HCTQA_DATA_DIR.")
    return {t.name: t for t in read_folder(ICDAR)}


@cache
def _layout(pdf: Path, page: int) -> PageLayout:
    with pdfplumber.open(pdf) as document:
        return layout_from_pdfplumber(document.pages[page - 1], page)


# Ruled and borderless, spans in headers and rows, multi-line cells, row-group labels, from
# odd- and even-numbered documents.
EXACT = [
    "eu-001#6",  # ruled; a header over three columns; cells of two and three lines
    "eu-003#3",  # ruled; justified text, wide word gaps inside cells
    "eu-004#1",  # ruled; three-line headers
    "eu-004#6",  # borderless; years over two columns each
    "eu-005#2",  # nine columns of numbers
    "eu-007#6",  # ruled text table; cells of up to four lines
    "eu-009a#1",  # three header levels, spans over two and four columns
    "eu-012#3",  # thirteen columns, groups of four under spanning labels
    "eu-014#1",  # row-group labels
    "eu-015#2",  # ruled; a label of six lines beside one value
    "eu-022#1",  # a corner label over two header rows
    "eu-025#3",  # shaded header, a label over three columns
    "eu-027#1",  # twenty-eight rows
]


@pytest.mark.parametrize("name", EXACT)
def test_a_real_table_comes_out_exactly_as_its_ground_truth(icdar, name: str) -> None:
    truth = icdar[name]
    (region,) = truth.regions
    table = extract_box(_layout(truth.pdf, region.page), region.bbox)
    assert competition_form(table.grid) == competition_form(truth.grid)


def test_every_eu_table_and_page_is_read_without_dropping_a_character(icdar) -> None:
    """Each extraction checks that every character of its region is in a cell, the title or
    the notes (``check_nothing_dropped`` raises otherwise); this runs it on the whole set, in
    both modes, and keeps the figures from sliding back."""
    scores, relations = [], AdjacencyCount()
    for truth in icdar.values():
        grids = []
        for region in truth.regions:
            table = extract_box(_layout(truth.pdf, region.page), region.bbox)
            grids.append(competition_form(table.grid))
        assert len(grids) == 1
        scores.append(teds(grids[0], competition_form(truth.grid), count_root=False))
        relations.add(grids[0], competition_form(truth.grid))
    found = 0
    for pdf in sorted({t.pdf for t in icdar.values()}):
        with pdfplumber.open(pdf) as document:
            count = len(document.pages)
        for number in range(1, count + 1):
            found += len(extract_page(_layout(pdf, number)))
    assert statistics.fmean(scores) >= 0.95
    assert relations.f1 >= 0.95
    assert len(icdar) <= found <= len(icdar) + 11  # every table, at most 0.1 extra a page


# --- The US Statistical Abstract 2012, page 206 ---------------------------------------------

TABLE_324_BODY = [
    (
        "Total",
        "11,062.6",
        "1,540.0",
        "9,522.6",
        "8,263.3",
        "1,071.6",
        "7,191.7",
        "2,799.2",
        "468.3",
        "2,330.9",
    ),
    ("Violent crime", "467.9", "69.1", "398.8", "380.2", "56.5", "323.7", "87.7", "12.6", "75.2"),
    (
        "Murder and nonnegligent manslaughter",
        "10.0",
        "0.9",
        "9.1",
        "9.0",
        "0.9",
        "8.1",
        "1.1",
        "–",
        "1.0",
    ),
    ("Forcible rape", "17.5", "2.6", "14.9", "17.2", "2.5", "14.7", "–", "–", "–"),
    ("Robbery", "102.1", "25.5", "76.6", "90.0", "22.9", "67.1", "12.1", "2.5", "9.5"),
    (
        "Aggravated assault",
        "338.4",
        "40.1",
        "298.3",
        "264.0",
        "30.2",
        "233.8",
        "74.4",
        "9.9",
        "64.5",
    ),
    (
        "Property crime",
        "1,396.4",
        "338.7",
        "1,057.7",
        "875.9",
        "210.8",
        "665.1",
        "608.2",
        "127.9",
        "392.6",
    ),
    ("Burglary", "240.9", "60.3", "180.6", "205.0", "53.4", "151.7", "35.9", "6.9", "29.0"),
    (
        "Larceny-theft",
        "1,080.1",
        "258.1",
        "822.0",
        "608.8",
        "140.5",
        "468.3",
        "471.3",
        "117.6",
        "353.6",
    ),
    ("Motor vehicle theft", "65.6", "16.0", "49.6", "53.9", "13.3", "40.7", "11.7", "2.7", "8.9"),
    ("Arson", "9.8", "4.3", "5.5", "8.1", "3.7", "4.4", "1.7", "0.6", "1.1"),
    (
        "Other assaults",
        "1,061.3",
        "175.3",
        "886.1",
        "785.4",
        "115.4",
        "670.0",
        "276.0",
        "59.9",
        "216.1",
    ),
    (
        "Forgery and counterfeiting",
        "68.9",
        "1.7",
        "67.2",
        "42.9",
        "1.2",
        "41.7",
        "26.0",
        "0.5",
        "25.5",
    ),
    ("Fraud", "173.7", "5.1", "168.5", "98.4", "3.3", "95.0", "75.3", "1.8", "73.5"),
    ("Embezzlement", "14.6", "–", "14.1", "7.2", "–", "6.9", "7.4", "–", "7.2"),
    ("Stolen property 1", "84.3", "15.1", "69.2", "66.7", "12.2", "54.5", "17.6", "2.8", "14.7"),
    ("Vandalism", "217.4", "72.7", "144.7", "178.1", "62.8", "115.3", "39.3", "9.9", "29.4"),
    (
        "Weapons; carrying, possessing, etc.",
        "132.9",
        "27.1",
        "105.8",
        "122.1",
        "24.3",
        "97.8",
        "10.8",
        "2.8",
        "8.0",
    ),
    (
        "Prostitution and commercialized vice",
        "56.9",
        "1.1",
        "55.8",
        "17.3",
        "–",
        "17.1",
        "39.6",
        "0.8",
        "38.7",
    ),
    ("Sex offenses 2", "61.5", "10.7", "50.7", "56.1", "9.6", "46.5", "5.4", "1.1", "4.3"),
    (
        "Drug abuse violations",
        "1,333.0",
        "136.6",
        "1,196.4",
        "1,084.3",
        "115.2",
        "969.1",
        "248.7",
        "21.4",
        "227.3",
    ),
    ("Gambling", "8.2", "1.4", "6.8", "7.2", "1.4", "5.9", "0.9", "–", "0.9"),
    (
        "Offenses against the family and children",
        "92.4",
        "3.7",
        "88.7",
        "68.9",
        "2.4",
        "66.6",
        "23.4",
        "1.3",
        "22.1",
    ),
    (
        "Driving under the influence",
        "1,158.5",
        "109.2",
        "1,147.5",
        "895.8",
        "8.2",
        "887.6",
        "262.7",
        "2.7",
        "260.0",
    ),
    ("Liquor laws", "48.2", "90.2", "368.0", "326.8", "55.4", "271.4", "131.4", "34.7", "96.6"),
    ("Drunkenness", "488.1", "11.4", "476.8", "406.8", "8.5", "398.3", "81.3", "2.9", "78.4"),
    (
        "Disorderly conduct",
        "529.5",
        "136.1",
        "393.3",
        "387.1",
        "90.8",
        "296.2",
        "142.4",
        "45.3",
        "97.1",
    ),
    ("Vagrancy", "26.6", "2.2", "24.4", "20.9", "1.6", "19.3", "5.7", "0.6", "5.1"),
    (
        "All other offenses (except traffic)",
        "306.1",
        "263.4",
        "2,800.8",
        "2,337.1",
        "194.2",
        "2,142.9",
        "727.0",
        "69.2",
        "657.9",
    ),
    ("Suspicion", "1.6", "–", "1.4", "1.2", "–", "1.0", "–", "–", "–"),
    (
        "Curfew and loitering law violations",
        "91.0",
        "91.0",
        "(X)",
        "63.1",
        "63.1",
        "(X)",
        "28.0",
        "28.0",
        "(X)",
    ),
    ("Runaways", "75.8", "75.8", "(X)", "34.0", "34.0", "(X)", "41.8", "41.8", "(X)"),
]
TABLE_324_LEVELS = (
    0,
    0,
    0,
    0,
    1,
    1,
    1,
    1,
    0,
    1,
    1,
    1,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
)
TABLE_324_TITLE = (
    "Table 324. Arrests by Sex and Age: 2009 [In thousands (11,062.6 represents 11,062,600) "
    "For year ending December 31. Based on Uniform Crime Reporting (UCR) Program. "
    "Represents arrests reported (not charged) by 12,910 agencies with a total population "
    "of 247,526,916 as estimated by the FBI. Some persons may be arrested more than once "
    "during a year, therefore, the data in this table, in some cases, could represent "
    "multiple arrests of the same person. See text, this section and source]"
)
TABLE_324_NOTES = (
    "– Represents zero. X Not applicable. 1 Buying, receiving, possessing stolen property. "
    "2 Except forcible rape and prostitution. Source: U.S. Department of Justice, Federal "
    "Bureau of Investigation, Uniform Crime Reports, Arrests Master Files."
)
TABLE_325_BODY = [
    ("Total", "10,690,561", "7,389,208", "3,027,153", "150,544", "123,656"),
    ("Violent crime", "456,965", "268,346", "177,766", "5,608", "5,245"),
    ("Murder and nonnegligent manslaughter", "9,739", "4,741", "4,801", "100", "97"),
    ("Forcible rape", "16,362", "10,644", "5,319", "169", "230"),
    ("Robbery", "100,496", "43,039", "55,742", "726", "989"),
    ("Aggravated assault", "330,368", "209,922", "111,904", "4,613", "3,929"),
    ("Property crime", "1,364,409", "922,139", "406,382", "17,599", "18,289"),
    ("Burglary", "234,551", "155,994", "74,419", "2,021", "2,117"),
    ("Larceny-theft", "1,056,473", "719,983", "306,625", "14,646", "15,219"),
    ("Motor vehicle theft", "63,919", "39,077", "23,184", "817", "841"),
    ("Arson", "9,466", "7,085", "2,154", "115", "112"),
    ("Other assaults", "1,032,502", "672,865", "332,435", "15,127", "12,075"),
    ("Forgery and counterfeiting", "67,054", "44,730", "21,251", "345", "728"),
    ("Fraud", "161,233", "108,032", "50,367", "1,315", "1,519"),
    ("Embezzlement", "13,960", "9,208", "4,429", "75", "248"),
    ("Stolen property; buying, receiving, possessing", "82,714", "51,953", "29,357", "662", "742"),
    ("Vandalism", "212,173", "157,723", "48,746", "3,352", "2,352"),
    ("Weapons—carrying, possessing, etc.", "130,503", "74,942", "53,441", "951", "1,169"),
    ("Prostitution and commercialized vice", "56,560", "31,699", "23,021", "427", "1,413"),
    ("Sex offenses 1", "60,175", "44,240", "14,347", "715", "873"),
    ("Drug abuse violations", "1,301,629", "845,974", "437,623", "8,588", "9,444"),
    ("Gambling", "8,046", "2,290", "5,518", "27", "211"),
    ("Offenses against the family and children", "87,232", "58,068", "26,850", "1,690", "624"),
    ("Driving under the influence", "1,105,401", "954,444", "121,594", "14,903", "14,460"),
    ("Liquor laws", "444,087", "373,189", "50,431", "14,876", "5,591"),
    ("Drunkenness", "469,958", "387,542", "71,020", "8,552", "2,844"),
    ("Disorderly conduct", "515,689", "326,563", "176,169", "8,783", "4,174"),
    ("Vagrancy", "26,347", "14,581", "11,031", "543", "192"),
    (
        "All other offenses (except traffic)",
        "2,929,217",
        "1,937,221",
        "911,670",
        "43,880",
        "36,446",
    ),
    ("Suspicion", "1,513", "677", "828", "1", "7"),
    ("Curfew and loitering law violations", "89,578", "54,439", "33,207", "872", "1,060"),
    ("Runaways", "73,616", "48,343", "19,670", "1,653", "3,950"),
]
TABLE_325_LEVELS = (
    0,
    0,
    0,
    1,
    1,
    1,
    1,
    0,
    1,
    1,
    1,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
)
TABLE_325_TITLE = (
    "Table 325. Arrests by Race: 2009 [Based on Uniform Crime Reporting (UCR) Program. "
    "Represents arrests reported (not charged) by 12,371 agencies with a total population "
    "of 239,839,971 as estimated by the FBI. See headnote, Table 324]"
)
TABLE_325_NOTES = (
    "1 Except forcible rape and prostitution. Source: U.S. Department of Justice, Federal "
    "Bureau of Investigation, “Crime in the United States, Arrests,” September 2010, "
    "<http://www.fbi.gov/ucr/cius2009/arrests/index.html>."
)


@pytest.fixture(scope="module")
def abstract_tables():
    if not STATISTICAL_ABSTRACT.is_file():
        pytest.fail(f"{STATISTICAL_ABSTRACT} is missing; set HCTQA_DATA_DIR.")
    return extract_page(_layout(STATISTICAL_ABSTRACT, 1))


def test_the_statistical_abstract_page_holds_tables_324_and_325(abstract_tables) -> None:
    assert [t.title.split(".")[0] for t in abstract_tables] == ["Table 324", "Table 325"]


def test_table_324_comes_out_right(abstract_tables) -> None:
    table = abstract_tables[0]
    assert (table.header_rows, table.header_cols, table.rows, table.cols) == (2, 1, 34, 10)
    rows = table.grid.to_rows()
    groups = ["Total", "__", "__", "Male", "__", "__", "Female", "__", "__"]
    ages = ["Total", "Under 18 years", "18 years and over"]
    assert rows[:2] == [["Offense charged", *groups], ["__", *ages * 3]]
    assert [tuple(r) for r in rows[2:]] == TABLE_324_BODY
    assert (table.row_levels, table.title, table.notes) == (
        TABLE_324_LEVELS,
        TABLE_324_TITLE,
        TABLE_324_NOTES,
    )
    # The rules draw the groups' spans; the corner reaches over both header rows by inference.
    spans = {
        (c.text, c.rowspan, c.colspan, "span_without_rule" in c.flags)
        for c in table.cells
        if c.rowspan * c.colspan > 1
    }
    assert spans == {
        ("Offense charged", 2, 1, True),
        ("Total", 1, 3, False),
        ("Male", 1, 3, False),
        ("Female", 1, 3, True),
    }


def test_table_324_nests_indented_rows_in_its_canonical_csv(abstract_tables) -> None:
    canonical = abstract_tables[0].to_canonical()
    assert canonical.splitlines()[:8] == [
        "Offense charged,__,Total,__,__,Male,__,__,Female,__,__",
        "__,__,Total,Under 18 years,18 years and over,Total,Under 18 years,18 years and over,"
        "Total,Under 18 years,18 years and over",
        'Total,,"11,062.6","1,540.0","9,522.6","8,263.3","1,071.6","7,191.7","2,799.2",468.3,'
        '"2,330.9"',
        "Violent crime,,467.9,69.1,398.8,380.2,56.5,323.7,87.7,12.6,75.2",
        "__,Murder and nonnegligent manslaughter,10.0,0.9,9.1,9.0,0.9,8.1,1.1,–,1.0",
        "__,Forcible rape,17.5,2.6,14.9,17.2,2.5,14.7,–,–,–",
        "__,Robbery,102.1,25.5,76.6,90.0,22.9,67.1,12.1,2.5,9.5",
        "__,Aggravated assault,338.4,40.1,298.3,264.0,30.2,233.8,74.4,9.9,64.5",
    ]
    parsed = parse_table(canonical)
    assert (parsed.header_rows, parsed.header_columns) == (2, 2)
    violent = next(c for c in parsed.cells if c.text == "Violent crime")
    assert (violent.row, violent.rowspan) == (3, 5)


def test_table_325_comes_out_right(abstract_tables) -> None:
    table = abstract_tables[1]
    assert (table.header_rows, table.header_cols, table.rows, table.cols) == (1, 1, 33, 6)
    rows = table.grid.to_rows()
    assert rows[0] == [
        "Offense charged",
        "Total",
        "White",
        "Black",
        "American Indian/Alaskan Native",
        "Asian Pacific Islander",
    ]
    assert [tuple(r) for r in rows[1:]] == TABLE_325_BODY
    assert (table.row_levels, table.title, table.notes) == (
        TABLE_325_LEVELS,
        TABLE_325_TITLE,
        TABLE_325_NOTES,
    )
