"""The extraction track: gold from the released tables, predictions in cells or HTML read
with limits, figures by hand, page mode's detection, and the rendered pages."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pdfplumber
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from hctqa.core.extraction.grid import Grid, GridCell
from hctqa.core.extraction.metrics import competition_form
from hctqa.core.tracks.extraction import (
    cells_of,
    competition_grid,
    icdar_items,
    page_item,
    region_item,
    score_extraction,
    synthetic_grid,
    synthetic_items,
)
from hctqa.core.tracks.shared import REASON_INVALID, REASON_MISSING

TRUTH = Grid.build(
    2,
    2,
    [
        GridCell(0, 0, 1, 1, "a"),
        GridCell(0, 1, 1, 1, "ab"),
        GridCell(1, 0, 1, 1, "c"),
        GridCell(1, 1, 1, 1, "d"),
    ],
)


def region(grid: Grid = TRUTH, item_id: str = "r1"):
    return region_item(
        item_id=item_id,
        table_id="t",
        file="x.pdf",
        data=b"%PDF-",
        kind="pdf",
        page=1,
        bbox=(10, 10, 100, 50),
        grid=grid,
        source="test",
    )


def one(item, prediction):
    return score_extraction([item], {item.id: prediction})


def test_the_gold_is_a_perfect_prediction_in_both_forms() -> None:
    item = region()
    assert item.gold == {
        "rows": 2,
        "cols": 2,
        "cells": [
            {"row": 0, "col": 0, "rowspan": 1, "colspan": 1, "text": "a"},
            {"row": 0, "col": 1, "rowspan": 1, "colspan": 1, "text": "ab"},
            {"row": 1, "col": 0, "rowspan": 1, "colspan": 1, "text": "c"},
            {"row": 1, "col": 1, "rowspan": 1, "colspan": 1, "text": "d"},
        ],
    }
    perfect = {"teds": 1.0, "teds_struct": 1.0, "adj_f1": 1.0, "exact": 1.0}
    assert one(item, item.gold).figures == perfect
    html = "<table><tr><td>a</td><td>ab</td></tr><tr><td>c</td><td> d </td></tr></table>"
    assert one(item, {"html": html}).figures == perfect
    # The command's own table, extra keys and all, is a prediction as it is.
    command_table = {**item.gold, "page": 1, "bbox": [1, 2, 3, 4], "canonical_csv": "a"}
    assert one(item, command_table).figures == perfect


def test_figures_by_hand() -> None:
    item = region()
    wrong = json.loads(json.dumps(item.gold))
    wrong["cells"][1]["text"] = "ax"  # Levenshtein 1 of 2 characters
    result = one(item, wrong).results["r1"]
    # Six nodes (2 rows, 4 cells); one rename costing 1/2.
    assert result.figures["teds"] == pytest.approx(1 - 0.5 / 6)
    assert result.figures["teds_struct"] == 1.0
    assert result.figures["exact"] == 1.0
    # Relations a→ab, c→d (right), a→c, ab→d (below): the two with "ab" are lost.
    assert result.detail["relations"] == {"predicted": 4, "true": 4, "right": 2}
    assert result.figures["adj_f1"] == pytest.approx(0.5)
    merged = {
        "cells": [
            {"row": 0, "col": 0, "colspan": 2, "text": "a ab"},
            {"row": 1, "col": 0, "text": "c"},
            {"row": 1, "col": 1, "text": "d"},
        ]
    }
    assert one(item, merged).results["r1"].figures["exact"] == 0.0


def test_adjacency_is_micro_averaged_over_tables() -> None:
    big = Grid.build(3, 3, [GridCell(r, c, 1, 1, f"{r}{c}") for r in range(3) for c in range(3)])
    items = [region(TRUTH, "small"), region(big, "big")]
    card = score_extraction(items, {"big": items[1].gold})
    # small: 4 true relations, none found; big: 12 true, 12 found and right.
    assert card.figures["adj_f1"] == pytest.approx(2 * 1.0 * (12 / 16) / (1 + 12 / 16))
    assert card.figures["teds"] == pytest.approx(0.5)
    assert card.reasons == {REASON_MISSING: 1}


@pytest.mark.parametrize(
    "prediction",
    [
        {"cells": "nope"},
        {"cells": [{"row": -1, "col": 0, "text": "a"}]},
        {"cells": [{"row": True, "col": 0, "text": "a"}]},
        {"cells": [{"row": 0, "col": 0, "rowspan": 0, "text": "a"}]},
        {"cells": [{"row": 0, "col": 0, "text": 5}]},
        {"cells": [{"row": 0, "col": 0, "text": "x" * 10_001}]},
        {"cells": [{"row": 0, "col": 0, "rowspan": 10**9, "colspan": 10**9, "text": "a"}]},
        {"rows": 10**6, "cols": 10**6, "cells": []},
        {"html": ""},
        {"html": 5},
        {"html": "<p>no table here</p>"},
        {"html": "<table><tr><td></td></tr></table>"},
        {"html": "<table>" + "<tr><td colspan=1000>x</td></tr>" * 300 + "</table>"},
        {"tables": []},
        {"something": "else"},
        {"cells": [[[[[[[[[]]]]]]]]]},
    ],
)
def test_a_prediction_that_cannot_be_read_scores_0_with_the_reason(prediction) -> None:
    items = [region(item_id="bad"), region(item_id="good")]
    card = score_extraction(items, {"bad": prediction, "good": items[1].gold})
    bad = card.results["bad"]
    assert bad.reason == REASON_INVALID, bad
    assert bad.message
    assert bad.figures == {"teds": 0.0, "teds_struct": 0.0, "adj_f1": 0.0, "exact": 0.0}
    assert card.results["good"].figures["teds"] == 1.0


def test_html_spans_are_laid_out_and_bounded() -> None:
    item = region(
        Grid.build(
            2, 2, [GridCell(0, 0, 1, 2, "h"), GridCell(1, 0, 1, 1, "a"), GridCell(1, 1, 1, 1, "b")]
        )
    )
    html = '<table><tr><th colspan="2">h</th></tr><tr><td>a</td><td>b</td></tr></table>'
    assert one(item, {"html": html}).figures["exact"] == 1.0
    huge = '<table><tr><td rowspan="99999999" colspan="99999999">h</td></tr></table>'
    assert one(item, {"html": huge}).results[item.id].figures["exact"] == 0.0


def test_page_mode_counts_detection_and_false_positives() -> None:
    table = {"bbox": [10, 10, 100, 50], **cells_of(TRUTH)}
    other = {"bbox": [10, 200, 100, 260], **cells_of(TRUTH)}
    item = page_item(
        item_id="p1",
        table_id="t",
        file="x.pdf",
        data=b"%PDF-",
        kind="pdf",
        page=1,
        tables=[((10, 10, 100, 50), TRUTH), ((10, 200, 100, 260), TRUTH)],
        source="test",
    )
    assert item.gold == {"tables": [table, other]}
    assert one(item, item.gold).figures["detection_recall"] == 1.0
    # One table found where it is (IoU 0.81), one drawn elsewhere.
    found = {
        "tables": [{**table, "bbox": [10, 10, 100, 60]}, {**table, "bbox": [300, 300, 400, 400]}]
    }
    card = one(item, found)
    assert card.figures["detection_recall"] == 0.5
    assert card.figures["false_positives"] == 1.0
    assert card.figures["teds"] == 0.5
    assert card.results["p1"].detail["detected"] == 1
    # A box that overlaps too little (IoU 0.45) is no detection.
    shifted = {"tables": [{**table, "bbox": [10, 32, 100, 72]}]}
    assert one(item, shifted).figures["detection_recall"] == 0.0


def _hct_csv_rows(table) -> list[list[str]]:
    return list(csv.reader(io.StringIO(table.synthetic.hct_csv)))


def test_the_synthetic_gold_is_the_hct_with_its_merged_cells(synthetic_tables: list) -> None:
    for table in synthetic_tables[:40]:
        grid = synthetic_grid(table.synthetic.hct_html)
        rows = _hct_csv_rows(table)
        assert (grid.n_rows, grid.n_cols) == (len(rows), len(rows[0]))
        owners = grid.owners()
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                cell = owners[r][c]
                anchor = cell is not None and (cell.row, cell.col) == (r, c)
                assert text == (cell.text if anchor else ""), (table.id, r, c)


def test_a_synthetic_table_gives_four_items_with_exact_boxes(synthetic_tables: list) -> None:
    table = synthetic_tables[0]
    items = synthetic_items(table_id=table.id, hct_html=table.synthetic.hct_html, title="T")
    assert [i.id.rsplit("--", 2)[1:] for i in items] == [
        ["pdf", "region"],
        ["pdf", "page"],
        ["png", "region"],
        ["png", "page"],
    ]
    pdf_region, _, png_region, png_page = items
    assert pdf_region.files == {
        pdf_region.inputs["file"]: pdf_region.files[pdf_region.inputs["file"]]
    }
    scale = 150 / 72
    assert png_region.inputs["bbox"] == pytest.approx(
        [v * scale for v in pdf_region.inputs["bbox"]], abs=0.02
    )
    assert png_page.gold["tables"][0]["bbox"] == png_region.inputs["bbox"]
    image = Image.open(io.BytesIO(png_region.files[png_region.inputs["file"]]))
    x0, top, x1, bottom = png_region.inputs["bbox"]
    assert 0 < x0 < x1 <= image.width and 0 < top < bottom <= image.height
    # Every character of the table is inside its box; the title is above it.
    x0, top, x1, bottom = pdf_region.inputs["bbox"]
    with pdfplumber.open(io.BytesIO(pdf_region.files[pdf_region.inputs["file"]])) as pdf:
        words = pdf.pages[0].extract_words()
    inside = [w for w in words if w["top"] >= top]
    assert {w["text"] for w in words if w["top"] < top} == {"T"}
    assert all(x0 <= w["x0"] and w["x1"] <= x1 and w["bottom"] <= bottom for w in inside)
    texts = " ".join(w["text"] for w in inside)
    assert all(c["text"] in texts for c in pdf_region.gold["cells"])
    assert score_extraction(items, {i.id: i.gold for i in items}).figures["teds"] == 1.0


def test_icdar_items_cover_single_region_tables_and_their_pages(data_dir: Path) -> None:
    from hctqa.core.extraction.icdar import read_folder

    tables = read_folder(data_dir / "icdar2013-eu")[:12]
    items = icdar_items(tables)
    regions = [i for i in items if i.inputs["mode"] == "region"]
    assert len(regions) == sum(len(t.regions) == 1 for t in tables)
    assert all(i.split_key.startswith("icdar--eu-") for i in items)
    card = score_extraction(items, {i.id: i.gold for i in items})
    assert card.figures["teds"] == 1.0 and card.figures["detection_recall"] == 1.0
    truth = competition_form(tables[0].grid)
    assert regions[0].gold == cells_of(truth)


@pytest.fixture(scope="module")
def runner():
    from hctqa.core.extraction.worker import PageRunner

    with PageRunner(seconds=120, memory_mb=2048) as page_runner:
        yield page_runner


def _written(items, folder: Path) -> None:
    for item in items:
        for name, data in item.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)


def test_the_platform_reads_rendered_ruled_tables_back_with_their_structure(
    synthetic_tables: list, tmp_path: Path, runner
) -> None:
    from hctqa.core.tracks.extraction import platform_prediction
    from hctqa.core.tracks.rendering import ruled_in_html

    ruled = [t for t in synthetic_tables if ruled_in_html(t.synthetic.hct_html)][:5]
    items = [
        i
        for t in ruled
        for i in synthetic_items(table_id=t.id, hct_html=t.synthetic.hct_html, title="Students")
        if i.inputs["kind"] == "pdf"
    ]
    _written(items, tmp_path)
    card = score_extraction(items, {i.id: platform_prediction(i, tmp_path, runner) for i in items})
    assert card.figures["exact"] == 1.0
    assert card.figures["teds"] == 1.0
    assert card.figures["detection_recall"] == 1.0
    assert card.figures["false_positives"] == 0.0


def test_the_baselines_give_predictions_in_the_submission_form(
    synthetic_tables: list, tmp_path: Path, runner
) -> None:
    from hctqa.core.tracks.extraction import pdfplumber_prediction, platform_prediction
    from hctqa.core.tracks.rendering import ruled_in_html

    table = next(t for t in synthetic_tables if ruled_in_html(t.synthetic.hct_html))
    items = synthetic_items(table_id=table.id, hct_html=table.synthetic.hct_html, title="S")
    _written(items, tmp_path)
    pdf_region, pdf_page, png_region, _png_page = items
    plumber = {i.id: pdfplumber_prediction(i, tmp_path, runner) for i in (pdf_region, pdf_page)}
    assert set(plumber[pdf_region.id]) == {"rows", "cols", "cells"}
    assert len(plumber[pdf_page.id]["tables"]) == 1
    card = score_extraction([pdf_region, pdf_page], plumber)
    assert card.figures["teds"] > 0.8  # ruled lines, no merged cells: spans are lost
    assert pdfplumber_prediction(png_region, tmp_path, runner) is None
    # The platform on the image, through OCR.
    ocr = score_extraction(
        [png_region], {png_region.id: platform_prediction(png_region, tmp_path, runner)}
    )
    assert ocr.figures["teds"] > 0.9


@st.composite
def cell_lists(draw: st.DrawFn) -> tuple[int, int, list[GridCell]]:
    n_rows, n_cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    cells = []
    for _ in range(draw(st.integers(0, 12))):
        row, col = draw(st.integers(0, n_rows - 1)), draw(st.integers(0, n_cols - 1))
        rowspan = draw(st.integers(1, n_rows - row))
        colspan = draw(st.integers(1, n_cols - col))
        text = draw(st.sampled_from(["", " ", "a", " a  b ", "c\nd"]))
        cells.append(GridCell(row, col, rowspan, colspan, text))
    return n_rows, n_cols, cells


@settings(max_examples=500, deadline=None)
@given(cell_lists())
def test_the_one_pass_form_equals_the_competition_s(case) -> None:
    n_rows, n_cols, cells = case
    expected = competition_form(Grid.build(n_rows, n_cols, cells))
    assert competition_grid(n_rows, n_cols, cells) == expected
