"""A round trip through the real release's table structures: each of the 1,880 real tables is
rendered by the project's HTML rendering with cell borders (and again without), printed to
PDF by headless chromium, ingested page by page as the ingest worker does (a child process,
crops and page images included), and the extracted canonical CSV compared with the original.
The HTML path runs on the same tables. Goals: ruled ≥ 95% exact and mean TEDS ≥ 0.98;
borderless mean TEDS ≥ 0.85; HTML 100% exact; a 100-page PDF's candidates and crops ready in
under 60 s.

    .venv/bin/python benchmarks/ingest_roundtrip.py [--limit N] [--data ../shared/data]

Exact means the same normal form (``hctqa.core.extraction.grid.normalize_canonical``: the
same cells, spans and text; whitespace runs count as one space, which is all a rendered page
can show). Its last line reads
``ruled exact <rate> teds <mean>; borderless exact <rate> teds <mean>; html exact <rate>``.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _setup import setup


def _arguments(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--limit", type=int, default=0, help="the first N tables (all: 0)")


def print_pdfs(tables: list, folder: Path, ruled: bool) -> tuple[list[Path], float]:
    from playwright.sync_api import sync_playwright

    from hctqa.core.extraction.printable import CONTENT_SIZE_JS, printable_page
    from hctqa.core.tables import parse_table
    from tests.chromium import launch_chromium

    paths = []
    started = time.monotonic()
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 3000, "height": 1000})
        for table in tables:
            page.set_content(printable_page(parse_table(table.canonical_csv), ruled=ruled))
            width, height = page.evaluate(CONTENT_SIZE_JS)
            path = folder / f"{'ruled' if ruled else 'borderless'}-{table.id}.pdf"
            path.write_bytes(page.pdf(width=f"{width + 2}px", height=f"{height + 2}px"))
            paths.append(path)
        browser.close()
    return paths, time.monotonic() - started


def extract(paths: list[Path]) -> tuple[list[str | None], float]:
    """The canonical CSV of each PDF's largest candidate, through the ingest worker's child
    process (each page with its crops and page image), and the seconds it spent."""
    from django.conf import settings

    from hctqa.core.extraction.worker import PageError, PageRunner, PageTimeout, WorkerFailed

    found: list[str | None] = []
    seconds = 0.0
    with PageRunner(
        seconds=settings.INGEST_PAGE_SECONDS, memory_mb=settings.INGEST_WORKER_MEMORY_MB
    ) as runner:
        runner.call({"op": "pdf_pages", "path": str(paths[0])})  # start the child
        for path in paths:
            started = time.monotonic()
            try:
                result = runner.call({"op": "page", "path": str(path), "page": 1})
            except (PageError, PageTimeout, WorkerFailed):
                found.append(None)
                continue
            finally:
                seconds += time.monotonic() - started
            best = max(result.candidates, key=lambda c: len(c.grid.cells), default=None)
            found.append(best.canonical_csv if best else None)
    return found, seconds


def _compare(pair: tuple[str | None, str]) -> tuple[bool, float]:
    from hctqa.core.extraction.metrics import compare

    found, truth = pair
    if found is None:
        return False, 0.0
    result = compare(found, truth)
    return result.exact, result.teds


def score(tables: list, found: list[str | None]) -> tuple[float, float, dict[str, tuple]]:
    """Exact rate and mean TEDS, overall and per source. TEDS takes seconds on a large table
    that is not exact, so the comparisons use every core."""
    pairs = [(f, t.canonical_csv) for f, t in zip(found, tables, strict=True)]
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        results = pool.map(_compare, pairs, chunksize=4)
    per_source: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for table, result in zip(tables, results, strict=True):
        per_source[table.source].append(result)
    everything = [r for rows in per_source.values() for r in rows]
    by_source = {
        source: (
            len(rows),
            sum(e for e, _ in rows) / len(rows),
            statistics.fmean(t for _, t in rows),
        )
        for source, rows in sorted(per_source.items())
    }
    exact = sum(e for e, _ in everything) / len(everything)
    return exact, statistics.fmean(t for _, t in everything), by_source


def html_exact(tables: list) -> float:
    from hctqa.core.extraction.grid import normalize_canonical
    from hctqa.core.extraction.html import html_tables
    from hctqa.core.render import to_html
    from hctqa.core.tables import parse_table

    right = 0
    for table in tables:
        page = (
            f"<!doctype html><html><body>{to_html(parse_table(table.canonical_csv))}</body></html>"
        )
        found = html_tables(page.encode())
        right += found[0].grid.to_canonical() == normalize_canonical(table.canonical_csv)
    return right / len(tables)


def a4_pages(tables: list, folder: Path) -> Path:
    """The first 100 tables printed one per A4 page (a wide table runs off its page, as it
    would on paper)."""
    from playwright.sync_api import sync_playwright

    from hctqa.core.extraction.printable import printable_pages
    from hctqa.core.tables import parse_table
    from tests.chromium import launch_chromium

    path = folder / "hundred-a4.pdf"
    chosen = (tables * (100 // len(tables) + 1))[:100]
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page()
        page.set_content(printable_pages([parse_table(t.canonical_csv) for t in chosen]))
        path.write_bytes(page.pdf(format="A4", print_background=True))
        browser.close()
    return path


def hundred_pages(data: bytes, name: str) -> tuple[float, float, int, int]:
    """A 100-page PDF through the ingest services: upload, then extraction, until every
    page's candidates, crops and page images are stored."""
    from dataset.models import Collection
    from ingest import files, services

    started = time.monotonic()
    document = services.document_upload(
        user=None,
        collection=Collection.objects.get_or_create(code="psa", defaults={"name": "QNPC"})[0],
        file_name=name,
        chunks=[data],
        enqueue=False,
    )
    uploaded = time.monotonic() - started
    services.document_extract(document_id=document.pk)
    elapsed = time.monotonic() - started
    candidates = list(document.candidates.all())
    assert all(files.path_of(c.crop_path).is_file() for c in candidates)
    return elapsed, uploaded, document.pages.filter(status="done").count(), len(candidates)


def merged(paths: list[Path]) -> bytes:
    """One PDF of 100 pages: the table-sized pages of the first 100 tables."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for path in (paths * (100 // len(paths) + 1))[:100]:
        writer.append(PdfReader(path))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def main() -> None:
    args = setup(__doc__.splitlines()[0], _arguments)
    from hctqa.core.release import parse_qaps, read_bytes, read_csvs_tar

    real = args.data / "hctqa-real"
    tables = parse_qaps(
        read_bytes(real / "qaps.json.gz"), raw_csvs=read_csvs_tar(real / "csvs.tar.gz")
    )
    if args.limit:
        tables = tables[: args.limit]
    print(f"{len(tables):,} real tables", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="hctqa-ingest-bench-"))
    figures = {}
    for ruled in (True, False):
        name = "ruled" if ruled else "borderless"
        paths, printing = print_pdfs(tables, folder, ruled)
        print(f"{name}: printed {len(paths):,} PDFs in {printing:.0f} s", flush=True)
        found, seconds = extract(paths)
        exact, teds, by_source = score(tables, found)
        figures[name] = (exact, teds)
        print(
            f"{name}: exact {exact:.3f}, mean TEDS {teds:.3f}, no candidate "
            f"{sum(f is None for f in found)}; {len(paths) / seconds:.2f} pages/s per worker "
            f"({seconds / len(paths) * 1000:.0f} ms a page, crops and page image included)"
        )
        for source, (n, source_exact, source_teds) in by_source.items():
            print(f"  {source:7} {n:5,} tables  exact {source_exact:.3f}  TEDS {source_teds:.3f}")
        if ruled:
            for label, data in (
                ("table-sized pages", merged(paths[:100])),
                ("A4 pages", a4_pages(tables[:100], folder).read_bytes()),
            ):
                elapsed, uploaded, pages, candidates = hundred_pages(data, f"{label}.pdf")
                print(
                    f"100-page PDF ({label}): {candidates} candidates on {pages} pages, with "
                    f"crops and page images, ready in {elapsed:.1f} s (upload checks "
                    f"{uploaded:.1f} s)",
                    flush=True,
                )
    html = html_exact(tables)
    print(f"html: exact {html:.3f}")
    print(
        f"ruled exact {figures['ruled'][0]:.3f} teds {figures['ruled'][1]:.3f}; "
        f"borderless exact {figures['borderless'][0]:.3f} teds {figures['borderless'][1]:.3f}; "
        f"html exact {html:.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
