"""Tables from a PDF, as JSON on stdout. No database, no server:

    python -m hctqa.core.extraction FILE [--page N]... [--box N:X0,TOP,X1,BOTTOM]...

- ``--page N`` (repeatable, 1-based): find the tables on these pages (default: every page);
- ``--box N:x0,top,x1,bottom`` (repeatable): exactly one table from that region of page N,
  in PDF points with the origin at the top left. With any ``--box``, only the boxes are read,
  in the order given.

The output is ``{"tables": [...]}``, one ``Table.as_json()`` each (``EXTRACTION.md`` has the
contract). Each page is read in a child process under a time and memory limit, the same one
the ingest worker uses, calling the same functions (``extract.extract_page`` and
``extract.extract_box``) with the app's default strategy. An unreadable file, a page that
does not exist or a page over the limit ends the command with a message on stderr and exit
status 1; bad arguments with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from hctqa.core.extraction.documents import DocumentError
from hctqa.core.extraction.extract import DEFAULT_STRATEGY, STRATEGIES
from hctqa.core.extraction.worker import PageError, PageRunner, PageTimeout, WorkerFailed

PAGE_SECONDS = 60.0
MEMORY_MB = 2048


class CommandError(Exception):
    """A problem with the file or a page, said to the person who ran the command."""


def _box(value: str) -> tuple[int, tuple[float, float, float, float]]:
    try:
        page_part, coords = value.split(":", 1)
        page = int(page_part)
        x0, top, x1, bottom = (float(v) for v in coords.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not N:X0,TOP,X1,BOTTOM (a page number, a colon, four numbers)"
        ) from None
    if page < 1:
        raise argparse.ArgumentTypeError(f"page numbers start at 1, not {page}")
    if not (x1 > x0 and bottom > top):
        raise argparse.ArgumentTypeError(
            f"{value!r}: the box needs X1 > X0 and BOTTOM > TOP (origin at the top left)"
        )
    return page, (x0, top, x1, bottom)


def _page(value: str) -> int:
    try:
        page = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a page number") from None
    if page < 1:
        raise argparse.ArgumentTypeError(f"page numbers start at 1, not {page}")
    return page


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hctqa.core.extraction",
        description="Extract tables from a PDF; JSON on stdout.",
    )
    parser.add_argument("file", type=Path, help="a PDF")
    parser.add_argument(
        "--page",
        type=_page,
        action="append",
        default=[],
        metavar="N",
        help="find the tables on page N (1-based; repeatable; default every page)",
    )
    parser.add_argument(
        "--box",
        type=_box,
        action="append",
        default=[],
        metavar="N:X0,TOP,X1,BOTTOM",
        help="extract one table from this region of page N, in points from the top left "
        "(repeatable; only the boxes are read when any is given)",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=DEFAULT_STRATEGY,
        help=f"how a box's grid is found (default: {DEFAULT_STRATEGY}, the app's own)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=PAGE_SECONDS,
        help=f"time limit per page (default {PAGE_SECONDS:.0f})",
    )
    return parser


def _call(runner: PageRunner, request: dict[str, Any], what: str) -> Any:
    try:
        return runner.call(request)
    except PageTimeout:
        raise CommandError(
            f"{what} took longer than {runner.seconds:g} s and was stopped"
        ) from None
    except WorkerFailed as exc:
        raise CommandError(f"{what} stopped the PDF reader ({exc})") from None
    except PageError as exc:
        raise CommandError(f"{what}: {exc.message}") from None


_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")


def _check_kind(path: Path) -> None:
    """A PDF, judged by its content; anything else is refused with what it seems to be."""
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if not path.is_file():
        raise CommandError(f"{path}: not a file")
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise CommandError(f"{path}: cannot be read ({exc.strerror})") from None
    if head.startswith(_IMAGE_MAGIC):
        raise CommandError(
            f"{path}: this is an image; reading tables from images needs OCR, which this "
            "installation does not have"
        )
    if b"%PDF-" not in head:
        raise CommandError(f"{path}: not a PDF (judging by its content)")


def extract(
    path: Path,
    pages: Sequence[int],
    boxes: Sequence[tuple[int, tuple[float, float, float, float]]],
    runner: PageRunner,
    *,
    strategy: str = DEFAULT_STRATEGY,
    warn: IO[str] = sys.stderr,
) -> dict[str, Any]:
    """The command's JSON document for ``path``."""
    _check_kind(path)
    count = _call(runner, {"op": "pdf_pages", "path": str(path)}, str(path))
    wanted = [p for p, _ in boxes] if boxes else (list(pages) or list(range(1, count + 1)))
    missing = sorted({p for p in wanted if p > count})
    if missing:
        raise CommandError(
            f"{path} has {count} page{'s' * (count != 1)}; there is no page "
            + ", ".join(str(p) for p in missing)
        )
    tables: list[dict[str, Any]] = []
    if boxes:
        # Boxes in a row on one page are read together (the page is parsed once).
        groups: list[tuple[int, list[list[float]]]] = []
        for number, box in boxes:
            if groups and groups[-1][0] == number:
                groups[-1][1].append(list(box))
            else:
                groups.append((number, [list(box)]))
        for number, page_boxes in groups:
            request = {
                "op": "tables",
                "path": str(path),
                "page": number,
                "boxes": page_boxes,
                "strategy": strategy,
            }
            found = _call(runner, request, f"page {number}")
            tables += [t.as_json() for t in found.tables]
    else:
        for number in dict.fromkeys(wanted):
            request = {"op": "tables", "path": str(path), "page": number, "boxes": None}
            found = _call(runner, request, f"page {number}")
            if not found.has_text:
                print(
                    f"page {number} has no text layer (a scanned image): nothing was read from it",
                    file=warn,
                )
            tables += [t.as_json() for t in found.tables]
    return {"tables": tables}


def main(argv: Sequence[str] | None = None, *, runner: PageRunner | None = None) -> int:
    args = parser().parse_args(argv)
    own = runner is None
    runner = runner or PageRunner(seconds=args.seconds, memory_mb=MEMORY_MB)
    try:
        document = extract(args.file, args.page, args.box, runner, strategy=args.strategy)
    except (CommandError, DocumentError) as exc:
        print(
            f"{args.file}: {exc}" if isinstance(exc, DocumentError) else str(exc), file=sys.stderr
        )
        return 1
    finally:
        if own:
            runner.close()
    json.dump(document, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
