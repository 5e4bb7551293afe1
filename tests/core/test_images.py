from __future__ import annotations

import hashlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from hctqa.core.images import (
    BACKGROUND,
    FILLS,
    GRID_COLOR,
    TableLayout,
    render_table_png,
    table_layout,
)
from hctqa.core.tables import parse_table

NESTED = (
    "Sector,Job,2019,__,Total\n"
    "__,__,Male,Female,__\n"
    "Public,Clerk,1,2,3\n"
    "__,Manager,4,5,9\n"
    "Private,Clerk,6,7,13\n"
)
LONG = (
    "Item,Value\n"
    '"Electricity, gas, steam and air conditioning supply; water supply, sewerage, waste '
    'management and remediation activities",1\n'
    "Pneumonoultramicroscopicsilicovolcanoconiosis-and-even-longer-unbroken-word-here,2\n"
    '"Two\nlines",3\n'
)
# Real tables with nested column headers (2 to 6 header rows), two with row parents.
REAL = ("psa--4--1", "census--5--1666", "psa--3--704", "arxiv--2--3258", "psa--1--354")


def decode(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


def inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    """``inner`` lies strictly within ``outer``'s grid lines."""
    return (
        outer[0] < inner[0] and outer[1] < inner[1] and inner[2] < outer[2] and inner[3] < outer[3]
    )


def check_text_fits(layout: TableLayout, image: Image.Image) -> None:
    """Every text box inside its cell, and no ink anywhere in a cell outside its text box."""
    assert image.size == (layout.width, layout.height)
    blanked = image.copy()
    draw = ImageDraw.Draw(blanked)
    for placed in layout.cells:
        if placed.text_box is not None:
            assert inside(placed.text_box, placed.box), placed
            draw.rectangle(placed.text_box, fill=FILLS[placed.cell.role])
    for placed in layout.cells:
        x0, y0, x1, y1 = placed.box
        colours = blanked.crop((x0 + 1, y0 + 1, x1, y1)).getcolors(maxcolors=4)
        assert colours == [(colours[0][0], FILLS[placed.cell.role])], placed


@pytest.fixture(scope="module")
def real_csvs(release_by_id: dict) -> dict[str, str]:
    return {table_id: release_by_id[table_id].canonical_csv for table_id in REAL}


@pytest.mark.parametrize("csv_text", [NESTED, LONG], ids=["nested", "long-text"])
def test_every_cells_text_fits_its_box(csv_text: str) -> None:
    layout = table_layout(parse_table(csv_text))
    check_text_fits(layout, decode(render_table_png(csv_text)))


def test_every_cells_text_fits_its_box_on_real_nested_tables(real_csvs: dict) -> None:
    for table_id, csv_text in real_csvs.items():
        table = parse_table(csv_text)
        assert table.header_rows >= 2, table_id
        layout = table_layout(table)
        check_text_fits(layout, decode(render_table_png(csv_text)))
        assert layout.font_size >= 11, table_id


def test_long_text_wraps_instead_of_widening_the_column() -> None:
    layout = table_layout(parse_table(LONG))
    lines = {p.cell.text: p.lines for p in layout.cells}
    assert len(lines[next(t for t in lines if t.startswith("Electricity"))]) >= 3
    assert len(lines[next(t for t in lines if t.startswith("Pneumono"))]) >= 2
    assert lines["Two\nlines"] == ("Two", "lines")
    assert layout.width < 400


def _pixels(image: Image.Image, points: list[tuple[int, int]]) -> set[tuple[int, int, int]]:
    return {image.getpixel(p) for p in points}


def test_merged_cells_have_no_inner_grid_lines() -> None:
    layout = table_layout(parse_table(NESTED))
    image = decode(render_table_png(NESTED))
    cells = {(p.cell.row, p.cell.col): p for p in layout.cells}
    # "2019" spans columns 2-3: no vertical line between them inside it, but one below it.
    year = cells[(0, 2)]
    x = layout.column_x[3]
    y0, y1 = year.box[1] + 1, year.text_box[1]  # the padding above the text
    assert y1 - y0 >= 3
    assert _pixels(image, [(x, y) for y in range(y0, y1)]) == {FILLS["column_header"]}
    male = cells[(1, 2)]
    below = [(x, y) for y in range(male.box[1] + 1, male.text_box[1])]
    assert _pixels(image, below) == {GRID_COLOR}
    # "Public" spans rows 2-3: no horizontal line between them inside it, one beside it.
    public = cells[(2, 0)]
    y = layout.row_y[3]
    x0, x1 = public.box[0] + 1, public.text_box[0]  # the padding left of the text
    assert x1 - x0 >= 3
    assert _pixels(image, [(x, y) for x in range(x0, x1)]) == {FILLS["row_header"]}
    clerk = cells[(2, 1)]
    beside = [(x, y) for x in range(clerk.box[0] + 1, clerk.box[0] + 4)]
    assert _pixels(image, beside) == {GRID_COLOR}


def test_headers_are_shaded_and_bold_and_values_are_not() -> None:
    layout = table_layout(parse_table(NESTED))
    image = decode(render_table_png(NESTED))
    for placed in layout.cells:
        x0, y0, _x1, _y1 = placed.box
        assert image.getpixel((x0 + 2, y0 + 2)) == FILLS[placed.cell.role]
        assert placed.bold == (placed.cell.role in ("column_header", "corner"))
    assert FILLS["column_header"] != FILLS["value"] == BACKGROUND
    assert FILLS["row_header"] != FILLS["value"]


def test_a_wide_table_shrinks_to_the_width_it_is_given() -> None:
    header = ",".join(f"Column heading {i}" for i in range(14))
    body = ",".join(str(1000 * i) for i in range(14))
    csv_text = f"{header}\n{body}\n{body}\n"
    wide = table_layout(parse_table(csv_text), max_width=5000)
    narrow = table_layout(parse_table(csv_text), max_width=1400)
    assert narrow.width <= 1400 < wide.width
    assert narrow.font_size >= 11
    check_text_fits(narrow, decode(render_table_png(csv_text, max_width=1400)))


def test_rendering_is_deterministic_across_processes() -> None:
    here = hashlib.sha256(render_table_png(NESTED)).hexdigest()
    assert render_table_png(NESTED) == render_table_png(NESTED)
    code = (
        "import hashlib, sys\n"
        "from hctqa.core.images import render_table_png\n"
        "print(hashlib.sha256(render_table_png(sys.argv[1])).hexdigest())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, NESTED],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={"PYTHONHASHSEED": "7", "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == here
