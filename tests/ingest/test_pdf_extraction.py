"""Tables found in PDFs that chromium printed from known tables: ruled (cell boxes) and
borderless (text alignment), with their merged cells; crops; scanned pages; time limits."""

from __future__ import annotations

import io
from pathlib import Path

import pdfplumber
import pytest
from PIL import Image

from hctqa.core.extraction.grid import normalize_canonical
from hctqa.core.extraction.pdf import CROP_DPI, extract_page
from hctqa.core.extraction.worker import PageRunner, PageTimeout
from hctqa.core.tables import parse_table
from tests.ingest.pdfs import (
    NESTED_COLUMNS,
    NESTED_ROWS,
    ROW_GROUPS,
    TOTAL_ROWS,
    scanned_pdf,
    table_pdf,
)


def _extract(data: bytes):
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return extract_page(pdf.pages[0], 1)


def _spans(canonical_csv: str) -> list[tuple[str, int, int, int, int, str]]:
    return [
        (c.text, c.row, c.col, c.rowspan, c.colspan, c.role)
        for c in parse_table(canonical_csv).cells
    ]


@pytest.mark.parametrize(
    "canonical",
    [NESTED_COLUMNS, NESTED_ROWS, ROW_GROUPS, TOTAL_ROWS],
    ids=["nested column headers", "nested rows", "row groups", "total rows"],
)
def test_a_ruled_table_gives_its_merged_cells(print_pdf, canonical: str) -> None:
    result = _extract(table_pdf(print_pdf, canonical))
    (candidate,) = result.candidates
    assert candidate.strategy == "lines"
    assert candidate.canonical_csv == canonical
    assert _spans(candidate.canonical_csv) == _spans(canonical)


def test_nested_column_headers_keep_their_spans(print_pdf) -> None:
    (candidate,) = _extract(table_pdf(print_pdf, NESTED_COLUMNS)).candidates
    cells = {c.text: c for c in parse_table(candidate.canonical_csv).cells if c.text}
    assert (cells["Region"].rowspan, cells["2019"].colspan, cells["Qatari"].colspan) == (3, 4, 2)


@pytest.mark.parametrize(
    "canonical",
    [NESTED_COLUMNS, NESTED_ROWS, ROW_GROUPS, TOTAL_ROWS],
    ids=["nested column headers", "nested rows", "row groups", "total rows"],
)
def test_a_borderless_table_is_read_from_its_alignment(print_pdf, canonical: str) -> None:
    (candidate,) = _extract(table_pdf(print_pdf, canonical, ruled=False)).candidates
    assert candidate.strategy == "text"
    assert normalize_canonical(candidate.canonical_csv) == normalize_canonical(canonical)


def test_each_candidate_has_a_crop_at_200_dpi_and_the_page_an_image(print_pdf) -> None:
    result = _extract(table_pdf(print_pdf, TOTAL_ROWS))
    (candidate,) = result.candidates
    x0, top, x1, bottom = candidate.bbox
    crop = Image.open(io.BytesIO(result.crops[0]))
    assert abs(crop.width - (x1 - x0 + 8) * CROP_DPI / 72) < 4
    assert abs(crop.height - (bottom - top + 8) * CROP_DPI / 72) < 4
    assert Image.open(io.BytesIO(result.page_image)).format == "JPEG"
    assert len(candidate.cell_boxes) == 16


def test_a_scanned_page_has_no_text_layer_and_no_candidate(print_pdf) -> None:
    result = _extract(scanned_pdf(print_pdf, TOTAL_ROWS))
    assert result.has_text is False
    assert result.candidates == ()
    assert result.page_image


def test_a_page_over_the_time_limit_is_stopped_and_the_next_request_works(
    print_pdf, tmp_path: Path
) -> None:
    path = tmp_path / "t.pdf"
    path.write_bytes(table_pdf(print_pdf, NESTED_COLUMNS))
    with PageRunner(seconds=0.001) as runner:
        with pytest.raises(PageTimeout):
            runner.call({"op": "page", "path": str(path), "page": 1})
        assert runner.proc is None  # the child was killed
        runner.seconds = 30
        result = runner.call({"op": "page", "path": str(path), "page": 1})
    assert result.candidates[0].canonical_csv == NESTED_COLUMNS
