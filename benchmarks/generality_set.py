"""A generality set of our own: government-statistics-like documents made the way real ones
are made (word processor, spreadsheet and browser), each table's true structure known from how
it was generated, written as ICDAR 2013 competition files so that ``ingest_icdar.py`` measures
them exactly as it measures the EU half.

    .venv/bin/python benchmarks/generality_set.py [--out DIR] [--documents N] [--seed S]
    .venv/bin/python benchmarks/ingest_icdar.py --data DIR/dev --no-peers
    .venv/bin/python benchmarks/ingest_icdar.py --data DIR/held-out --no-peers

**These are our own renderings. They do NOT stand for real documents**: they check that the
rules are general (a rule that fits one file of the EU half, or one peer case, fails here),
and the EU half, the scans and the peer set stay the real-document figures. The set is split
in two: ``dev/`` to develop on, ``held-out/`` measured only at the end of a round, never tuned
on. The documents are generated on demand and never committed (default ``DIR``:
``var/generality``).

Each document is written in one of four ways, as real ones are:
- **docx**: a Word document (python-docx) converted by LibreOffice Writer
  (``soffice --headless --convert-to pdf``): borders as drawn lines;
- **xlsx**: a spreadsheet (openpyxl) printed by LibreOffice Calc, title, units and notes in
  cells around the table, several tables on one sheet;
- **html**: a web page printed by Debian's chromium (``tests/chromium.py``): CSS borders as thin
  filled rectangles, shaded header bands with white text, zebra rows, a frame drawn as one
  SVG path with its rules, rounded frames;
- **odt-html**: the same kind of page converted by LibreOffice Writer's HTML import.

The kinds of table the extraction issue lists are drawn at random, each in many tables: fully
ruled, rules above and below only, no rules, header bands, zebra rows, frames only, a row label
column outside the frame, a framed totals row, stacked sections with group label rows and a gap,
section headings centred across the table, sparse columns, wrapped labels, label-only rows,
two-line header cells, nested headers, indented rows, a bilingual column in Arabic
(right-to-left), vertical header text and footnote markers; in portrait and landscape pages of
several fonts, sizes, widths and margins, between paragraphs of prose, several tables on a
page, with captions, units lines, notes, sources and running heads.

**How the truth is known.** Every document is rendered twice: as it is, and with each table's
cells shaded in a colour of its own (shading moves nothing). The shaded boxes give each table's
page and region; the words inside the region must be exactly the table's cells' text (a
document where they are not, say a cell's text clipped, is made again with another seed), and
a table that runs over two pages is started on a new page. Needs LibreOffice
(``apt-get install libreoffice-writer-nogui libreoffice-calc-nogui``), the fonts
``fonts-liberation fonts-dejavu-core fonts-noto-core fonts-crosextra-carlito
fonts-crosextra-caladea``, and chromium.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SOFFICE_SECONDS = 120
HALVES = ("dev", "held-out")
GENERATED = "GENERATED.txt"  # says, in each half's folder, that these are our renderings

# --- Content ----------------------------------------------------------------------------------

# Row label hierarchies: (label, children); a theme's column scheme and value kind.
THEMES: list[dict] = [
    {
        "title": "Employed persons by industry",
        "rows": [
            ("Agriculture, forestry and fishing", []),
            (
                "Industry",
                ["Mining and quarrying", "Manufacturing", "Electricity, gas and water supply"],
            ),
            ("Construction", []),
            (
                "Services",
                [
                    "Wholesale and retail trade; repair of motor vehicles",
                    "Transportation and storage",
                    "Accommodation and food service activities",
                    "Information and communication",
                    "Financial and insurance activities",
                    "Public administration and defence; compulsory social security",
                    "Education",
                    "Human health and social work activities",
                ],
            ),
        ],
        "units": "Thousands",
        "scale": 400,
    },
    {
        "title": "Offenses known to the police",
        "rows": [
            (
                "Violent crime",
                ["Murder and nonnegligent manslaughter", "Rape", "Robbery", "Aggravated assault"],
            ),
            ("Property crime", ["Burglary", "Larceny-theft", "Motor vehicle theft", "Arson"]),
            (
                "Other offenses",
                [
                    "Forgery and counterfeiting",
                    "Fraud",
                    "Embezzlement",
                    "Stolen property; buying, receiving, possessing",
                    "Vandalism",
                ],
            ),
        ],
        "units": "Number of offenses",
        "scale": 90000,
    },
    {
        "title": "Population by municipality",
        "rows": [
            ("Doha", []),
            ("Al Rayyan", []),
            ("Al Wakra", []),
            ("Umm Salal", []),
            ("Al Khor", []),
            ("Al Shamal", []),
            ("Al Daayen", []),
            ("Al Shahaniya", []),
        ],
        "units": "Persons",
        "scale": 300000,
        "arabic": {
            "Doha": "الدوحة",
            "Al Rayyan": "الريان",
            "Al Wakra": "الوكرة",
            "Umm Salal": "أم صلال",
            "Al Khor": "الخور",
            "Al Shamal": "الشمال",
            "Al Daayen": "الظعاين",
            "Al Shahaniya": "الشيحانية",
            "Total": "المجموع",
        },
    },
    {
        "title": "General government expenditure by function",
        "rows": [
            (
                "General public services",
                ["Executive and legislative organs", "Public debt transactions"],
            ),
            ("Defence", []),
            ("Public order and safety", ["Police services", "Law courts", "Prisons"]),
            ("Economic affairs", ["Transport", "Fuel and energy", "Agriculture"]),
            ("Environmental protection", []),
            ("Health", ["Hospital services", "Outpatient services", "Public health services"]),
            (
                "Education",
                ["Pre-primary and primary education", "Secondary education", "Tertiary education"],
            ),
            ("Social protection", ["Old age", "Family and children", "Unemployment"]),
        ],
        "units": "EUR million",
        "scale": 20000,
    },
    {
        "title": "Students enrolled by level of education",
        "rows": [
            ("Pre-primary", []),
            ("Primary", ["Public schools", "Private schools"]),
            ("Lower secondary", ["Public schools", "Private schools"]),
            ("Upper secondary", ["General programmes", "Vocational programmes"]),
            (
                "Tertiary",
                [
                    "Short-cycle tertiary",
                    "Bachelor's or equivalent",
                    "Master's or equivalent",
                    "Doctoral or equivalent",
                ],
            ),
        ],
        "units": "Number of students",
        "scale": 50000,
    },
    {
        "title": "Exports of goods by main trading partner",
        "rows": [
            ("European Union", ["Germany", "France", "Italy", "Netherlands", "Spain"]),
            ("Other Europe", ["United Kingdom", "Switzerland", "Norway"]),
            ("Asia", ["China", "Japan", "India", "Republic of Korea"]),
            ("Americas", ["United States", "Canada", "Brazil"]),
        ],
        "units": "USD million",
        "scale": 8000,
    },
    {
        "title": "Hospital discharges by diagnosis",
        "rows": [
            ("Infectious and parasitic diseases", []),
            ("Neoplasms", ["Malignant neoplasms", "Benign neoplasms"]),
            (
                "Diseases of the circulatory system",
                ["Ischaemic heart diseases", "Cerebrovascular diseases"],
            ),
            ("Diseases of the respiratory system", ["Pneumonia", "Asthma"]),
            ("Diseases of the digestive system", []),
            ("Injury, poisoning and certain other consequences of external causes", []),
        ],
        "units": "Per 100 000 inhabitants",
        "scale": 2000,
    },
    {
        "title": "Dwellings completed by type of building",
        "rows": [
            (
                "Residential buildings",
                [
                    "One-dwelling buildings",
                    "Two-dwelling buildings",
                    "Buildings with three or more dwellings",
                ],
            ),
            ("Residences for communities", []),
            (
                "Non-residential buildings",
                ["Hotels", "Office buildings", "Industrial buildings and warehouses"],
            ),
        ],
        "units": "Number",
        "scale": 9000,
    },
]

SECTIONS = [
    ("Male", "Female"),
    ("Urban", "Rural"),
    ("Qatari", "Non-Qatari"),
    ("Public sector", "Private sector"),
]
PARENTS = [
    ("Male", "Female", "Total"),
    ("Urban", "Rural"),
    ("Number", "Per cent"),
    ("Exports", "Imports"),
    ("Men", "Women"),
]
LONG_HEADERS = [
    "Average monthly earnings",
    "Change over previous year",
    "Share of total population",
    "Persons in employment",
    "Households with children",
    "Annual growth rate",
    "Average length of stay",
    "Expenditure per capita",
]
NOTES = [
    "Note: Figures may not add up to totals because of rounding.",
    "Note: Data for the latest year are provisional.",
    "Note: Break in series in 2019 following the revision of the classification.",
]
SOURCES = [
    "Source: Planning and Statistics Authority, Labour Force Survey.",
    "Source: Federal Bureau of Investigation, Uniform Crime Reports.",
    "Source: Eurostat, national accounts (table gov_10a_exp).",
    "Source: Ministry of Education and Higher Education, annual school census.",
    "Source: National Statistical Office, administrative records.",
]
FOOTNOTES = [
    "Includes persons whose industry was not stated.",
    "Excludes institutional households.",
    "Revised figures.",
    "Estimate based on a sample survey.",
]
PROSE = [
    "The number of {thing} rose by {p} per cent in {y}, mainly because of the growth recorded "
    "in the largest municipalities.",
    "Compared with the previous year, {thing} fell slightly, although the decline was "
    "concentrated in a few groups.",
    "Table {t} shows {thing} by main category; the detailed breakdown is available in the "
    "online database.",
    "Data for {y} are provisional and will be revised when the annual survey results become "
    "available.",
    "The classification used in this chapter follows the international standard adopted in {y}.",
    "Over the period as a whole, {thing} increased at an average annual rate of {p} per cent.",
    "Figures refer to the end of the reference period unless stated otherwise in the notes "
    "below each table.",
    "Regional differences remained large: the highest values were again recorded in the "
    "capital region.",
    "Users should note that totals may differ from the sum of their components because of "
    "rounding.",
]
FONTS_DOCX = [
    "Liberation Serif",
    "Liberation Sans",
    "Carlito",
    "Caladea",
    "DejaVu Sans",
    "Liberation Sans Narrow",
    "DejaVu Serif",
]
FONTS_HTML = [
    "Liberation Sans",
    "Liberation Serif",
    "DejaVu Sans",
    "Noto Sans",
    "Noto Serif",
    "Carlito",
    "DejaVu Sans Condensed",
]
STYLES = [
    "grid",
    "booktabs",
    "borderless",
    "header_band",
    "zebra",
    "frame",
    "horizontal",
    "header_ruled",
]
MINUS = "\u2212"


@dataclass
class HCell:
    text: str
    row: int
    col: int
    rowspan: int = 1
    colspan: int = 1
    vertical: bool = False


@dataclass
class BodyRow:
    cells: list[str]  # one text per column; "" for an empty cell
    kind: str = "data"  # data, group (a label alone), heading (centred across), total
    level: int = 0
    marker: str = ""  # a footnote marker set after the label
    gap: bool = False  # a vertical gap before it (a new section)


@dataclass
class Spec:
    """One table: its header cells, body rows, and how it is dressed."""

    header: list[HCell]
    header_rows: int
    body: list[BodyRow]
    n_cols: int
    style: str
    title: str = ""
    units: str = ""
    notes: list[str] = field(default_factory=list)
    rtl_col: int | None = None  # the column in Arabic
    label_outside: bool = False  # the row label column outside the frame
    framed_total: bool = False  # the totals row framed on its own
    width: float = 1.0  # share of the text width
    narrow_stub: bool = False
    kinds: list[str] = field(default_factory=list)

    def truth(self) -> list[tuple[int, int, int, int, str]]:
        """(row, col, rowspan, colspan, text) of every non-empty cell."""
        cells = [(h.row, h.col, h.rowspan, h.colspan, h.text) for h in self.header if h.text]
        for k, row in enumerate(self.body):
            r = self.header_rows + k
            if row.kind == "heading":
                cells.append((r, 0, 1, self.n_cols, row.cells[0]))
                continue
            for c, text in enumerate(row.cells):
                if c == 0 and row.marker and text:
                    text = f"{text} {row.marker}"
                if text:
                    cells.append((r, c, 1, 1, text))
        return cells


def _value(rng: random.Random, scale: float, kind: str) -> str:
    x = rng.uniform(0.05, 1.0) * scale
    if kind == "int":
        return f"{int(x):,}"
    if kind == "int_space":
        return f"{int(x):,}".replace(",", " ")
    if kind == "dec":
        return f"{x / scale * 100:.1f}"
    if kind == "dec_comma":
        return f"{x / scale * 100:.1f}".replace(".", ",")
    if kind == "pct":
        return f"{x / scale * 60:.1f}%"
    if kind == "change":
        v = rng.uniform(-9, 12)
        sign = MINUS if rng.random() < 0.5 else "-"
        return f"{sign}{abs(v):.1f}" if v < 0 else f"{v:.1f}"
    raise ValueError(kind)


def _none_sign(rng: random.Random) -> str:
    return rng.choice(["–", "..", "(X)", ":", "n/a", "-"])


def make_spec(rng: random.Random, number: int, engine: str) -> Spec:
    theme = rng.choice(THEMES)
    style = rng.choice(STYLES)
    kinds: list[str] = [style]
    # Columns.
    years = list(range(2010 + rng.randrange(8), 2024))
    scheme = rng.choice(["years", "years", "parents", "parents", "long", "three"])
    value_kind = rng.choice(["int", "int", "dec", "int_space", "pct", "dec_comma"])
    header: list[HCell] = []
    stub = rng.choice(["", "Item", "Category", theme["title"].split(" by ")[-1].capitalize()])
    vertical = engine in ("docx", "html", "xlsx") and rng.random() < 0.12
    if scheme == "years":
        cols = [str(y) for y in rng.sample(years, min(len(years), rng.randint(3, 7)))]
        cols.sort()
        header_rows = 1
        header.append(HCell(stub, 0, 0))
        for c, text in enumerate(cols, 1):
            header.append(HCell(text, 0, c, vertical=vertical))
        n_cols = len(cols) + 1
    elif scheme == "long":
        cols = rng.sample(LONG_HEADERS, rng.randint(3, 5))
        header_rows = 1
        header.append(HCell(stub, 0, 0))
        for c, text in enumerate(cols, 1):
            header.append(HCell(text, 0, c, vertical=vertical))
        n_cols = len(cols) + 1
        kinds.append("two_line_headers")
    elif scheme == "parents":
        parents = rng.choice(PARENTS)
        children = [str(y) for y in sorted(rng.sample(years, rng.randint(2, 3)))]
        header_rows = 2
        if rng.random() < 0.6:
            header.append(HCell(stub, 0, 0, rowspan=2))
        else:  # the stub's label in the lower header row, an empty cell above it
            header += [HCell("", 0, 0), HCell(stub, 1, 0)]
        c = 1
        for parent in parents:
            header.append(HCell(parent, 0, c, colspan=len(children)))
            for k, child in enumerate(children):
                header.append(HCell(child, 1, c + k))
            c += len(children)
        n_cols = c
        kinds.append("nested_headers")
    else:  # three levels
        top = rng.choice(["Census", "Survey", "Registered"]) + f" {rng.choice(years)}"
        parents = rng.choice(PARENTS[:2])
        children = ["Number", "%"]
        header_rows = 3
        header.append(HCell(stub, 0, 0, rowspan=3))
        header.append(HCell(top, 0, 1, colspan=len(parents) * 2))
        c = 1
        for parent in parents:
            header.append(HCell(parent, 1, c, colspan=2))
            for k, child in enumerate(children):
                header.append(HCell(child, 2, c + k))
            c += 2
        n_cols = c
        kinds.append("nested_headers")
    if any(h.vertical for h in header):
        kinds.append("vertical_header")
    # A sparse column: a value in a few rows only.
    sparse = n_cols <= 7 and rng.random() < 0.2
    if sparse:
        header.append(
            HCell(rng.choice(["Revised", "Change", "Note"]), 0, n_cols, rowspan=header_rows)
        )
        n_cols += 1
        kinds.append("sparse_column")
    rtl = "arabic" in theme and rng.random() < 0.7
    if rtl:
        header.append(HCell("البلدية", 0, n_cols, rowspan=header_rows))
        n_cols += 1
        kinds.append("rtl")
    n_values = n_cols - 1 - int(rtl)

    def values(row_scale: float, missing: float = 0.04) -> list[str]:
        out = []
        for c in range(n_values):
            if sparse and c == n_values - 1:
                out.append(_value(rng, 20, "dec") if rng.random() < 0.2 else "")
            elif rng.random() < missing:
                out.append(_none_sign(rng))
            else:
                out.append(_value(rng, row_scale, value_kind))
        return out

    def arabic(label: str) -> list[str]:
        return [theme["arabic"].get(label, "")] if rtl else []

    # Rows.
    body: list[BodyRow] = []
    structure = rng.choice(["flat", "indented", "groups", "sections", "headings"])
    markers = rng.random() < 0.3
    scale = theme["scale"]
    if markers:
        kinds.append("footnote_markers")
    marker_pool = iter(["1", "2", "3", "a", "b"] if rng.random() < 0.7 else ["¹", "²", "³"])

    def marker() -> str:
        if markers and rng.random() < 0.25:
            return next(marker_pool, "")
        return ""

    def add_rows(level_base: int, gap_first: bool) -> None:
        first = True
        for label, children in theme["rows"]:
            if structure == "flat" or not children:
                body.append(
                    BodyRow(
                        [label, *values(scale), *arabic(label)],
                        level=level_base,
                        marker=marker(),
                        gap=first and gap_first,
                    )
                )
            elif structure == "groups":
                body.append(
                    BodyRow(
                        [label] + [""] * (n_cols - 1),
                        kind="group",
                        level=level_base,
                        gap=first and gap_first,
                    )
                )
                for child in children:
                    body.append(
                        BodyRow(
                            [child, *values(scale / 3), *arabic(child)],
                            level=level_base + 1,
                            marker=marker(),
                        )
                    )
            else:
                body.append(
                    BodyRow(
                        [label, *values(scale), *arabic(label)],
                        level=level_base,
                        marker=marker(),
                        gap=first and gap_first,
                    )
                )
                for child in children:
                    body.append(
                        BodyRow(
                            [child, *values(scale / 3), *arabic(child)],
                            level=level_base + 1,
                            marker=marker(),
                        )
                    )
            first = False

    if structure == "sections":
        for k, section in enumerate(rng.choice(SECTIONS)):
            body.append(BodyRow([section] + [""] * (n_cols - 1), kind="group", gap=k > 0))
            add_rows(1, False)
        kinds.append("stacked_sections")
    elif structure == "headings":
        for k, section in enumerate(rng.choice(SECTIONS)):
            body.append(BodyRow([f"{section}"] + [""] * (n_cols - 1), kind="heading", gap=k > 0))
            add_rows(0, False)
        kinds.append("section_headings")
    else:
        add_rows(0, False)
        if structure == "groups":
            kinds.append("label_only_rows")
        if structure == "indented":
            kinds.append("indented_rows")
    # Keep tables to a page: at most 26 body rows.
    if len(body) > 26:
        body = body[:26]
        while body and body[-1].kind in ("group", "heading"):
            body.pop()
    total = rng.random() < 0.6
    framed_total = (
        total and style in ("grid", "horizontal", "booktabs", "borderless") and rng.random() < 0.35
    )
    if total:
        body.append(BodyRow(["Total", *values(scale * 4, 0.0), *arabic("Total")], kind="total"))
        if framed_total:
            kinds.append("framed_total")
    if any(len(r.cells[0]) > 34 for r in body) or rng.random() < 0.3:
        kinds.append("wrapped_labels")
    label_outside = (
        style in ("grid", "frame")
        and structure in ("flat", "indented")
        and rng.random() < 0.35
        and not rtl
    )
    if label_outside:
        kinds.append("label_outside_frame")
    title_no = f"{rng.randint(1, 12)}.{number % 17 + 1}"
    return Spec(
        header=header,
        header_rows=header_rows,
        body=body,
        n_cols=n_cols,
        style=style,
        title=f"Table {title_no} {theme['title']}"
        + (f", {years[0]}–{years[-1]}" if rng.random() < 0.5 else ""),
        units=f"({theme['units']})" if rng.random() < 0.6 else "",
        notes=[
            *(f"{m} {rng.choice(FOOTNOTES)}" for m in ("1", "2") if markers and rng.random() < 0.7),
            *([rng.choice(NOTES)] if rng.random() < 0.5 else []),
            *([rng.choice(SOURCES)] if rng.random() < 0.8 else []),
        ],
        rtl_col=n_cols - 1 if rtl else None,
        label_outside=label_outside,
        framed_total=framed_total,
        width=rng.choice([1.0, 1.0, 0.85, 0.7]),
        narrow_stub="wrapped_labels" in kinds,
        kinds=kinds,
    )


def prose(rng: random.Random, sentences: int) -> str:
    thing = rng.choice(
        [
            "employment",
            "the population",
            "expenditure",
            "enrolment",
            "exports",
            "hospital discharges",
            "offenses",
        ]
    )
    return " ".join(
        rng.choice(PROSE).format(
            thing=thing,
            p=f"{rng.uniform(0.5, 9):.1f}",
            y=rng.randint(2012, 2023),
            t=rng.randint(1, 9),
        )
        for _ in range(sentences)
    ).replace(thing, thing, 1)


@dataclass
class Document:
    """A document's blocks in order: prose paragraphs (str) and tables (Spec)."""

    name: str
    engine: str
    blocks: list
    landscape: bool
    font: str
    size: float
    margin: float  # inches
    running_head: str
    break_before: set[int] = field(default_factory=set)  # tables started on a new page

    @property
    def tables(self) -> list[Spec]:
        return [b for b in self.blocks if isinstance(b, Spec)]


def make_document(rng: random.Random, name: str, engine: str) -> Document:
    blocks: list = []
    count = rng.choice([1, 1, 2, 2, 3])
    if rng.random() < 0.7:
        blocks.append(prose(rng, rng.randint(2, 6)))
    for k in range(count):
        blocks.append(make_spec(rng, k + 1, engine))
        if rng.random() < 0.75:
            blocks.append(prose(rng, rng.randint(1, 5)))
    fonts = FONTS_HTML if engine in ("html", "odt-html") else FONTS_DOCX
    return Document(
        name=name,
        engine=engine,
        blocks=blocks,
        landscape=rng.random() < 0.25,
        font=rng.choice(fonts),
        size=rng.choice([8, 9, 9, 10, 10, 11]),
        margin=rng.choice([0.6, 0.75, 1.0, 1.25]),
        running_head=rng.choice(
            ["", "Statistical Yearbook 2023", "Labour market bulletin — Chapter 4", "Annual report"]
        ),
    )


# --- Rendering ---------------------------------------------------------------------------------


def mark_colour(k: int) -> tuple[int, int, int]:
    """The shade marking table k's cells in the marked rendering."""
    return (20 + 9 * k, 230, 120)


def _hex(rgb: tuple[int, int, int]) -> str:
    return "".join(f"{v:02X}" for v in rgb)


def _border_sides(spec: Spec, r: int, c: int, rowspan: int, colspan: int) -> dict[str, float]:
    """The rules around a cell (in points) for the table's style; r is the grid row."""
    last_row = spec.header_rows + len(spec.body) - 1
    h = spec.header_rows
    bottom_row = r + rowspan - 1
    sides: dict[str, float] = {}
    style = spec.style
    outside = spec.label_outside and c == 0 and r >= h
    if style == "grid" and not outside:
        sides = {"top": 0.5, "bottom": 0.5, "left": 0.5, "right": 0.5}
    elif style == "frame" and not outside:
        if r == 0:
            sides["top"] = 1.0
        if bottom_row == last_row:
            sides["bottom"] = 1.0
        if c == (1 if spec.label_outside else 0):
            sides["left"] = 1.0
        if c + colspan == spec.n_cols:
            sides["right"] = 1.0
        if bottom_row == h - 1:
            sides["bottom"] = 0.5
    elif style == "booktabs":
        if r == 0:
            sides["top"] = 1.0
        if bottom_row == h - 1:
            sides["bottom"] = 0.5
        if bottom_row == last_row:
            sides["bottom"] = 1.0
        if r < h and bottom_row < h - 1 and colspan > 1:
            sides["bottom"] = 0.4  # a rule under a spanning header
    elif style == "horizontal":
        sides = {"top": 0.4, "bottom": 0.4}
    elif style == "header_ruled" or style == "header_band" or style == "zebra":
        if r == 0:
            sides["top"] = 0.75
        if bottom_row == h - 1:
            sides["bottom"] = 0.75
        if style == "header_ruled" and bottom_row == last_row:
            sides["bottom"] = 0.75
    if spec.framed_total and r == last_row:
        sides = {"top": 1.0, "bottom": 1.0, "left": 1.0, "right": 1.0}
    if spec.framed_total and r == last_row - 1:
        sides.pop("bottom", None)
    return sides


def _cells_in_rows(spec: Spec):
    """Every rendered cell: (grid row, col, rowspan, colspan, text, marker, info) in row order,
    info a dict (header, vertical, kind, level, rtl)."""
    out = []
    for h in sorted(spec.header, key=lambda h: (h.row, h.col)):
        out.append(
            (
                h.row,
                h.col,
                h.rowspan,
                h.colspan,
                h.text,
                "",
                {"header": True, "vertical": h.vertical},
            )
        )
    for k, row in enumerate(spec.body):
        r = spec.header_rows + k
        info = {"header": False, "kind": row.kind, "level": row.level, "gap": row.gap}
        if row.kind == "heading":
            out.append((r, 0, 1, spec.n_cols, row.cells[0], "", info))
            continue
        for c, text in enumerate(row.cells):
            out.append(
                (r, c, 1, 1, text, row.marker if c == 0 else "", dict(info, rtl=c == spec.rtl_col))
            )
    return out


# --- docx (Word) through LibreOffice Writer ----------------------------------------------------


def write_docx(doc: Document, path: Path, marked: bool) -> None:
    from docx import Document as Docx
    from docx.enum.section import WD_ORIENT
    from docx.enum.table import WD_TABLE_ALIGNMENT
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Inches, Pt

    out = Docx()
    section = out.sections[0]
    if doc.landscape:
        section.orientation = WD_ORIENT.LANDSCAPE
        section.page_width, section.page_height = section.page_height, section.page_width
    for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        setattr(section, side, Inches(doc.margin))
    normal = out.styles["Normal"]
    normal.font.name = doc.font
    normal.font.size = Pt(doc.size)
    normal.element.rPr.rFonts.set(qn("w:eastAsia"), doc.font)
    normal.paragraph_format.space_after = Pt(4)
    if doc.running_head:
        head = section.header.paragraphs[0]
        head.text = doc.running_head
        head.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    text_width = section.page_width - section.left_margin - section.right_margin

    def cell_props(cell, sides: dict[str, float], fill: str | None, vertical: bool):
        tc_pr = cell._tc.get_or_add_tcPr()
        borders = OxmlElement("w:tcBorders")
        for side in ("top", "left", "bottom", "right"):
            element = OxmlElement(f"w:{side}")
            if side in sides:
                element.set(qn("w:val"), "single")
                element.set(qn("w:sz"), str(max(2, int(sides[side] * 8))))
                element.set(qn("w:color"), "000000")
            else:
                element.set(qn("w:val"), "nil")
            borders.append(element)
        tc_pr.append(borders)
        if fill:
            shade = OxmlElement("w:shd")
            shade.set(qn("w:val"), "clear")
            shade.set(qn("w:color"), "auto")
            shade.set(qn("w:fill"), fill)
            tc_pr.append(shade)
        if vertical:
            direction = OxmlElement("w:textDirection")
            direction.set(qn("w:val"), "btLr")
            tc_pr.append(direction)

    table_no = 0
    for block in doc.blocks:
        if isinstance(block, str):
            out.add_paragraph(block)
            continue
        spec: Spec = block
        caption = out.add_paragraph()
        caption.paragraph_format.keep_with_next = True
        caption.paragraph_format.page_break_before = table_no in doc.break_before
        run = caption.add_run(spec.title)
        run.bold = True
        if spec.units:
            units = out.add_paragraph(spec.units)
            units.paragraph_format.keep_with_next = True
            units.paragraph_format.space_after = Pt(2)
        n_rows = spec.header_rows + len(spec.body)
        table = out.add_table(rows=n_rows, cols=spec.n_cols)
        table.alignment = WD_TABLE_ALIGNMENT.CENTER if spec.width < 1 else WD_TABLE_ALIGNMENT.LEFT
        table.autofit = False
        width = int(text_width * spec.width)
        em = Pt(doc.size)
        labels = [row.cells[0] for row in spec.body if row.kind != "heading"]
        word = max(len(w) for label in labels for w in label.split()) * 0.62 * em + 3.5 * em
        if spec.narrow_stub:
            stub = max(word, 10 * em)
        else:
            stub = max(word, min(0.45 * width, max(len(t) for t in labels) * 0.5 * em + 3 * em))
        stub = min(stub, 0.6 * width)
        # A value column is never narrower than its widest value or header word: a number
        # or a word broken inside is what nobody prints.
        need = [0.0] * spec.n_cols
        for row in spec.body:
            if row.kind != "heading":
                for c, text in enumerate(row.cells[1:], 1):
                    need[c] = max(need[c], len(text) * 0.62 * em + 1.2 * em)
        for h in spec.header:
            if h.colspan == 1 and h.col > 0 and not h.vertical:
                longest = max((len(w) for w in h.text.split()), default=0)
                need[h.col] = max(need[h.col], longest * 0.68 * em + 1.2 * em)
        rest = (width - stub) / max(1, spec.n_cols - 1)
        widths = [int(stub)] + [int(max(rest, need[c])) for c in range(1, spec.n_cols)]
        if sum(widths) > width:  # the stub gives way, down to its longest word
            widths[0] = int(max(word, width - sum(widths[1:])))
        for c, column in enumerate(table.columns):
            column.width = widths[c]  # the grid LibreOffice lays out
        for row in table.rows:
            for c, cell in enumerate(row.cells):
                cell.width = widths[c]
        for r, c, rowspan, colspan, text, marker, info in _cells_in_rows(spec):
            cell = table.cell(r, c)
            if rowspan > 1 or colspan > 1:
                cell = cell.merge(table.cell(r + rowspan - 1, c + colspan - 1))
            fill = None
            if marked:
                fill = _hex(mark_colour(table_no))
            elif spec.style == "header_band" and info["header"]:
                fill = "1F4E79"
            elif spec.style == "zebra" and not info["header"] and (r - spec.header_rows) % 2 == 1:
                fill = "E7EEF7"
            cell_props(
                cell, _border_sides(spec, r, c, rowspan, colspan), fill, info.get("vertical", False)
            )
            paragraph = cell.paragraphs[0]
            paragraph.paragraph_format.space_after = Pt(0)
            if info.get("gap"):
                paragraph.paragraph_format.space_before = Pt(doc.size * 1.2)
            if info["header"]:
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER if c else WD_ALIGN_PARAGRAPH.LEFT
            elif info.get("kind") == "heading":
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
            elif c > 0 and not info.get("rtl"):
                paragraph.alignment = WD_ALIGN_PARAGRAPH.RIGHT
            if info.get("rtl"):
                ppr = paragraph._p.get_or_add_pPr()
                ppr.append(OxmlElement("w:bidi"))
                paragraph.alignment = WD_ALIGN_PARAGRAPH.RIGHT
            if c == 0 and not info["header"]:
                paragraph.paragraph_format.left_indent = Pt(doc.size * 1.0 * info.get("level", 0))
            run = paragraph.add_run(text)
            run.bold = info["header"] or info.get("kind") in ("total", "group", "heading")
            if spec.style == "header_band" and info["header"] and not marked:
                from docx.shared import RGBColor

                run.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
            if info.get("rtl"):
                rpr = run._r.get_or_add_rPr()
                rpr.append(OxmlElement("w:rtl"))
            if marker:
                sup = paragraph.add_run(marker)
                sup.font.superscript = True
        for note in spec.notes:
            p = out.add_paragraph(note)
            p.paragraph_format.space_after = Pt(1)
            for run in p.runs:
                run.font.size = Pt(max(6, doc.size - 2))
        table_no += 1
    out.save(str(path))


# --- HTML, printed by chromium or converted by Writer -----------------------------------------


def write_html(doc: Document, marked: bool, engine: str, rng_seed: int) -> str:
    rng = random.Random(rng_seed)  # the same dress in both renderings
    size = doc.size
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><style>",
        f"body{{font-family:'{doc.font}';font-size:{size}pt;margin:0}}",
        "p{margin:0 0 6pt 0;text-align:justify}",
        "table{border-collapse:collapse;margin:4pt 0 4pt 0}",
        "td,th{padding:1.5pt 4pt;vertical-align:top}",
        ".cap{font-weight:bold;margin:10pt 0 2pt 0}.units{margin:0 0 2pt 0}",
        f".note{{font-size:{max(6, size - 2)}pt;margin:0}}",
        ".head{text-align:right;font-size:8pt;color:#444;margin-bottom:10pt}",
        "</style></head><body>",
    ]
    if doc.running_head:
        parts.append(f"<div class='head'>{escape(doc.running_head)}</div>")
    table_no = 0
    for block in doc.blocks:
        if isinstance(block, str):
            parts.append(f"<p>{escape(block)}</p>")
            continue
        spec: Spec = block
        brk = "break-before:page;" if table_no in doc.break_before else ""
        parts.append(f"<div style='{brk}break-inside:avoid'>")
        parts.append(f"<div class='cap'>{escape(spec.title)}</div>")
        if spec.units:
            parts.append(f"<div class='units'>{escape(spec.units)}</div>")
        svg_frame = engine == "html" and spec.style in ("frame", "booktabs") and rng.random() < 0.5
        rounded = (
            engine == "html" and spec.style == "frame" and not svg_frame and rng.random() < 0.5
        )
        width = f"width:{spec.width * 100:.0f}%;" if spec.width < 1 or rng.random() < 0.6 else ""
        centre = "margin-left:auto;margin-right:auto;" if spec.width < 1 else ""
        table_style = width + centre
        if rounded:
            table_style += (
                "border:1px solid #333;border-radius:6px;border-collapse:separate;border-spacing:0;"
            )
        wrap = "position:relative;display:inline-block;" if svg_frame else ""
        parts.append(f"<div style='{wrap}{'width:100%' if svg_frame else ''}'>")
        parts.append(f"<table style='{table_style}'>")
        current = -1
        for r, c, rowspan, colspan, text, marker, info in _cells_in_rows(spec):
            if r != current:
                if current >= 0:
                    parts.append("</tr>")
                parts.append("<tr>")
                current = r
            css = []
            if not (rounded or svg_frame):
                for side, pt in _border_sides(spec, r, c, rowspan, colspan).items():
                    css.append(f"border-{side}:{pt}pt solid #000")
            if marked:
                css.append(f"background:#{_hex(mark_colour(table_no))}")
            elif spec.style == "header_band" and info["header"]:
                css.append("background:#1F4E79;color:#fff")
            elif spec.style == "zebra" and not info["header"] and (r - spec.header_rows) % 2 == 1:
                css.append("background:#E7EEF7")
            if info["header"]:
                css.append("text-align:" + ("center" if c else "left"))
            elif info.get("kind") == "heading":
                css.append("text-align:center")
            elif c > 0 and not info.get("rtl"):
                css.append("text-align:right;white-space:nowrap")
            if c == 0 and not info["header"]:
                css.append(f"padding-left:{4 + size * info.get('level', 0)}pt")
                if spec.narrow_stub:
                    css.append(f"width:{8 + rng.randint(0, 4)}em")
            if info.get("gap"):
                css.append(f"padding-top:{size * 1.3:.1f}pt")
            if info["header"] or info.get("kind") in ("total", "group", "heading"):
                css.append("font-weight:bold")
            content = escape(text)
            if info.get("vertical") and text:
                turned = "writing-mode:vertical-rl;transform:rotate(180deg);margin:auto"
                content = f"<div style='{turned}'>{content}</div>"
            if marker:
                content += f"<sup>{escape(marker)}</sup>"
            tag = "th" if info["header"] else "td"
            span = (f" rowspan={rowspan}" if rowspan > 1 else "") + (
                f" colspan={colspan}" if colspan > 1 else ""
            )
            direction = " dir='rtl'" if info.get("rtl") else ""
            parts.append(f"<{tag}{span}{direction} style='{';'.join(css)}'>{content}</{tag}>")
        parts.append("</tr></table>")
        if svg_frame:
            parts.append(
                "<svg data-frame='1' style='position:absolute;left:0;top:0;overflow:visible' "
                "width='1' height='1'></svg>"
            )
        parts.append("</div>")
        for note in spec.notes:
            parts.append(f"<p class='note'>{escape(note)}</p>")
        parts.append("</div>")
        table_no += 1
    # A frame drawn as one path (outline and the header's rule), placed after layout.
    parts.append(
        """<script>
for (const svg of document.querySelectorAll('svg[data-frame]')) {
  const table = svg.previousElementSibling;
  const w = table.offsetWidth, h = table.offsetHeight;
  let hy = 0;
  for (const tr of table.querySelectorAll('tr')) {
    if (tr.querySelector('th')) hy = tr.offsetTop + tr.offsetHeight;
  }
  svg.setAttribute('width', w); svg.setAttribute('height', h);
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', `M0.5 0.5 H${w - 0.5} V${h - 0.5} H0.5 Z M0.5 ${hy} H${w - 0.5}`);
  path.setAttribute('stroke', '#000'); path.setAttribute('fill', 'none');
  path.setAttribute('stroke-width', '0.8');
  svg.appendChild(path);
}
</script></body></html>"""
    )
    return "\n".join(parts)


def print_html(html: str, path: Path, doc: Document, browser) -> None:
    page = browser.new_page()
    try:
        page.set_content(html)
        size = "A4" if hash(doc.name) % 2 else "Letter"
        margin = f"{doc.margin}in"
        page.pdf(
            path=str(path),
            format=size,
            landscape=doc.landscape,
            print_background=True,
            margin={"top": margin, "bottom": margin, "left": margin, "right": margin},
            display_header_footer=bool(doc.running_head),
            header_template="<span></span>",
            footer_template="<div style='font-size:7pt;width:100%;text-align:center'>"
            "<span class='pageNumber'></span></div>",
        )
    finally:
        page.close()


# --- xlsx through LibreOffice Calc -------------------------------------------------------------


def write_xlsx(doc: Document, path: Path, marked: bool) -> None:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
    from openpyxl.utils import get_column_letter

    book = Workbook()
    sheet = book.active
    sheet.title = "Tables"
    font = (
        doc.font
        if doc.font in ("Liberation Sans", "Carlito", "DejaVu Sans", "Liberation Serif")
        else "Liberation Sans"
    )
    row = 1
    widths: dict[int, float] = {}
    for table_no, spec in enumerate(doc.tables):
        if table_no in doc.break_before and row > 1:
            from openpyxl.worksheet.pagebreak import Break

            sheet.row_breaks.append(Break(id=row - 1))
        sheet.cell(row, 1, spec.title).font = Font(name=font, bold=True, size=doc.size + 1)
        row += 1
        if spec.units:
            sheet.cell(row, 1, spec.units).font = Font(name=font, italic=True, size=doc.size)
            row += 1
        row += 1
        start = row
        for r, c, rowspan, colspan, text, marker, info in _cells_in_rows(spec):
            cell = sheet.cell(start + r, c + 1)
            value: object = text + (f" {marker}" if marker else "")
            cell.value = value
            cell.number_format = "@"
            cell.font = Font(
                name=font,
                size=doc.size,
                bold=info["header"] or info.get("kind") in ("total", "group", "heading"),
            )
            horizontal = "left"
            if info["header"]:
                horizontal = "center" if c else "left"
            elif info.get("kind") == "heading":
                horizontal = "center"
            elif c > 0:
                horizontal = "right"
            cell.alignment = Alignment(
                horizontal=horizontal,
                vertical="top" if not info["header"] else "center",
                wrap_text=info["header"],
                indent=info.get("level", 0) * 2 if c == 0 and not info["header"] else 0,
                text_rotation=90 if info.get("vertical") else 0,
            )
            sides = _border_sides(spec, r, c, rowspan, colspan)
            cell.border = Border(
                **{s: Side(style="thin" if w <= 0.6 else "medium") for s, w in sides.items()}
            )
            if marked:
                cell.fill = PatternFill("solid", fgColor=_hex(mark_colour(table_no)))
            elif spec.style == "header_band" and info["header"]:
                cell.fill = PatternFill("solid", fgColor="1F4E79")
                cell.font = Font(name=font, size=doc.size, bold=True, color="FFFFFF")
            elif spec.style == "zebra" and not info["header"] and (r - spec.header_rows) % 2 == 1:
                cell.fill = PatternFill("solid", fgColor="E7EEF7")
            if rowspan > 1 or colspan > 1:
                sheet.merge_cells(
                    start_row=start + r,
                    start_column=c + 1,
                    end_row=start + r + rowspan - 1,
                    end_column=c + colspan,
                )
            if marked and (rowspan > 1 or colspan > 1):
                for rr in range(rowspan):
                    for cc in range(colspan):
                        sheet.cell(start + r + rr, c + 1 + cc).fill = PatternFill(
                            "solid", fgColor=_hex(mark_colour(table_no))
                        )
            size = len(text) * 1.1 + 2 + info.get("level", 0) * 2
            if info["header"] or info.get("kind") == "heading":
                longest = max((len(w) for w in text.split()), default=0)
                size = longest * 1.25 + 2 if c and colspan == 1 and not info.get("vertical") else 6
                size = size if c else len(text) * 1.1 + 2
            widths[c] = max(widths.get(c, 0), min(size, 60 if c == 0 else 14))
        # Header rows as tall as their wrapped labels (Calc keeps a row's stored height).
        for r in range(spec.header_rows):
            lines = 1
            for h in spec.header:
                if h.row + h.rowspan - 1 != r:
                    continue
                span = sum(widths.get(h.col + k, 8) for k in range(h.colspan))
                need = len(h.text) if h.vertical else -(-len(h.text) * 1.15 // max(span, 1))
                lines = max(lines, int(need * (0.55 if h.vertical else 1)) // h.rowspan + 1)
            sheet.row_dimensions[start + r].height = lines * (doc.size + 3)
        row = start + spec.header_rows + len(spec.body) + 1
        for note in spec.notes:
            sheet.cell(row, 1, note).font = Font(name=font, size=max(6, doc.size - 2))
            row += 1
        row += 2
    for c, width in widths.items():
        sheet.column_dimensions[get_column_letter(c + 1)].width = width
    sheet.page_setup.orientation = "landscape" if doc.landscape else "portrait"
    sheet.page_setup.paperSize = sheet.PAPERSIZE_A4
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0
    if doc.running_head:
        sheet.oddHeader.right.text = doc.running_head
    book.save(str(path))


# --- Converting, marking, checking ------------------------------------------------------------


def soffice_batch(sources: list[Path], folder: Path) -> None:
    """Every source converted to PDF in ``folder`` by one LibreOffice run (its own profile)."""
    if not sources:
        return
    command = [
        shutil.which("soffice") or "soffice",
        f"-env:UserInstallation=file://{folder / 'profile'}",
        "--headless",
        "--convert-to",
        "pdf",
        "--outdir",
        str(folder),
        *(str(s) for s in sources),
    ]
    try:
        subprocess.run(  # noqa: S603 - Debian's LibreOffice on our own files
            command, check=True, capture_output=True, timeout=SOFFICE_SECONDS + 20 * len(sources)
        )
    except subprocess.TimeoutExpired as error:
        raise SystemExit(f"LibreOffice did not finish in {error.timeout:.0f} s") from None
    except subprocess.CalledProcessError as error:
        said = error.stderr.decode("utf-8", "replace").strip()[-500:]
        raise SystemExit(f"LibreOffice failed (exit {error.returncode}): {said}") from None


def missing_tools() -> list[str]:
    """What the set needs and this machine lacks, each with how to install it."""
    from tests.chromium import CHROMIUM

    missing = []
    if shutil.which("soffice") is None:
        missing.append(
            "LibreOffice: apt-get install libreoffice-writer-nogui libreoffice-calc-nogui"
        )
    if not Path(CHROMIUM).is_file():
        missing.append(f"chromium at {CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)")
    for module, package in (("docx", "python-docx"), ("openpyxl", "openpyxl")):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{package}: pip install -r requirements-dev.txt")
    return missing


def write_sources(doc: Document, folder: Path, browser, seed: int) -> list[Path]:
    """The document as it is and marked: printed at once by chromium, or written as the files
    LibreOffice converts (returned)."""
    sources = []
    for marked in (False, True):
        stem = folder / (doc.name + ("-marked" if marked else ""))
        for stale in (stem.with_suffix(".pdf"),):
            stale.unlink(missing_ok=True)
        if doc.engine == "docx":
            write_docx(doc, stem.with_suffix(".docx"), marked)
            sources.append(stem.with_suffix(".docx"))
        elif doc.engine == "xlsx":
            write_xlsx(doc, stem.with_suffix(".xlsx"), marked)
            sources.append(stem.with_suffix(".xlsx"))
        elif doc.engine == "odt-html":
            stem.with_suffix(".html").write_text(write_html(doc, marked, doc.engine, seed), "utf-8")
            sources.append(stem.with_suffix(".html"))
        else:
            print_html(
                write_html(doc, marked, doc.engine, seed), stem.with_suffix(".pdf"), doc, browser
            )
    return sources


def _close(a: tuple, b: tuple[int, int, int]) -> bool:
    if not a or len(a) != 3:
        return False
    return all(abs(float(x) - y / 255) <= 0.006 for x, y in zip(a, b, strict=True))


def marked_regions(marked_pdf: Path, count: int) -> list[dict[int, list[float]]]:
    """For each table, its shaded box on each page it appears on."""
    import pdfplumber

    found: list[dict[int, list[float]]] = [{} for _ in range(count)]
    with pdfplumber.open(marked_pdf) as pdf:
        for number, page in enumerate(pdf.pages, 1):
            shapes = page.rects + page.curves
            for shape in shapes:
                if not shape.get("fill"):
                    continue
                colour = shape.get("non_stroking_color")
                colour = tuple(colour) if isinstance(colour, (list, tuple)) else ()
                for k in range(count):
                    if _close(colour, mark_colour(k)):
                        box = found[k].setdefault(number, [1e9, 1e9, -1e9, -1e9])
                        box[0] = min(box[0], shape["x0"])
                        box[1] = min(box[1], shape["top"])
                        box[2] = max(box[2], shape["x1"])
                        box[3] = max(box[3], shape["bottom"])
    return found


def _letters(text: str) -> Counter:
    return Counter(c for c in unicodedata.normalize("NFKC", text) if not c.isspace())


def true_regions(
    pdf: Path, doc: Document, shaded: list[dict[int, list[float]]]
) -> list[tuple[int, list[float]]] | str:
    """Each table's page and region (the box of its words inside its shaded box), or why the
    document cannot serve (its words are not exactly its cells' text)."""
    import pdfplumber

    out = []
    with pdfplumber.open(pdf) as document:
        for k, (spec, pages) in enumerate(zip(doc.tables, shaded, strict=True)):
            if len(pages) != 1:
                return f"table {k + 1} on {len(pages)} pages"
            ((number, box),) = pages.items()
            page = document.pages[number - 1]
            chars = [
                ch
                for ch in page.chars
                if box[0] <= (ch["x0"] + ch["x1"]) / 2 <= box[2]
                and box[1] <= (ch["top"] + ch["bottom"]) / 2 <= box[3]
                and ch["text"].strip()
            ]
            want = _letters("".join(c[4] for c in spec.truth()))
            have = _letters("".join(ch["text"] for ch in chars))
            if want != have:
                missing = "".join((want - have).elements())[:30]
                extra = "".join((have - want).elements())[:30]
                return f"table {k + 1}: text differs (missing {missing!r}, extra {extra!r})"
            # No word or number broken inside (a column too narrow for it).
            printed = [
                w["text"]
                for w in page.crop(box, strict=False).extract_words(keep_blank_chars=False)
            ]
            turned = {h.text for h in spec.header if h.vertical}
            for *_cell, text in spec.truth():
                if text in turned:
                    continue
                for token in text.split():
                    rtl = any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in token)
                    if len(token) >= 2 and not rtl and not any(token in w for w in printed):
                        return f"table {k + 1}: {token!r} broken inside"
            region = [
                min(ch["x0"] for ch in chars) - 1,
                min(ch["top"] for ch in chars) - 1,
                max(ch["x1"] for ch in chars) + 1,
                max(ch["bottom"] for ch in chars) + 1,
            ]
            out.append((number, region))
    return out


def write_truth(
    doc: Document, pdf: Path, regions: list[tuple[int, list[float]]], folder: Path
) -> None:
    import pdfplumber

    with pdfplumber.open(pdf) as document:
        heights = [float(p.height) for p in document.pages]
    reg = ['<?xml version="1.0" encoding="UTF-8"?>', f'<document filename="{doc.name}-reg.xml">']
    stru = ['<?xml version="1.0" encoding="UTF-8"?>', f'<document filename="{doc.name}-str.xml">']
    for k, (spec, (page, box)) in enumerate(zip(doc.tables, regions, strict=True), 1):
        h = heights[page - 1]
        x1, y1, x2, y2 = box[0], h - box[3], box[2], h - box[1]
        bbox = f'<bounding-box x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}"/>'
        reg.append(f'<table id="{k}"><region id="1" page="{page}">{bbox}</region></table>')
        stru.append(
            f'<table id="{k}"><region id="1" page="{page}" col-increment="0" row-increment="0">'
        )
        for r, c, rowspan, colspan, text in spec.truth():
            stru.append(
                f'<cell start-row="{r}" start-col="{c}" end-row="{r + rowspan - 1}" '
                f'end-col="{c + colspan - 1}"><content>{escape(text)}</content></cell>'
            )
        stru.append("</region></table>")
    reg.append("</document>")
    stru.append("</document>")
    (folder / f"{doc.name}-reg.xml").write_text("\n".join(reg), encoding="utf-8")
    (folder / f"{doc.name}-str.xml").write_text("\n".join(stru), encoding="utf-8")


ENGINES = ("docx", "docx", "html", "html", "xlsx", "odt-html")


def check(doc: Document, scratch: Path) -> list[tuple[int, list[float]]] | list[int] | str:
    """Each table's page and region; or the tables that ran over two pages (to start them on
    a new page); or why the document cannot serve."""
    plain, marked = scratch / f"{doc.name}.pdf", scratch / f"{doc.name}-marked.pdf"
    if not plain.is_file() or not marked.is_file():
        return "not converted"
    shaded = marked_regions(marked, len(doc.tables))
    split = [k for k, pages in enumerate(shaded) if len(pages) > 1]
    if split:
        return split if not set(split) <= doc.break_before else "a table runs over two pages"
    if any(not pages for pages in shaded):
        return "a table's shading was not found"
    return true_regions(plain, doc, shaded)


def write_document(doc: Document, name: str, scratch: Path, out: Path, regions) -> None:  # type: ignore[no-untyped-def]
    """The PDF, its truth as competition files, and what each table is (``NAME.json``)."""
    import json

    pdf = out / f"{name}.pdf"
    shutil.copy(scratch / f"{doc.name}.pdf", pdf)
    doc.name = name
    write_truth(doc, pdf, regions, out)
    (out / f"{name}.json").write_text(
        json.dumps(
            {
                "engine": doc.engine,
                "font": doc.font,
                "size": doc.size,
                "landscape": doc.landscape,
                "tables": [{"style": t.style, "kinds": t.kinds} for t in doc.tables],
            },
            indent=1,
        ),
        encoding="utf-8",
    )


def make_half(
    half: str, prefix: str, count: int, seed: int, out: Path, scratch: Path, browser
) -> Counter:  # type: ignore[no-untyped-def]
    """``count`` documents that serve, made in batches (one LibreOffice run a batch)."""
    kinds: Counter = Counter()
    made = tries = 0
    while made < count:
        batch = []
        for _ in range(count - made):
            doc_seed = seed + tries
            engine = ENGINES[tries % len(ENGINES)]
            batch.append((make_document(random.Random(doc_seed), f"t{doc_seed}", engine), doc_seed))
            tries += 1
        for _round in range(3):
            sources = [
                s for doc, doc_seed in batch for s in write_sources(doc, scratch, browser, doc_seed)
            ]
            soffice_batch(sources, scratch)
            again = []
            for doc, doc_seed in batch:
                result = check(doc, scratch)
                if isinstance(result, list) and result and isinstance(result[0], int):
                    doc.break_before |= set(result)  # type: ignore[arg-type]
                    again.append((doc, doc_seed))
                elif isinstance(result, str):
                    print(f"  seed {doc_seed} ({doc.engine}) does not serve: {result}", flush=True)
                elif made < count:
                    made += 1
                    name = f"{prefix}-{made:03d}"
                    write_document(doc, name, scratch, out, result)
                    kinds.update(k for t in doc.tables for k in t.kinds)
                    print(f"{half}/{name}: {doc.engine}, {len(doc.tables)} tables", flush=True)
            batch = again
            if not batch:
                break
        if tries > 4 * count + 8:
            raise SystemExit("too many documents could not serve")
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "var" / "generality")
    parser.add_argument("--documents", type=int, default=36, help="documents in each half")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    # Checked before anything is written: a set is never left half made for want of a tool.
    missing = missing_tools()
    if missing:
        raise SystemExit("The generality set needs:\n  " + "\n  ".join(missing))
    from playwright.sync_api import sync_playwright

    from tests.chromium import launch_chromium

    with tempfile.TemporaryDirectory(prefix="generality-") as tmp, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for h, half in enumerate(HALVES):
            # Made beside the old set and put in its place only when whole.
            folder = args.out / f".{half}.partial"
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            (folder / GENERATED).write_text(
                f"Our own renderings (benchmarks/generality_set.py, seed {args.seed}, {half}): "
                "a generality check of the extraction rules. They do NOT stand for real "
                "documents.\n",
                encoding="utf-8",
            )
            scratch = Path(tmp) / half
            scratch.mkdir()
            # The halves never share a seed: each is drawn apart from the other.
            kinds = make_half(
                half,
                f"gen{half[0]}",
                args.documents,
                args.seed * 1000 + h * 100_000,
                folder,
                scratch,
                browser,
            )
            total = sum(1 for _ in folder.glob("*-str.xml"))
            tables = sum(
                1
                for f in folder.glob("*-str.xml")
                for line in f.open()
                if line.startswith("<table")
            )
            print(
                f"{half}: {total} documents, {tables} tables; kinds: "
                + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())),
                flush=True,
            )
            whole = args.out / half
            if whole.exists():
                shutil.rmtree(whole)
            folder.rename(whole)
        browser.close()


if __name__ == "__main__":
    main()
