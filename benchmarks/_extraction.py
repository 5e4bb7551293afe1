"""What the extraction benchmarks share: the platform's command line run in this process, its
JSON read as grids, the two libraries run beside it, and the extraction child's CPU time.

``ingest_icdar.py`` (the ICDAR 2013 competition's EU half, scans included) and
``ingest_peers.py`` (a peer tool's regression PDFs) both measure the platform only through
``python -m hctqa.core.extraction``, as ``../shared/docs/EXTRACTION.md`` says.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from hctqa.core.extraction.grid import Grid, GridCell, clean_text  # noqa: E402

Box = tuple[float, float, float, float]


def grid_of_json(table: dict) -> Grid:
    """One table of the command's JSON as a grid."""
    cells = (
        GridCell(c["row"], c["col"], c["rowspan"], c["colspan"], c["text"]) for c in table["cells"]
    )
    return Grid.build(table["rows"], table["cols"], cells)


def command(argv: list[str], runner: Any) -> dict:
    """The platform's command line, run in this process with ``runner`` (one extraction child
    for the whole run, as the ingest worker keeps one); its JSON."""
    from hctqa.core.extraction.__main__ import main

    out, said = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(said):
        status = main(argv, runner=runner)
    if status != 0:
        raise RuntimeError(f"the command failed on {argv}: {said.getvalue()}")
    return json.loads(out.getvalue())


def rows_grid(rows: list[list[str | None]]) -> Grid:
    """A library's table (a list of rows, no spans) as a grid."""
    n_cols = max((len(r) for r in rows), default=0)
    cells = (
        GridCell(r, c, 1, 1, clean_text(text or ""))
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
    )
    return Grid.build(len(rows), n_cols, cells)


def camelot_tables(pdf: Path, page: int, flavor: str = "stream", area: str | None = None) -> list:
    """camelot-py's tables on a page (``area``: ``"x0,y0,x1,y1"`` in PDF user space, origin
    at the bottom left); none when it fails, since a baseline that fails scores nothing."""
    import camelot

    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        kwargs = {"table_areas": [area]} if area else {}
        try:
            return list(camelot.read_pdf(str(pdf), pages=str(page), flavor=flavor, **kwargs))
        except Exception:  # noqa: BLE001 - a baseline that fails scores nothing
            return []


def cpu_seconds(runner: Any) -> float:
    """CPU time the extraction child has used (Linux): the figure a loaded machine does not
    inflate as it does the wall clock."""
    proc = runner.proc
    if proc is None:
        return 0.0
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_up(pdf: Path, runs: int = 7, *, cached: bool = True) -> tuple[float, float]:
    """``python -m hctqa.core.extraction PDF`` as a person runs it, from a fresh interpreter
    each time (start-up, imports, the extraction child, the page): the median wall-clock
    seconds of ``runs`` runs and the median CPU seconds (the command and its child). With
    ``cached``, Python keeps compiled modules as it does by default (PYTHONDONTWRITEBYTECODE
    unset, one run first to write them); otherwise the environment is used as it is."""
    env = dict(os.environ)
    if cached:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "hctqa.core.extraction", str(pdf)]

    def run() -> None:
        subprocess.run(  # noqa: S603 - this interpreter, our own module
            command, cwd=REPO, env=env, check=True, capture_output=True, timeout=120
        )

    run()  # warm: the operating system's file cache, and the compiled modules
    walls, cpus = [], []
    for _ in range(runs):
        before = os.times()
        started = time.monotonic()
        run()
        walls.append(time.monotonic() - started)
        after = os.times()
        cpus.append(
            after.children_user
            + after.children_system
            - before.children_user
            - before.children_system
        )
    return statistics.median(walls), statistics.median(cpus)
