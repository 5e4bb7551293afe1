"""Table extraction on real documents: the ICDAR 2013 Table Competition's EU half, scored as
``../shared/docs/EXTRACTION.md`` defines it, then a peer tool's regression PDFs, then (with
``--raster``) the same EU pages as scans, and the command's start-up; the platform and two
libraries in one run.

    .venv/bin/python benchmarks/ingest_icdar.py [--limit N] [--data DIR] [--half odd|even]
        [--raster DPI] [--no-text] [--no-peers] [--tables] [--misses] [--no-libraries]

``--data`` is the data folder holding ``icdar2013-eu/`` and ``peers-camelot/`` (default
``../shared/data``, or HCTQA_DATA_DIR), or a folder of competition files itself (``NAME.pdf``,
``NAME-reg.xml``, ``NAME-str.xml``), such as the US half; ``--peers DIR`` a folder holding a
peer set's ``cases.json`` (``ingest_peers.py``). ``--limit N`` reads the first N documents;
``--half`` only the odd- or even-numbered ones (develop on one half, check on the other).
``--raster DPI`` adds the scans: each PDF rendered at DPI and saved as an image-only PDF of the
same page size, read through OCR (the platform only: the libraries read no scans);
``--no-text`` leaves out the text PDFs (and the peers), ``--no-peers`` the peer set,
``--no-start-up`` the command's start-up. A folder made by ``generality_set.py`` (our own
renderings, not real documents) is measured the same way, its lines labelled
``our renderings <half>`` instead of ``icdar2013``.

Systems, each in two modes where it has them (**box**: the true region given; **auto**: the
whole page):
- **the platform**, only through its command line (``python -m hctqa.core.extraction``, run
  in this process with one extraction child for the whole run, as the ingest worker does),
  with its default strategy;
- **pdfplumber** ``extract_table`` with the text strategies (box);
- **camelot-py stream** (box: the true region as ``table_areas``; auto: its own detection).

Seconds per page are wall-clock time; the CPU time of the extraction process is printed
beside them, since a loaded machine inflates the first. **Start-up**: the command run as a
person runs it, from a fresh interpreter, on a one-page text PDF (the set's first), seven
times: the median wall-clock and CPU seconds, end to end, with compiled modules cached
(Python's default) and without (PYTHONDONTWRITEBYTECODE=1).

Figures: TEDS (PubTabNet's node count: ``tr`` and ``td`` nodes, no root), TEDS-Struct, the
share of tables with the exact structure, adjacency-relation precision, recall and F1
(micro-averaged), detection recall (IoU ≥ 0.5) and false positives (auto), and the platform's
seconds per page (auto mode: opening the file, reading each page and extracting its tables).
The last lines read
``icdar2013 <N> tables: box teds <x> adjF1 <y>; auto teds <x> adjF1 <y> detect <r> fp <k>;
camelot teds <x> adjF1 <y>; seconds per page <s>`` (camelot in box mode, ``fp`` per page),
``icdar2013 scans <DPI> dpi <N> tables: …`` likewise, the peers' line (``ingest_peers.py``) and
``start-up: <s> s wall, <c> s CPU …``.

``--raster DPI --ocr-marks`` measures the OCR review marks on the scans instead
(``ocr_marks``): ``ocr marks <dpi> dpi, <N> cells, <W> read wrong: wrong cells marked …,
marks on wrong cells …; low confidence alone: …``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _extraction import (  # noqa: E402
    camelot_tables,
    command,
    cpu_seconds,
    grid_of_json,
    rows_grid,
    start_up,
)

from hctqa.core.extraction.grid import Grid, GridCell  # noqa: E402
from hctqa.core.extraction.icdar import TrueTable, page_heights, read_folder  # noqa: E402
from hctqa.core.extraction.metrics import (  # noqa: E402
    AdjacencyCount,
    competition_form,
    same_structure,
    teds,
)

DEFAULT_DATA = REPO.parent / "shared" / "data"
GENERATED = "GENERATED.txt"  # in a folder of our own renderings (generality_set.py)
Box = tuple[float, float, float, float]
IOU = 0.5


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="the first N documents (all: 0)")
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", DEFAULT_DATA)),
        help="the data folder holding icdar2013-eu/, or a folder of competition files",
    )
    parser.add_argument("--half", choices=("odd", "even"), help="odd- or even-numbered files")
    parser.add_argument("--tables", action="store_true", help="print every table's figures")
    parser.add_argument(
        "--misses",
        action="store_true",
        help="print every true region auto mode missed, with the boxes found on its page",
    )
    parser.add_argument(
        "--no-libraries", action="store_true", help="the platform only (faster, no baselines)"
    )
    parser.add_argument(
        "--ocr-marks",
        action="store_true",
        help="with --raster: measure the review marks instead (ocr_marks below)",
    )
    parser.add_argument(
        "--raster",
        type=int,
        metavar="DPI",
        help="the scans too: each PDF rendered at DPI and saved as an image-only PDF of the "
        "same page size, read through OCR (the platform only)",
    )
    parser.add_argument("--no-text", action="store_true", help="leave out the text PDFs")
    parser.add_argument("--no-peers", action="store_true", help="leave out the peer set")
    parser.add_argument(
        "--no-start-up", action="store_true", help="leave out the command's start-up"
    )
    parser.add_argument(
        "--peers", type=Path, help="a peer set's folder (holding cases.json) other than the data's"
    )
    return parser.parse_args()


def _folder(data: Path) -> Path:
    return data if any(data.glob("*-str.xml")) else data / "icdar2013-eu"


def rasterise(pdf: Path, dpi: int, folder: Path) -> Path:
    """``pdf`` as a scan: every page rendered at ``dpi`` (pypdfium2) and saved as an
    image-only PDF (Pillow, JPEG inside, as scanners write) whose pages keep their size in
    points, so the true boxes still apply. Checked: no text layer is left, and no page's size
    moved by more than a pixel."""
    import pdfplumber
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    try:
        sizes = [page.get_size() for page in document]
        images = [page.render(scale=dpi / 72).to_pil().convert("RGB") for page in document]
    finally:
        document.close()
    out = folder / pdf.name
    images[0].save(out, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    with pdfplumber.open(out) as scan:
        for number, (page, (width, height)) in enumerate(zip(scan.pages, sizes, strict=True), 1):
            if page.chars:
                raise RuntimeError(f"{out} page {number} still has a text layer")
            pixel = 72 / dpi * 1.01  # the render rounds each side to whole pixels
            if abs(page.width - width) > pixel or abs(page.height - height) > pixel:
                raise RuntimeError(
                    f"{out} page {number} is {page.width}×{page.height} pt, not {width}×{height}"
                )
    return out


def _number(document: str) -> int:
    digits = re.findall(r"\d+", document)
    return int(digits[-1]) if digits else 0


# --- Scores -----------------------------------------------------------------------------------


@dataclass
class Scores:
    """One system in one mode: per-table TEDS and structure, summed relations."""

    name: str
    teds: list[float] = field(default_factory=list)
    teds_struct: list[float] = field(default_factory=list)
    exact: list[bool] = field(default_factory=list)
    relations: AdjacencyCount = field(default_factory=AdjacencyCount)
    detected: int = 0
    false_positives: int = 0
    pages: int = 0
    seconds: float = 0.0
    per_table: dict[str, float] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)

    def add(self, name: str, predicted: Grid | None, truth: Grid) -> None:
        truth = competition_form(truth)
        self.relations.add(competition_form(predicted) if predicted else None, truth)
        if predicted is None:
            self.teds.append(0.0)
            self.teds_struct.append(0.0)
            self.exact.append(False)
            self.per_table[name] = 0.0
            return
        predicted = competition_form(predicted)
        value = teds(predicted, truth, count_root=False)
        self.teds.append(value)
        self.teds_struct.append(teds(_blank(predicted), _blank(truth), count_root=False))
        self.exact.append(same_structure(predicted, truth))
        self.per_table[name] = value

    def add_tables(self, truths: list[TrueTable], grids: list[Grid | None]) -> None:
        for truth, grid in zip(truths, grids, strict=True):
            self.add(truth.name, grid, truth.grid)

    def add_pages(
        self, truths: list[TrueTable], found: dict[int, list[tuple[Box, Grid]]], pages: int
    ) -> None:
        """A document read whole: its tables found on its pages, matched to the true ones."""
        grids, false_positives = _match(truths, found)
        for table, grid in zip(truths, grids, strict=True):
            if grid is not None:
                continue
            for region in table.regions:
                near = [
                    f"({', '.join(f'{v:.0f}' for v in box)}) IoU {_iou(region.bbox, box):.2f}"
                    for box, _grid in found.get(region.page, [])
                ]
                self.misses.append(
                    f"  missed {table.name} p{region.page} "
                    f"({', '.join(f'{v:.0f}' for v in region.bbox)}); found: "
                    + ("; ".join(near) or "nothing")
                )
        self.pages += pages
        self.false_positives += false_positives
        self.detected += sum(g is not None for g in grids)
        self.add_tables(truths, grids)

    def line(self) -> str:
        n = len(self.teds)
        text = (
            f"{self.name:28} TEDS {statistics.fmean(self.teds):.3f}  "
            f"TEDS-Struct {statistics.fmean(self.teds_struct):.3f}  "
            f"exact structure {sum(self.exact)}/{n}  "
            f"adjacency P {self.relations.precision:.3f} R {self.relations.recall:.3f} "
            f"F1 {self.relations.f1:.3f}"
        )
        if self.pages:
            text += (
                f"  detected {self.detected}/{n} ({self.detected / n:.3f}), false positives "
                f"{self.false_positives} on {self.pages} pages"
            )
        return text


def _blank(grid: Grid) -> Grid:
    cells = (GridCell(c.row, c.col, c.rowspan, c.colspan, "") for c in grid.cells)
    return Grid(grid.n_rows, grid.n_cols, tuple(cells))


def _stack(grids: list[Grid]) -> Grid | None:
    """The regions of a table split over pages, one under the other."""
    if not grids:
        return None
    if len(grids) == 1:
        return grids[0]
    cells: list[GridCell] = []
    offset = 0
    for grid in grids:
        cells += [GridCell(c.row + offset, c.col, c.rowspan, c.colspan, c.text) for c in grid.cells]
        offset += grid.n_rows
    return Grid.build(offset, max(g.n_cols for g in grids), cells)


def _iou(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


def _match(
    truths: list[TrueTable], found: dict[int, list[tuple[Box, Grid]]]
) -> tuple[list[Grid | None], int]:
    """Each true table's grid among the found ones (each region matched one-to-one by the
    best IoU ≥ 0.5 on its page), and how many found tables match nothing."""
    pairs = []
    for t, table in enumerate(truths):
        for g, region in enumerate(table.regions):
            for k, (box, _grid) in enumerate(found.get(region.page, [])):
                iou = _iou(region.bbox, box)
                if iou >= IOU:
                    pairs.append((iou, t, g, region.page, k))
    taken: dict[tuple[int, int], tuple[int, int]] = {}
    used: set[tuple[int, int]] = set()
    for _iou_value, t, g, page, k in sorted(pairs, reverse=True):
        if (t, g) in taken or (page, k) in used:
            continue
        taken[(t, g)] = (page, k)
        used.add((page, k))
    grids: list[Grid | None] = []
    for t, table in enumerate(truths):
        matched = [taken.get((t, g)) for g in range(len(table.regions))]
        if any(m is None for m in matched):
            grids.append(None)
        else:
            grids.append(_stack([found[p][k][1] for p, k in matched]))  # type: ignore[misc]
    total = sum(len(v) for v in found.values())
    return grids, total - len(used)


# --- Systems ----------------------------------------------------------------------------------


def platform_box(pdf: Path, truths: list[TrueTable], runner) -> list[Grid | None]:  # type: ignore[no-untyped-def]
    argv = [str(pdf)]
    for table in truths:
        for region in table.regions:
            argv += ["--box", f"{region.page}:" + ",".join(f"{v:.2f}" for v in region.bbox)]
    tables = iter(command(argv, runner)["tables"])
    return [_stack([grid_of_json(next(tables)) for _ in t.regions]) for t in truths]


def platform_auto(pdf: Path, pages: int, runner) -> dict[int, list[tuple[Box, Grid]]]:  # type: ignore[no-untyped-def]
    found: dict[int, list[tuple[Box, Grid]]] = {}
    for table in command([str(pdf)], runner)["tables"]:
        found.setdefault(table["page"], []).append((tuple(table["bbox"]), grid_of_json(table)))
    return found


def pdfplumber_box(pdf: Path, truths: list[TrueTable]) -> list[Grid | None]:
    import pdfplumber

    settings = {"vertical_strategy": "text", "horizontal_strategy": "text"}
    grids: list[Grid | None] = []
    with pdfplumber.open(pdf) as document:
        for table in truths:
            parts = []
            for region in table.regions:
                page = document.pages[region.page - 1]
                rows = page.crop(region.bbox, strict=False).extract_table(settings)
                if rows:
                    parts.append(rows_grid(rows))
            grids.append(_stack(parts))
    return grids


def camelot_box(pdf: Path, truths: list[TrueTable], heights: dict[int, float]) -> list[Grid | None]:
    grids: list[Grid | None] = []
    for table in truths:
        parts = []
        for region in table.regions:
            x0, top, x1, bottom = region.bbox
            height = heights[region.page]
            area = f"{x0},{height - top},{x1},{height - bottom}"
            found = camelot_tables(pdf, region.page, "stream", area)
            if found:
                parts.append(rows_grid(found[0].df.values.tolist()))
        grids.append(_stack(parts))
    return grids


def camelot_auto(pdf: Path, heights: dict[int, float]) -> dict[int, list[tuple[Box, Grid]]]:
    found: dict[int, list[tuple[Box, Grid]]] = {}
    for page, height in heights.items():
        for table in camelot_tables(pdf, page, "stream"):
            x0, y0, x1, y1 = table._bbox
            box = (x0, height - y1, x1, height - y0)
            found.setdefault(page, []).append((box, rows_grid(table.df.values.tolist())))
    return found


# --- OCR review marks -------------------------------------------------------------------------


def ocr_marks(documents: dict[Path, list[TrueTable]], scans: dict[Path, Path], dpi: int) -> str:
    """How well the review marks point at misread cells, on the scans. Each true region is
    read from the scan as the ingest worker reads it (``read_tables``, OCR in English); a cell
    is read wrong when its words are not the words the born-digital PDF's text layer holds in
    the same box (case and spacing runs aside: the EU files' text layer writes some small
    capitals in lower case). Reported: the share of wrong cells that carry a mark, and the
    share of marks on wrong cells, for all marks and for low confidence alone."""
    import unicodedata
    from collections import Counter

    import pdfplumber

    from hctqa.core.extraction.extract import read_tables
    from hctqa.core.extraction.layout import layout_from_pdfplumber
    from hctqa.core.extraction.table import FLAG_LOW_CONFIDENCE, FLAG_UNKNOWN_WORD

    def words(text: str) -> Counter:
        return Counter(unicodedata.normalize("NFKC", text).casefold().split())

    cells = wrong = 0
    marked = {FLAG_LOW_CONFIDENCE: [0, 0], "any": [0, 0]}  # [marks, marks on wrong cells]
    for pdf, truths in documents.items():
        boxes: dict[int, list[Box]] = {}
        for table in truths:
            for region in table.regions:
                boxes.setdefault(region.page, []).append(region.bbox)
        with pdfplumber.open(scans[pdf]) as scan, pdfplumber.open(pdf) as born:
            for number, regions in sorted(boxes.items()):
                read = read_tables(scan.pages[number - 1], number, regions, ocr_language="eng")
                truth = layout_from_pdfplumber(born.pages[number - 1], number)
                for cell in (c for t in read.tables for c in t.cells):
                    if not cell.text or cell.bbox is None:
                        continue
                    said = " ".join(w.text for w in truth.words_in(cell.bbox))
                    bad = words(cell.text) != words(said)
                    cells += 1
                    wrong += bad
                    for kind, flags in (
                        (FLAG_LOW_CONFIDENCE, {FLAG_LOW_CONFIDENCE}),
                        ("any", {FLAG_LOW_CONFIDENCE, FLAG_UNKNOWN_WORD}),
                    ):
                        if flags & set(cell.flags):
                            marked[kind][0] += 1
                            marked[kind][1] += bad

    def shares(kind: str) -> str:
        marks, on_wrong = marked[kind]
        return (
            f"wrong cells marked {on_wrong}/{wrong} ({on_wrong / max(wrong, 1):.3f}), "
            f"marks on wrong cells {on_wrong}/{marks} ({on_wrong / max(marks, 1):.3f})"
        )

    return (
        f"ocr marks {dpi} dpi, {cells} cells, {wrong} read wrong: {shares('any')}; "
        f"low confidence alone: {shares(FLAG_LOW_CONFIDENCE)}"
    )


# --- The run ----------------------------------------------------------------------------------


@dataclass
class SetRun:
    """The platform (and the libraries) on one set of competition files."""

    box: Scores
    auto: Scores
    libraries: list[Scores]
    tables: int
    cpu: float  # the extraction child's CPU seconds in auto mode


def run_set(
    chosen: list[Path],
    documents: dict[Path, list[TrueTable]],
    runner,  # type: ignore[no-untyped-def]
    *,
    scans: dict[Path, Path] | None = None,
    libraries: bool = True,
) -> SetRun:
    """Each chosen document read whole (auto) and box by box, through the command."""
    scans = scans or {}
    box = Scores("platform, box")
    auto = Scores("platform, auto")
    plumber = Scores("pdfplumber text, box")
    camelot = Scores("camelot stream, box")
    camelot_whole = Scores("camelot stream, auto")
    auto_cpu = 0.0
    runner.call({"op": "pdf_pages", "path": str(chosen[0])})  # the child starts here
    for pdf in chosen:
        wanted = documents[pdf]
        heights = page_heights(pdf)
        read = scans.get(pdf, pdf)
        started, cpu = time.monotonic(), cpu_seconds(runner)
        found = platform_auto(read, len(heights), runner)
        auto.seconds += time.monotonic() - started
        auto_cpu += cpu_seconds(runner) - cpu
        auto.add_pages(wanted, found, len(heights))
        started = time.monotonic()
        box.add_tables(wanted, platform_box(read, wanted, runner))
        box.seconds += time.monotonic() - started
        if not libraries:
            continue
        plumber.add_tables(wanted, pdfplumber_box(pdf, wanted))
        camelot.add_tables(wanted, camelot_box(pdf, wanted, heights))
        camelot_whole.add_pages(wanted, camelot_auto(pdf, heights), len(heights))
    others = [plumber, camelot, camelot_whole] if libraries else []
    return SetRun(box, auto, others, sum(len(documents[p]) for p in chosen), auto_cpu)


def report(run: SetRun, label: str, args: argparse.Namespace) -> str:
    """Prints the set's figures; returns its summary line."""
    box, auto = run.box, run.auto
    camelot = next((s for s in run.libraries if s.name == "camelot stream, box"), None)
    if args.tables:
        for name in box.per_table:
            print(
                f"  {name:12} box {box.per_table[name]:.3f}  auto {auto.per_table[name]:.3f}"
                + (f"  camelot {camelot.per_table[name]:.3f}" if camelot else "")
            )
    if args.misses:
        print("\n".join(auto.misses))
    for scores in [box, auto, *run.libraries]:
        print(scores.line())
    per_page = auto.seconds / auto.pages
    print(
        f"platform: {per_page:.3f} s per page (auto; {run.cpu / auto.pages:.3f} s of CPU), "
        f"{box.seconds / run.tables:.3f} s per box"
    )
    line = (
        f"{label} {run.tables} tables: box teds {statistics.fmean(box.teds):.3f} adjF1 "
        f"{box.relations.f1:.3f}; auto teds {statistics.fmean(auto.teds):.3f} adjF1 "
        f"{auto.relations.f1:.3f} detect {auto.detected / run.tables:.3f} fp "
        f"{auto.false_positives / auto.pages:.3f}; "
    )
    if camelot:
        line += (
            f"camelot teds {statistics.fmean(camelot.teds):.3f} adjF1 {camelot.relations.f1:.3f}; "
        )
    return line + f"seconds per page {per_page:.3f} (CPU {run.cpu / auto.pages:.3f})"


def main() -> None:
    args = _arguments()
    if args.ocr_marks and not args.raster:
        sys.exit("--ocr-marks measures the marks on scans: give --raster DPI too")
    from ingest_peers import folder_of, run_peers
    from ingest_peers import report as report_peers

    from hctqa.core.extraction.__main__ import MEMORY_MB, PAGE_SECONDS
    from hctqa.core.extraction.worker import PageRunner

    folder = _folder(args.data)
    # Our own renderings (generality_set.py) say so in every line that quotes them.
    label = f"our renderings {folder.name}" if (folder / GENERATED).is_file() else "icdar2013"
    truths = read_folder(folder)
    documents: dict[Path, list[TrueTable]] = {}
    for table in truths:
        documents.setdefault(table.pdf, []).append(table)
    chosen = list(documents)
    if args.half:
        chosen = [p for p in chosen if _number(p.stem) % 2 == (args.half == "odd")]
    if args.limit:
        chosen = chosen[: args.limit]
    n_tables = sum(len(documents[p]) for p in chosen)
    pages = sum(len(page_heights(p)) for p in chosen)
    print(f"{folder}: {len(chosen)} documents, {n_tables} tables, {pages} pages", flush=True)
    summary: list[str] = []
    if not args.no_text and not args.ocr_marks:
        with PageRunner(seconds=PAGE_SECONDS, memory_mb=MEMORY_MB) as runner:
            run = run_set(chosen, documents, runner, libraries=not args.no_libraries)
            summary.append(report(run, label, args))
            if not args.no_peers:
                peers = args.peers or folder_of(args.data)
                print(flush=True)
                found = run_peers(peers, runner, libraries=not args.no_libraries)
                summary.append(report_peers(found, peers, per_case=args.tables))
    if args.raster:
        import tempfile

        scratch = Path(tempfile.mkdtemp(prefix="icdar-raster-"))
        scans = {pdf: rasterise(pdf, args.raster, scratch) for pdf in chosen}
        print(f"\nrendered at {args.raster} dpi into image-only PDFs (no text layer left)")
        if args.ocr_marks:
            print(ocr_marks({p: documents[p] for p in chosen}, scans, args.raster))
            return
        # OCR of a 300 dpi page on a loaded machine can take longer than the command's default.
        with PageRunner(seconds=PAGE_SECONDS * 5, memory_mb=MEMORY_MB) as runner:
            run = run_set(chosen, documents, runner, scans=scans, libraries=False)
        summary.append(report(run, f"{label} scans {args.raster} dpi", args))
    one_page = next((p for p in chosen if len(page_heights(p)) == 1), None)
    if one_page is not None and not args.no_start_up:
        wall, cpu = start_up(one_page)
        raw_wall, raw_cpu = start_up(one_page, cached=False)
        summary.append(
            f"start-up: python -m hctqa.core.extraction {one_page.name} (one text page, end to "
            f"end, median of 7): {wall:.3f} s wall, {cpu:.3f} s CPU (compiled modules "
            f"cached, Python's default; without: {raw_wall:.3f} s, {raw_cpu:.3f} s CPU)"
        )
    print()
    print("\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
