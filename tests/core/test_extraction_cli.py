"""``python -m hctqa.core.extraction`` run as a person runs it: a real PDF in, the contract's
JSON out (``EXTRACTION.md``); a bad file or bad arguments give a message on stderr and a
non-zero exit, with nothing on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hctqa.core.extraction.grid import Grid, GridCell
from hctqa.core.extraction.icdar import read_document
from hctqa.core.extraction.metrics import competition_form
from tests.conftest import DATA_DIR, REPO

ABSTRACT = DATA_DIR / "real-pdfs" / "12s0324.pdf"
EU_004 = DATA_DIR / "icdar2013-eu" / "eu-004.pdf"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hctqa.core.extraction", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _grid(table: dict) -> Grid:
    cells = (
        GridCell(c["row"], c["col"], c["rowspan"], c["colspan"], c["text"]) for c in table["cells"]
    )
    return Grid.build(table["rows"], table["cols"], cells)


def test_boxes_give_one_table_each_in_the_order_given() -> None:
    truths = read_document(EU_004)[:2]
    boxes = [f"{t.regions[0].page}:" + ",".join(str(v) for v in t.regions[0].bbox) for t in truths]
    done = run(EU_004, "--box", boxes[1], "--box", boxes[0])
    assert done.returncode == 0, done.stderr
    tables = json.loads(done.stdout)["tables"]
    assert [competition_form(_grid(t)) for t in tables] == [
        competition_form(truths[1].grid),
        competition_form(truths[0].grid),
    ]
    first = tables[0]
    assert {
        "page",
        "bbox",
        "rows",
        "cols",
        "cells",
        "header_rows",
        "header_cols",
        "title",
        "notes",
    } <= first.keys()
    assert first["bbox"] == list(truths[1].regions[0].bbox)
    assert all(c["text"] for c in first["cells"])  # empty cells are left out


def test_a_page_gives_every_table_with_title_and_notes() -> None:
    done = run(ABSTRACT, "--page", "1")
    assert done.returncode == 0, done.stderr
    tables = json.loads(done.stdout)["tables"]
    assert [t["title"][:10] for t in tables] == ["Table 324.", "Table 325."]
    assert tables[0]["notes"].startswith("– Represents zero.")
    assert (tables[0]["header_rows"], tables[0]["rows"], tables[0]["cols"]) == (2, 34, 10)
    assert tables[0]["canonical_csv"].startswith("Offense charged,__,Total,__,__,Male")
    corner = tables[0]["cells"][0]
    assert (corner["text"], corner["rowspan"], corner["flags"]) == (
        "Offense charged",
        2,
        ["span_without_rule"],
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"just some text\n", "neither a PDF nor a PNG or JPEG image"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "This PNG image is damaged"),
        (b"%PDF-1.7\n1 0 obj << >> endobj\n", "truncated"),
        (b"%PDF-1.7\ngarbage garbage\n%%EOF\n", "damaged"),
    ],
    ids=["text", "image", "truncated", "damaged"],
)
def test_a_bad_file_is_refused_with_a_message(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "upload.pdf"
    path.write_bytes(content)
    done = run(path)
    assert done.returncode == 1
    assert message in done.stderr
    assert done.stdout == ""


def test_a_missing_file_and_a_missing_page_are_refused(tmp_path: Path) -> None:
    missing = run(tmp_path / "nowhere.pdf")
    assert (missing.returncode, "no such file" in missing.stderr) == (1, True)
    far = run(ABSTRACT, "--page", "3")
    assert far.returncode == 1
    assert "has 1 page; there is no page 3" in far.stderr


@pytest.mark.parametrize("box", ["1:10,20,30", "0:1,2,3,4", "1:30,20,10,40", "x:1,2,3,4"])
def test_a_malformed_box_is_a_usage_error(box: str) -> None:
    done = run(ABSTRACT, "--box", box)
    assert done.returncode == 2
    assert "--box" in done.stderr


HEAVY = ("numpy", "scipy", "PIL", "pandas", "apted", "lxml", "tesserocr")


def test_the_command_and_a_text_page_load_only_what_they_need() -> None:
    """The command starts in a fraction of a second: its own process loads no PDF, picture
    or OCR library (its child does the reading), and a page with a text layer is read without
    the picture and OCR libraries a scan needs."""
    probe = (
        "import sys, json\n"
        "import hctqa.core.extraction.__main__\n"
        f"command = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY} + ('pdfplumber',"
        " 'pypdfium2') or m == 'hctqa.core.extraction.structure')\n"
        "import pdfplumber\n"
        "from hctqa.core.extraction.extract import read_tables\n"
        f"with pdfplumber.open({str(ABSTRACT)!r}) as document:\n"
        "    found = read_tables(document.pages[0], 1, None, 'auto', 'eng')\n"
        f"page = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY})\n"
        "print(json.dumps([command, page, len(found.tables)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[], [], 2]


def test_the_command_reads_its_childs_reply_without_the_extraction_rules() -> None:
    """The reply (``PageTables`` of ``Table`` values) is unpickled in the command's own
    process; it lives beside ``Table``, so reading it loads none of the rules, which would
    add their import to every call's end."""
    probe = (
        "import sys, io, json, contextlib\n"
        "from hctqa.core.extraction.__main__ import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    status = main([{str(ABSTRACT)!r}])\n"
        "rules = ('extract', 'detect', 'structure', 'lines', 'columns', 'rows', 'spans')\n"
        "loaded = sorted(m for m in sys.modules if m.rsplit('.', 1)[-1] in rules\n"
        "    and m.startswith('hctqa.core.extraction'))\n"
        "print(json.dumps([status, loaded, len(json.loads(out.getvalue())['tables'])]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [0, [], 2]
