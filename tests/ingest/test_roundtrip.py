"""A small round trip through real table structures, as benchmarks/ingest_roundtrip.py does for
all 1,880: release tables printed ruled and borderless by chromium, extracted, compared."""

from __future__ import annotations

import io
import statistics

import pdfplumber

from hctqa.core.extraction.metrics import compare
from hctqa.core.extraction.pdf import find_candidates
from hctqa.core.extraction.printable import printable_page
from hctqa.core.tables import parse_table


def _round_trip(print_pdf, tables: list, ruled: bool) -> list:
    results = []
    for table in tables:
        data = print_pdf(printable_page(parse_table(table.canonical_csv), ruled=ruled))
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            _has_text, found = find_candidates(pdf.pages[0], 1)
        best = max(found, key=lambda c: len(c.grid.cells))
        results.append(compare(best.canonical_csv, table.canonical_csv))
    return results


def test_release_tables_survive_printing_and_extraction(print_pdf, release_tables: list) -> None:
    sample = release_tables[::63]  # 30 tables from all four sources
    assert {t.source for t in sample} == {"psa", "pak", "census", "arxiv"}
    ruled = _round_trip(print_pdf, sample, ruled=True)
    assert sum(r.exact for r in ruled) / len(ruled) >= 0.95
    assert statistics.fmean(r.teds for r in ruled) >= 0.98
    borderless = _round_trip(print_pdf, sample, ruled=False)
    assert statistics.fmean(r.teds for r in borderless) >= 0.85
