"""Table extraction on a peer tool's regression PDFs (``../shared/data/peers-camelot/``:
camelot-py's test files with the grids its own tests expect), for the platform and two libraries
in one run.

    .venv/bin/python benchmarks/ingest_peers.py [--data DIR] [--cases]

``ingest_icdar.py`` runs it after the ICDAR set; alone, it reads ``DIR/peers-camelot/`` (default
``../shared/data``, or HCTQA_DATA_DIR), or ``DIR`` itself when it holds a ``cases.json`` (a
kept-back set measured the same way).

Each case of ``cases.json`` is a table: its file, 1-based page, a box (x0, top, x1, bottom,
origin top left) where the peer's test gives one, else ``null`` (the whole page), and the
expected grid as a list of rows. Only the **sound** cases (``expected_is_sound``) are scored;
the others' expected grids are faulty by the set's own README, and the right answer there is
what a careful person would type.

- **box given**: the cases with a box; the platform reads exactly that box (``--box``);
- **whole page**: the cases without one; the platform reads the page (``--page``), and the case
  is exact when one of the tables found there is.

A table is **exact** when its rows equal the expected rows once both are written as a list of
rows (a merged cell's text in its first position, the positions it covers empty), whitespace
runs made one space, and rows and columns left wholly empty dropped (the expected grids keep
some a frame's rules make). Beside the platform: camelot-py with the flavour the case's own test
uses (box: the box as ``table_areas``), and pdfplumber (box: ``extract_table`` with the text
strategies, as in ``ingest_icdar.py``; whole page: ``extract_tables`` with its default, the
ruling lines).

The last line reads ``peers <N> sound cases: box <k>/<n> exact; whole page <k>/<n> exact;
camelot box <k>/<n> page <k>/<n>; pdfplumber box <k>/<n> page <k>/<n>``.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _extraction import REPO, Box, camelot_tables, command, grid_of_json, rows_grid

from hctqa.core.extraction.grid import Grid, clean_text

DEFAULT_DATA = REPO.parent / "shared" / "data"
MAX_CASES_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class PeerCase:
    id: str
    pdf: Path
    page: int
    box: Box | None
    expected: tuple[tuple[str, ...], ...]
    flavor: str
    sound: bool


def folder_of(data: Path) -> Path:
    return data if (data / "cases.json").is_file() else data / "peers-camelot"


def read_cases(folder: Path) -> list[PeerCase]:
    path = folder / "cases.json"
    if path.stat().st_size > MAX_CASES_BYTES:
        raise ValueError(f"{path} is larger than {MAX_CASES_BYTES} bytes")
    cases = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        box = item.get("box")
        cases.append(
            PeerCase(
                id=str(item["id"]),
                pdf=folder / str(item["pdf"]),
                page=int(item["page"]),
                box=tuple(float(v) for v in box) if box else None,  # type: ignore[arg-type]
                expected=normal_rows(item["expected"]),
                flavor=str(item.get("camelot_flavor") or "stream"),
                sound=bool(item.get("expected_is_sound")),
            )
        )
    return cases


def normal_rows(rows: list[list[Any]]) -> tuple[tuple[str, ...], ...]:
    """Rows as the comparison reads them: texts with whitespace runs as one space, rows and
    columns with no text dropped."""
    texts = [[clean_text(str(t or "")) for t in row] for row in rows]
    texts = [row for row in texts if any(row)]
    width = max((len(r) for r in texts), default=0)
    texts = [row + [""] * (width - len(row)) for row in texts]
    keep = [c for c in range(width) if any(row[c] for row in texts)]
    return tuple(tuple(row[c] for c in keep) for row in texts)


def grid_rows(grid: Grid) -> tuple[tuple[str, ...], ...]:
    """A grid as the peer's list of rows: a merged cell's text in its first position only."""
    rows = [[""] * grid.n_cols for _ in range(grid.n_rows)]
    for cell in grid.cells:
        rows[cell.row][cell.col] = cell.text
    return normal_rows(rows)  # type: ignore[arg-type]


@dataclass
class PeerScores:
    """One system's exact cases, by mode."""

    name: str
    box: list[bool] = field(default_factory=list)
    page: list[bool] = field(default_factory=list)
    per_case: dict[str, bool] = field(default_factory=dict)

    def add(self, case: PeerCase, found: list[Grid]) -> None:
        exact = any(grid_rows(g) == case.expected for g in found)
        (self.box if case.box else self.page).append(exact)
        self.per_case[case.id] = exact

    def line(self) -> str:
        return (
            f"{self.name:28} box given {sum(self.box)}/{len(self.box)} exact  "
            f"whole page {sum(self.page)}/{len(self.page)} exact"
        )


def _area(case: PeerCase, height: float) -> str:
    assert case.box is not None
    x0, top, x1, bottom = case.box
    return f"{x0},{height - top},{x1},{height - bottom}"


def platform_tables(case: PeerCase, runner: Any) -> list[Grid]:
    if case.box:
        argv = [str(case.pdf), "--box", f"{case.page}:" + ",".join(f"{v:.2f}" for v in case.box)]
    else:
        argv = [str(case.pdf), "--page", str(case.page)]
    return [grid_of_json(t) for t in command(argv, runner)["tables"]]


def camelot_grids(case: PeerCase, height: float) -> list[Grid]:
    area = _area(case, height) if case.box else None
    found = camelot_tables(case.pdf, case.page, case.flavor, area)
    return [rows_grid(t.df.values.tolist()) for t in found]


def pdfplumber_grids(case: PeerCase) -> list[Grid]:
    import pdfplumber

    with pdfplumber.open(case.pdf) as document:
        page = document.pages[case.page - 1]
        if case.box:
            text = {"vertical_strategy": "text", "horizontal_strategy": "text"}
            rows = page.crop(case.box, strict=False).extract_table(text)
            return [rows_grid(rows)] if rows else []
        return [rows_grid(rows) for rows in page.extract_tables()]


@dataclass
class PeerRun:
    cases: list[PeerCase]
    systems: list[PeerScores]
    found: int  # tables the platform found on the whole-page cases' pages
    expected: int  # tables the set lists on those pages, sound or not


def run_peers(folder: Path, runner: Any, *, libraries: bool = True) -> PeerRun:
    """Every sound case of the folder through the platform (and the libraries)."""
    from hctqa.core.extraction.icdar import page_heights

    cases = read_cases(folder)
    platform = PeerScores("platform")
    camelot = PeerScores("camelot (the case's flavour)")
    plumber = PeerScores("pdfplumber")
    pages: dict[tuple[Path, int], int] = {}
    for case in cases:
        if not case.box:
            pages[(case.pdf, case.page)] = pages.get((case.pdf, case.page), 0) + 1
    found = 0
    for pdf, number in pages:
        argv = [str(pdf), "--page", str(number)]
        found += len(command(argv, runner)["tables"])
    for case in cases:
        if not case.sound:
            continue
        platform.add(case, platform_tables(case, runner))
        if libraries:
            height = page_heights(case.pdf)[case.page]
            camelot.add(case, camelot_grids(case, height))
            plumber.add(case, pdfplumber_grids(case))
    systems = [platform] + ([camelot, plumber] if libraries else [])
    return PeerRun(cases, systems, found, sum(pages.values()))


def report(run: PeerRun, folder: Path, *, per_case: bool = False) -> str:
    """Prints the set's figures; returns its summary line."""
    sound = [c for c in run.cases if c.sound]
    print(
        f"{folder}: {len(run.cases)} tables, {len(sound)} sound "
        f"({sum(1 for c in sound if c.box)} with a box, {sum(1 for c in sound if not c.box)} "
        "on the whole page)"
    )
    if per_case:
        for case in sound:
            marks = "  ".join(
                f"{s.name.split()[0]} {'exact' if s.per_case[case.id] else '-':5}"
                for s in run.systems
            )
            print(f"  {case.id:28} {'box ' if case.box else 'page'}  {marks}")
    for scores in run.systems:
        print(scores.line())
    print(
        f"platform, whole page: {run.found} tables found on the pages where the set lists "
        f"{run.expected}"
    )
    platform, *others = run.systems
    line = (
        f"peers {len(sound)} sound cases: box {sum(platform.box)}/{len(platform.box)} exact; "
        f"whole page {sum(platform.page)}/{len(platform.page)} exact"
    )
    for scores in others:
        line += (
            f"; {scores.name.split()[0]} box {sum(scores.box)}/{len(scores.box)} "
            f"page {sum(scores.page)}/{len(scores.page)}"
        )
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", DEFAULT_DATA)),
        help="the data folder holding peers-camelot/, or a folder holding cases.json",
    )
    parser.add_argument("--cases", action="store_true", help="print every case's result")
    parser.add_argument(
        "--no-libraries", action="store_true", help="the platform only (no baselines)"
    )
    args = parser.parse_args()
    from hctqa.core.extraction.__main__ import MEMORY_MB, PAGE_SECONDS
    from hctqa.core.extraction.worker import PageRunner

    folder = folder_of(args.data)
    with PageRunner(seconds=PAGE_SECONDS, memory_mb=MEMORY_MB) as runner:
        run = run_peers(folder, runner, libraries=not args.no_libraries)
    print(report(run, folder, per_case=args.cases))


if __name__ == "__main__":
    main()
