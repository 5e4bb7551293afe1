"""PDFs for the ingest tests, printed by headless chromium from tables whose canonical CSV is
known (``printable_page``: the project's HTML rendering, ruled or borderless)."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable

from hctqa.core.extraction.printable import printable_page, printable_pages
from hctqa.core.images import render_table_png
from hctqa.core.tables import parse_table

PrintPdf = Callable[..., bytes]

NESTED_COLUMNS = (
    "Region,2019,__,__,__,2020,__,__,__\n"
    "__,Qatari,__,Non-Qatari,__,Qatari,__,Non-Qatari,__\n"
    "__,Male,Female,Male,Female,Male,Female,Male,Female\n"
    "Doha,1,2,3,4,5,6,7,8\n"
    "Al Rayyan,9,10,11,12,13,14,15,16\n"
)
NESTED_ROWS = (
    "Region,City,Population,Area\n"
    "North,Al Khor,120,10.5\n"
    "__,Al Shamal,80,9.1\n"
    "__,Al Ruwais,40,2.2\n"
    "South,Al Wakrah,300,44.0\n"
    "__,Mesaieed,50,8.3\n"
)
ROW_GROUPS = (
    "Item,2019,2020\n"
    "Schools,,\n"
    "Government,120,125\n"
    "Private,300,310\n"
    "Students,,\n"
    "Government,51000,52000\n"
    "Private,98000,99500\n"
)
TOTAL_ROWS = "Region,Male,Female,Total\nNorth,10,12,22\nSouth,20,22,42\nTotal,30,34,64\n"


def table_pdf(print_pdf: PrintPdf, canonical_csv: str, *, ruled: bool = True) -> bytes:
    return print_pdf(printable_page(parse_table(canonical_csv), ruled=ruled))


def pages_pdf(print_pdf: PrintPdf, tables: list[str]) -> bytes:
    """One ruled table per A4 page."""
    return print_pdf(printable_pages([parse_table(csv) for csv in tables]), a4=True)


def scanned_pdf(print_pdf: PrintPdf, canonical_csv: str) -> bytes:
    """A page that is only a picture of a table: no text layer."""
    png = base64.b64encode(render_table_png(canonical_csv)).decode()
    return print_pdf(
        f'<!doctype html><html><body><img src="data:image/png;base64,{png}"></body></html>'
    )


def pdf_pages(data: bytes) -> int:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return len(pdf.pages)


def blank_pdf(pages: int, tag: str = "") -> bytes:
    """A PDF of ``pages`` blank A4 pages (pypdf); ``tag`` in its metadata makes its bytes
    differ from another's (a file is ingested once)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595, height=842)
    writer.add_metadata({"/Title": f"blank {tag}"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
