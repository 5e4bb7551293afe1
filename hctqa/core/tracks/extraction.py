"""The extraction track: from a document page (a PDF page or a page image) to the structure
of its tables, measured as ``EXTRACTION.md`` defines it.

**Modes.** ``region``: the item gives the table's box, and the system reads that one
table. ``page``: the item gives the whole page, and the system finds every table on it,
giving each one's box; detection counts.

**Items** (``region_item``, ``page_item``; ``synthetic_items`` and ``icdar_items`` build
them from the data). Inputs: ``mode``, ``file`` (a path under the items folder; ``Item.files``
holds the bytes), ``kind`` (``pdf`` or ``png``), ``page`` (1-based) and, in region mode,
``bbox``: ``[x0, top, x1, bottom]`` in PDF points with the origin at the top left for a
PDF, in pixels for an image, as the extraction command's ``--box`` takes it.

**Predictions and gold.** A table is given in the extraction command's cell schema
(``python -m hctqa.core.extraction``'s output, ``EXTRACTION.md``):
``{"rows": R, "cols": C, "cells": [{"row", "col", "rowspan", "colspan", "text"}]}`` (rows and
columns 0-based; ``rows``, ``cols``, ``rowspan`` and ``colspan`` may be left out; empty cells
may be left out; any other key, such as a command table's ``page`` or ``canonical_csv``, is
ignored), or as HTML: ``{"html": "<table>…</table>"}``, laid out as browsers do
(``extraction.html``). A region prediction is one table; a page prediction is
``{"tables": [{"bbox": [x0, top, x1, bottom], …one table…}]}``. The gold is exactly the
prediction that scores 1: the true table in the cell schema with ``rows`` and ``cols`` and
its non-empty cells (and, in page mode, each true table's box).

**Figures** (``score_extraction``), over the true tables: both grids are taken to the
competition's form (``metrics.competition_form``: whitespace runs one space, an empty merged
cell as empty 1 × 1 cells), then

- ``teds``: the mean TEDS (PubTabNet's node count: ``tr`` and ``td``, not the root);
- ``teds_struct``: the same with every text blanked;
- ``adj_f1``: the F1 of the competition's adjacency relations, micro-averaged: relations
  found, true and right summed over all tables first;
- ``exact``: the share of tables with the exact structure (rows, columns and spans);
- page mode adds ``detection_recall``, the share of true tables matched by a predicted
  table whose box has IoU ≥ 0.5 with the true box (one to one, best IoU first), and
  ``false_positives``, predicted tables that match none, per page. A true table no
  prediction matches scores 0 and finds no relation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from lxml import etree

from hctqa.core.extraction.grid import Box, Grid, GridCell, clean_text
from hctqa.core.extraction.html import MAX_GRID_POSITIONS, HtmlTableError, html_tables
from hctqa.core.extraction.icdar import TrueTable
from hctqa.core.extraction.metrics import adjacency, competition_form, same_structure
from hctqa.core.safe_json import NestingError, check_depth
from hctqa.core.tracks.rendering import DEFAULT_DPI, render_table, ruled_in_html
from hctqa.core.tracks.shared import (
    REASON_MISSING,
    Item,
    ItemResult,
    PredictionError,
    Scorecard,
    TrackError,
    f1,
    mean,
)
from hctqa.core.tracks.teds import teds

TRACK = "extraction"
MODES = ("region", "page")
KINDS = ("pdf", "png")
FIGURES = ("teds", "teds_struct", "adj_f1", "exact")
PAGE_FIGURES = ("detection_recall", "false_positives")
IOU = 0.5
MAX_CELL_CHARS = 10_000
MAX_HTML_CHARS = 2_000_000
MAX_TABLES = 50
MAX_DEPTH = 6  # {"tables": [{"cells": [{...}]}]}


# --- Tables in the cell schema -------------------------------------------------------------


def cells_of(grid: Grid) -> dict[str, Any]:
    """A grid in the extraction command's cell schema: ``rows``, ``cols`` and each non-empty
    cell (texts with whitespace runs as one space)."""
    cells = []
    for cell in sorted(grid.cells, key=lambda c: (c.row, c.col)):
        text = clean_text(cell.text)
        if text:
            cells.append(
                {
                    "row": cell.row,
                    "col": cell.col,
                    "rowspan": cell.rowspan,
                    "colspan": cell.colspan,
                    "text": text,
                }
            )
    return {"rows": grid.n_rows, "cols": grid.n_cols, "cells": cells}


def _count(value: Any, name: str, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise PredictionError(f"{name} should be a whole number of at least {low}, not {value!r}")
    return value


def _cell_table(value: Mapping[str, Any]) -> Grid:
    cells = value.get("cells")
    if not isinstance(cells, list):
        raise PredictionError('A table\'s "cells" should be a list of cells')
    if len(cells) > MAX_GRID_POSITIONS:
        raise PredictionError(f"A table may have at most {MAX_GRID_POSITIONS:,} cells")
    found: list[GridCell] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise PredictionError(f"Cell {number} should be an object")
        where = f"Cell {number}"
        text = cell.get("text", "")
        if not isinstance(text, str) or len(text) > MAX_CELL_CHARS:
            raise PredictionError(
                f"{where}: text should be a string of at most {MAX_CELL_CHARS:,} characters"
            )
        found.append(
            GridCell(
                _count(cell.get("row"), f"{where}: row", low=0),
                _count(cell.get("col"), f"{where}: col", low=0),
                _count(cell.get("rowspan", 1), f"{where}: rowspan", low=1),
                _count(cell.get("colspan", 1), f"{where}: colspan", low=1),
                text,
            )
        )
    rows = _count(value.get("rows", 0), "rows", low=0)
    cols = _count(value.get("cols", 0), "cols", low=0)
    rows = max([rows, *(c.row + c.rowspan for c in found)])
    cols = max([cols, *(c.col + c.colspan for c in found)])
    if rows * cols > MAX_GRID_POSITIONS:
        raise PredictionError(
            f"The table is {rows:,} × {cols:,}, over the {MAX_GRID_POSITIONS:,} positions a "
            "table may have"
        )
    return competition_grid(rows, cols, found)


def competition_grid(n_rows: int, n_cols: int, cells: Sequence[GridCell]) -> Grid:
    """``metrics.competition_form(Grid.build(n_rows, n_cols, cells))`` for cells inside the
    grid, in one pass (the scorer's own hot path): a cell overlapping one placed before it
    (row, then column order) is dropped, texts are cleaned, an empty merged cell becomes
    empty 1 × 1 cells and every position no cell covers an empty cell."""
    taken = bytearray(n_rows * n_cols)
    out: list[GridCell] = []
    for cell in sorted(cells, key=lambda c: (c.row, c.col)):
        spots = [
            r * n_cols + c
            for r in range(cell.row, cell.row + cell.rowspan)
            for c in range(cell.col, cell.col + cell.colspan)
        ]
        if any(taken[i] for i in spots):
            continue
        for i in spots:
            taken[i] = 1
        text = clean_text(cell.text)
        if text or len(spots) == 1:
            out.append(GridCell(cell.row, cell.col, cell.rowspan, cell.colspan, text))
        else:
            out += [GridCell(i // n_cols, i % n_cols, 1, 1, "") for i in spots]
    out += [GridCell(i // n_cols, i % n_cols, 1, 1, "") for i, t in enumerate(taken) if not t]
    out.sort(key=lambda c: (c.row, c.col))
    return Grid(n_rows, n_cols, tuple(out))


def _html_table(html: Any) -> Grid:
    if not isinstance(html, str) or len(html) > MAX_HTML_CHARS:
        raise PredictionError(f'"html" should be a string of at most {MAX_HTML_CHARS:,} characters')
    if not html.strip():
        raise PredictionError('"html" is empty')
    try:
        tables = html_tables(html.encode("utf-8", "replace"))
    except HtmlTableError as exc:
        raise PredictionError(f"The HTML gives no table: {exc}") from None
    except (ValueError, etree.LxmlError) as exc:
        raise PredictionError(f"The HTML cannot be read ({exc})") from None
    first = tables[0]
    if first.skipped_reason:
        raise PredictionError(first.skipped_reason)
    return competition_form(first.grid)


def read_table(value: Any) -> Grid:
    """One predicted table, in the cell schema or as ``{"html": ...}``, in the competition's
    form (``metrics.competition_form``); ``PredictionError`` says what is wrong."""
    if not isinstance(value, dict):
        raise PredictionError('A table should be an object with "cells" or "html"')
    if "html" in value:
        return _html_table(value["html"])
    if "cells" in value:
        return _cell_table(value)
    raise PredictionError('A table should have "cells" (the cell schema) or "html"')


def _box(value: Any) -> Box:
    if (
        not isinstance(value, list)
        or len(value) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        or not all(math.isfinite(v) for v in value)
    ):
        raise PredictionError('"bbox" should be four numbers: [x0, top, x1, bottom]')
    x0, top, x1, bottom = (float(v) for v in value)
    if not (x1 > x0 and bottom > top):
        raise PredictionError('"bbox" needs x1 > x0 and bottom > top (origin at the top left)')
    return (x0, top, x1, bottom)


def read_prediction(value: Any, mode: str) -> Grid | list[tuple[Box, Grid]]:
    """A prediction of the given mode: one table (region), or boxes and tables (page)."""
    try:
        check_depth(value, max_depth=MAX_DEPTH)
    except NestingError as exc:
        raise PredictionError(str(exc)) from None
    if mode == "region":
        if isinstance(value, dict) and "tables" in value and "cells" not in value:
            raise PredictionError('A region item takes one table, not "tables"')
        return read_table(value)
    if not isinstance(value, dict) or not isinstance(value.get("tables"), list):
        raise PredictionError('A page item takes {"tables": [...]}, each table with its "bbox"')
    tables = value["tables"]
    if len(tables) > MAX_TABLES:
        raise PredictionError(f"A page may have at most {MAX_TABLES} tables")
    out = []
    for number, table in enumerate(tables, start=1):
        try:
            if not isinstance(table, dict):
                raise PredictionError("should be an object")
            out.append((_box(table.get("bbox")), read_table(table)))
        except PredictionError as exc:
            raise PredictionError(f"Table {number}: {exc.message}") from None
    return out


# --- Items ---------------------------------------------------------------------------------


def _document_item(
    *,
    item_id: str,
    table_id: str,
    file: str,
    data: bytes,
    kind: str,
    page: int,
    source: str,
    split_key: str,
    inputs: dict[str, Any],
    gold: dict[str, Any],
) -> Item:
    if kind not in KINDS:
        raise TrackError(f"A document is a {' or a '.join(KINDS)}, not {kind!r}")
    if page < 1:
        raise TrackError(f"Pages are numbered from 1, not {page}")
    return Item(
        id=item_id,
        track=TRACK,
        table_id=table_id,
        split_key=split_key or table_id,
        source=source,
        inputs={**inputs, "file": file, "kind": kind, "page": page},
        gold=gold,
        files={file: data},
    )


def _rounded(box: Box) -> list[float]:
    return [round(v, 2) for v in box]


def region_item(
    *,
    item_id: str,
    table_id: str,
    file: str,
    data: bytes,
    kind: str,
    page: int,
    bbox: Box,
    grid: Grid,
    source: str,
    split_key: str = "",
) -> Item:
    """An item of region mode: the file's page, the table's box, the true grid."""
    return _document_item(
        item_id=item_id,
        table_id=table_id,
        file=file,
        data=data,
        kind=kind,
        page=page,
        source=source,
        split_key=split_key,
        inputs={"mode": "region", "bbox": _rounded(bbox)},
        gold=cells_of(grid),
    )


def page_item(
    *,
    item_id: str,
    table_id: str,
    file: str,
    data: bytes,
    kind: str,
    page: int,
    tables: Sequence[tuple[Box, Grid]],
    source: str,
    split_key: str = "",
) -> Item:
    """An item of page mode: the file's page and every true table on it, with its box."""
    return _document_item(
        item_id=item_id,
        table_id=table_id,
        file=file,
        data=data,
        kind=kind,
        page=page,
        source=source,
        split_key=split_key,
        inputs={"mode": "page"},
        gold={"tables": [{"bbox": _rounded(box), **cells_of(g)} for box, g in tables]},
    )


def synthetic_grid(hct_html: str) -> Grid:
    """The true structure of a synthetic table: its ``HCT.html`` table as browsers lay it
    out (texts are ``HCT.csv``'s; ``&nbsp;`` is empty)."""
    return html_tables(hct_html.encode("utf-8"))[0].grid


def _file_stem(item_base: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in item_base)


def synthetic_items(
    *, table_id: str, hct_html: str, title: str, dpi: int = DEFAULT_DPI
) -> list[Item]:
    """A synthetic table's four items: drawn to a PDF and a PNG (``rendering``), each in
    region and page mode. The drawing follows the table's ``HCT.html`` (borders or not)."""
    grid = competition_form(synthetic_grid(hct_html))
    drawn = render_table(grid, title=title, ruled=ruled_in_html(hct_html), dpi=dpi)
    stem = f"extraction/{_file_stem(table_id)}"
    items = []
    for kind, data, box in (("pdf", drawn.pdf, drawn.bbox), ("png", drawn.png, drawn.png_bbox)):
        file = f"{stem}.{kind}"
        common = {"table_id": table_id, "file": file, "data": data, "kind": kind, "page": 1}
        items.append(
            region_item(
                item_id=f"{table_id}--{kind}--region",
                bbox=box,
                grid=grid,
                source="synthetic",
                **common,
            )
        )
        items.append(
            page_item(
                item_id=f"{table_id}--{kind}--page",
                tables=[(box, grid)],
                source="synthetic",
                **common,
            )
        )
    return items


def icdar_items(tables: Sequence[TrueTable], *, source: str = "icdar") -> list[Item]:
    """Items of a ground-truth set in the ICDAR 2013 format (``extraction.icdar``): a region
    item per table drawn in one region, and a page item per page whose tables all are. A
    table split over pages has no region item, and its pages no page item, since neither
    mode can give its true grid. The split unit is the document."""
    items: list[Item] = []
    pages: dict[tuple[Path, int], list[TrueTable]] = {}
    split_over_pages: set[tuple[Path, int]] = set()
    for table in tables:
        for region in table.regions:
            pages.setdefault((table.pdf, region.page), []).append(table)
            if len(table.regions) > 1:
                split_over_pages.add((table.pdf, region.page))
    cache: dict[Path, bytes] = {}
    for table in tables:
        if len(table.regions) != 1:
            continue
        region = table.regions[0]
        data = cache.setdefault(table.pdf, table.pdf.read_bytes())
        items.append(
            region_item(
                item_id=f"{source}--{table.name}--region",
                table_id=f"{source}--{table.name}",
                file=f"extraction/{source}/{table.pdf.name}",
                data=data,
                kind="pdf",
                page=region.page,
                bbox=region.bbox,
                grid=competition_form(table.grid),
                source=source,
                split_key=f"{source}--{table.document}",
            )
        )
    for (pdf, page), on_page in pages.items():
        if (pdf, page) in split_over_pages:
            continue
        document = on_page[0].document
        items.append(
            page_item(
                item_id=f"{source}--{document}--p{page}--page",
                table_id=f"{source}--{document}#p{page}",
                file=f"extraction/{source}/{pdf.name}",
                data=cache.setdefault(pdf, pdf.read_bytes()),
                kind="pdf",
                page=page,
                tables=[(t.regions[0].bbox, competition_form(t.grid)) for t in on_page],
                source=source,
                split_key=f"{source}--{document}",
            )
        )
    return items


# --- Scoring -------------------------------------------------------------------------------


def _blank(grid: Grid) -> Grid:
    cells = (GridCell(c.row, c.col, c.rowspan, c.colspan, "") for c in grid.cells)
    return Grid(grid.n_rows, grid.n_cols, tuple(cells))


@dataclass(frozen=True)
class TableScore:
    """One true table against the predicted one (None: none was given or matched)."""

    teds: float
    teds_struct: float
    exact: bool
    predicted: int  # adjacency relations found
    true: int
    right: int


@lru_cache(maxsize=8192)
def _relations(grid: Grid) -> Counter[tuple[str, str, str]]:
    """A true table's relations, cached (read only: ``&`` makes a new counter)."""
    return adjacency(grid)


@lru_cache(maxsize=8192)
def _structure(grid: Grid) -> Grid:
    return _blank(grid)


@lru_cache(maxsize=8192)
def compare_tables(predicted: Grid | None, truth: Grid) -> TableScore:
    """Both in competition form already. Cached: a board scores the same baselines and the
    same true tables again and again."""
    wanted = _relations(truth)
    if predicted is None:
        return TableScore(0.0, 0.0, False, 0, sum(wanted.values()), 0)
    found = adjacency(predicted)
    return TableScore(
        teds=teds(predicted, truth, count_root=False),
        teds_struct=teds(_blank(predicted), _structure(truth), count_root=False),
        exact=same_structure(predicted, truth),
        predicted=sum(found.values()),
        true=sum(wanted.values()),
        right=sum((found & wanted).values()),
    )


def iou(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def match_tables(true_boxes: Sequence[Box], found_boxes: Sequence[Box]) -> dict[int, int]:
    """True table → predicted table: pairs with IoU ≥ 0.5, taken best IoU first (ties: the
    earlier true, then the earlier predicted table), each table used once."""
    pairs = sorted(
        (-iou(t, f), i, j)
        for i, t in enumerate(true_boxes)
        for j, f in enumerate(found_boxes)
        if iou(t, f) >= IOU
    )
    matched: dict[int, int] = {}
    used: set[int] = set()
    for _, i, j in pairs:
        if i not in matched and j not in used:
            matched[i] = j
            used.add(j)
    return matched


def _gold_tables(item: Item) -> list[tuple[Box, Grid]]:
    if item.inputs["mode"] == "region":
        return [((0.0, 0.0, 0.0, 0.0), _cell_table(item.gold))]
    return [(tuple(t["bbox"]), _cell_table(t)) for t in item.gold["tables"]]  # type: ignore[misc]


def _item_figures(scores: list[TableScore]) -> dict[str, float]:
    predicted = sum(s.predicted for s in scores)
    true = sum(s.true for s in scores)
    right = sum(s.right for s in scores)
    return {
        "teds": mean(s.teds for s in scores),
        "teds_struct": mean(s.teds_struct for s in scores),
        "adj_f1": f1(right / predicted if predicted else 0.0, right / true if true else 0.0),
        "exact": mean(float(s.exact) for s in scores),
    }


def score_extraction(items: Sequence[Item], predictions: Mapping[str, Any]) -> Scorecard:
    """Score extraction predictions (item id → prediction object or None) on ``items`` of
    either mode; figures as the module says. Page-mode figures appear when any item is of
    page mode."""
    results: dict[str, ItemResult] = {}
    every: list[TableScore] = []
    true_tables = detected = false_positives = pages = 0
    for item in items:
        mode = item.inputs["mode"]
        truths = _gold_tables(item)
        reason = message = ""
        value = predictions.get(item.id)
        found: list[tuple[Box, Grid]] = []
        if value is None:
            reason, message = REASON_MISSING, "No prediction for this item"
        else:
            try:
                read = read_prediction(value, mode)
            except PredictionError as exc:
                reason, message = exc.code, exc.message
            else:
                found = read if isinstance(read, list) else [(truths[0][0], read)]
        if mode == "region":
            pairs = {0: 0} if found else {}
        else:
            pairs = match_tables([b for b, _ in truths], [b for b, _ in found])
        scores = [
            compare_tables(found[pairs[i]][1] if i in pairs else None, truth)
            for i, (_box, truth) in enumerate(truths)
        ]
        every += scores
        figures = _item_figures(scores)
        detail: dict[str, Any] = {
            "tables": len(truths),
            "relations": {
                "predicted": sum(s.predicted for s in scores),
                "true": sum(s.true for s in scores),
                "right": sum(s.right for s in scores),
            },
        }
        if mode == "page":
            pages += 1
            true_tables += len(truths)
            detected += len(pairs)
            false_positives += len(found) - len(pairs)
            detail.update(detected=len(pairs), false_positives=len(found) - len(pairs))
        results[item.id] = ItemResult(item.id, figures, reason, message, detail)
    totals = _item_figures(every)
    if pages:
        totals["detection_recall"] = detected / true_tables if true_tables else 1.0
        totals["false_positives"] = false_positives / pages
    return Scorecard(
        track=TRACK,
        n=len(items),
        figures=totals,
        results=results,
        extra={"tables": len(every)},
    )


# --- Baselines -----------------------------------------------------------------------------
# Each gives an item's prediction in the submission's form from the item's file, read in the
# extraction child process (``extraction.worker.PageRunner``: a time and memory limit per
# page), or None when the document could not be read.


def _rows_table(rows: Sequence[Sequence[str | None]]) -> dict[str, Any]:
    width = max((len(r) for r in rows), default=0)
    grid = Grid.build(
        len(rows),
        width,
        (
            GridCell(r, c, 1, 1, text or "")
            for r, row in enumerate(rows)
            for c, text in enumerate(row)
        ),
    )
    return cells_of(grid)


def _table_of_command(table: Mapping[str, Any]) -> dict[str, Any]:
    return {"rows": table["rows"], "cols": table["cols"], "cells": table["cells"]}


def platform_prediction(item: Item, folder: Path, runner: Any) -> dict[str, Any] | None:
    """The platform's own extractor (text path, or OCR for an image or a page without
    text), through its command's contract (``python -m hctqa.core.extraction``) with its
    default strategy: the box given in region mode, the whole page otherwise."""
    import io

    from hctqa.core.extraction.__main__ import CommandError
    from hctqa.core.extraction.__main__ import extract as command_extract
    from hctqa.core.extraction.documents import DocumentError

    path = folder / item.inputs["file"]
    page = int(item.inputs["page"])
    region = item.inputs["mode"] == "region"
    try:
        document = command_extract(
            path,
            [] if region else [page],
            [(page, tuple(item.inputs["bbox"]))] if region else [],
            runner,
            warn=io.StringIO(),
        )
    except (CommandError, DocumentError):
        return None
    tables = document["tables"]
    if region:
        return _table_of_command(tables[0]) if tables else {"cells": []}
    return {"tables": [{"bbox": t["bbox"], **_table_of_command(t)} for t in tables]}


def pdfplumber_prediction(
    item: Item, folder: Path, runner: Any, *, settings: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """pdfplumber's ``extract_tables`` (its default settings: tables drawn with lines, or
    ``settings``) on a PDF item: the largest table in the box, or every table of the page
    (``find_tables``) with its box. Images have no text layer for it: None."""
    from hctqa.core.extraction.worker import PageError, PageTimeout, WorkerFailed

    if item.inputs["kind"] != "pdf":
        return None
    region = item.inputs["mode"] == "region"
    request = {
        "op": "pdfplumber_tables",
        "path": str(folder / item.inputs["file"]),
        "page": int(item.inputs["page"]),
        "bbox": list(item.inputs["bbox"]) if region else None,
        "settings": dict(settings or {}),
    }
    try:
        found = runner.call(request)
    except (PageError, PageTimeout, WorkerFailed):
        return None
    if region:
        return _rows_table(found[0][1]) if found else {"cells": []}
    return {
        "tables": [{"bbox": [round(v, 2) for v in box], **_rows_table(rows)} for box, rows in found]
    }
