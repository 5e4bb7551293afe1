"""The ICDAR 2013 Table Competition's ground truth (Göbel et al.), as ``EXTRACTION.md`` reads it.

For each ``NAME.pdf`` of a folder, ``NAME-reg.xml`` gives each table's regions (page and
bounding box, PDF user space: origin at the bottom left) and ``NAME-str.xml`` its cells
(start and end row and column, content). ``read_folder`` gives every table with its regions in
pdfplumber's convention (origin top left: ``(x1, H − y2, x2, H − y1)``) and its true grid.

A table's regions are numbered alike in both files; a region's ``row-increment`` and
``col-increment`` offset its cells (a table split over pages). Grid positions no cell covers
are empty cells. Files without a PDF of their own (``eu-009b``, an alternative ground truth)
are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from hctqa.core.extraction.grid import Grid, GridCell, clean_text

Box = tuple[float, float, float, float]
MAX_XML_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class Region:
    page: int  # 1-based
    bbox: Box  # x0, top, x1, bottom; origin top left


@dataclass(frozen=True)
class TrueTable:
    document: str  # "eu-001"
    pdf: Path
    number: int  # the table's id in the files, 1-based
    regions: tuple[Region, ...]
    grid: Grid

    @property
    def name(self) -> str:
        return f"{self.document}#{self.number}"


def _parse(path: Path) -> etree._Element:
    if path.stat().st_size > MAX_XML_BYTES:
        raise ValueError(f"{path} is larger than {MAX_XML_BYTES} bytes")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    return etree.parse(str(path), parser).getroot()


def page_heights(pdf: Path) -> dict[int, float]:
    """Each page's height in points, by 1-based page number."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    try:
        return {i + 1: float(document[i].get_size()[1]) for i in range(len(document))}
    finally:
        document.close()


def _int(value: str | None, default: int) -> int:
    return int(value) if value not in (None, "") else default


def _grid(table: etree._Element) -> Grid:
    cells: list[GridCell] = []
    for region in table.iter("region"):
        row_offset = _int(region.get("row-increment"), 0)
        col_offset = _int(region.get("col-increment"), 0)
        for cell in region.iter("cell"):
            r0 = _int(cell.get("start-row"), 0) + row_offset
            c0 = _int(cell.get("start-col"), 0) + col_offset
            r1 = _int(cell.get("end-row"), r0 - row_offset) + row_offset
            c1 = _int(cell.get("end-col"), c0 - col_offset) + col_offset
            content = cell.find("content")
            text = clean_text(content.text or "") if content is not None else ""
            cells.append(GridCell(r0, c0, r1 - r0 + 1, c1 - c0 + 1, text))
    if not cells:
        return Grid(0, 0, ())
    top = min(c.row for c in cells)
    left = min(c.col for c in cells)
    cells = [GridCell(c.row - top, c.col - left, c.rowspan, c.colspan, c.text) for c in cells]
    n_rows = max(c.row + c.rowspan for c in cells)
    n_cols = max(c.col + c.colspan for c in cells)
    return Grid.build(n_rows, n_cols, cells)


def read_document(pdf: Path) -> list[TrueTable]:
    """The true tables of one competition PDF."""
    stem = pdf.with_suffix("")
    regions_xml = _parse(Path(f"{stem}-reg.xml"))
    structure_xml = _parse(Path(f"{stem}-str.xml"))
    heights = page_heights(pdf)
    regions: dict[int, list[Region]] = {}
    for table in regions_xml.iter("table"):
        found = []
        for region in table.iter("region"):
            page = int(region.get("page"))
            box = region.find("bounding-box")
            x1, y1, x2, y2 = (float(box.get(k)) for k in ("x1", "y1", "x2", "y2"))
            height = heights[page]
            found.append(Region(page, (x1, height - y2, x2, height - y1)))
        regions[int(table.get("id"))] = found
    tables = []
    for table in structure_xml.iter("table"):
        number = int(table.get("id"))
        tables.append(
            TrueTable(stem.name, pdf, number, tuple(regions.get(number, ())), _grid(table))
        )
    return tables


def read_folder(folder: Path) -> list[TrueTable]:
    """Every true table of the folder's PDFs, in file and table order."""
    tables: list[TrueTable] = []
    for pdf in sorted(folder.glob("*.pdf")):
        if Path(f"{pdf.with_suffix('')}-str.xml").is_file():
            tables += read_document(pdf)
    return tables
