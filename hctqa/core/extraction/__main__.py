"""Tables from a PDF or an image, as JSON on stdout. No database, no server:

    python -m hctqa.core.extraction FILE [--page N]... [--box N:X0,TOP,X1,BOTTOM]...
        [--ocr-language CODE]

- ``FILE``: a PDF (with a text layer or scanned), or a PNG or JPEG image (one page);
- ``--page N`` (repeatable, 1-based): find the tables on these pages (default: every page);
- ``--box N:x0,top,x1,bottom`` (repeatable): exactly one table from that region of page N,
  in PDF points with the origin at the top left (pixels for an image). With any ``--box``,
  only the boxes are read, in the order given;
- ``--ocr-language CODE``: Tesseract's language for images and for PDF pages without usable
  text, which are read through OCR (``ocr``); the pages read so are named on stderr.

The output is ``{"tables": [...]}``, one ``Table.as_json()`` each (``EXTRACTION.md`` has the
contract). Each page is read in a child process under a time and memory limit, the same one
the ingest worker uses, calling the same functions (``extract.extract_page`` and
``extract.extract_box``) with the app's default strategy. The child starts first and loads
the PDF library while this process reads its arguments; this process loads no PDF, picture
or OCR library, and a page with a text layer loads no picture or OCR library either. An
unreadable file, a page that does not exist or a page over the limit ends the command with a
message on stderr and exit status 1; bad arguments with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

# Only what the command needs before its child process starts: the extraction runs in the
# child, which loads the PDF libraries while this process reads its arguments.
from hctqa.core.extraction.documents import DEFAULT_LANGUAGE, DocumentError
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
    from hctqa.core.extraction.table import DEFAULT_STRATEGY, STRATEGIES

    parser = argparse.ArgumentParser(
        prog="python -m hctqa.core.extraction",
        description="Extract tables from a PDF or an image; JSON on stdout.",
    )
    parser.add_argument("file", type=Path, help="a PDF, or a PNG or JPEG image (one page)")
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
        "(pixels for an image; repeatable; only the boxes are read when any is given)",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=DEFAULT_STRATEGY,
        help=f"how a box's grid is found (default: {DEFAULT_STRATEGY}, the app's own)",
    )
    parser.add_argument(
        "--ocr-language",
        default=DEFAULT_LANGUAGE,
        metavar="CODE",
        help="Tesseract's language for pages without a text layer and for images: eng, ara, "
        f"eng+ara, … (default {DEFAULT_LANGUAGE}; its data package must be installed)",
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


def _check_kind(path: Path) -> str:
    """``"pdf"`` or ``"image"`` (PNG, JPEG), judged by the content; anything else is refused
    with what it seems to be."""
    from hctqa.core.extraction.images import image_format

    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if not path.is_file():
        raise CommandError(f"{path}: not a file")
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise CommandError(f"{path}: cannot be read ({exc.strerror})") from None
    if image_format(head):
        return "image"
    if b"%PDF-" not in head:
        raise CommandError(
            f"{path}: neither a PDF nor a PNG or JPEG image (judging by its content)"
        )
    return "pdf"


def _runs(
    boxes: Sequence[tuple[int, tuple[float, float, float, float]]],
) -> list[tuple[int, list[list[float]]]]:
    """Consecutive boxes on the same page, together: the page is read once for them (OCR
    takes seconds), and the tables still come out in the order given."""
    runs: list[tuple[int, list[list[float]]]] = []
    for number, box in boxes:
        if runs and runs[-1][0] == number:
            runs[-1][1].append(list(box))
        else:
            runs.append((number, [list(box)]))
    return runs


def extract(
    path: Path,
    pages: Sequence[int],
    boxes: Sequence[tuple[int, tuple[float, float, float, float]]],
    runner: PageRunner,
    *,
    strategy: str | None = None,
    ocr_language: str | None = None,
    warn: IO[str] | None = None,
) -> dict[str, Any]:
    """The command's JSON document for ``path`` (with the app's default strategy and OCR
    language unless given); notes go to ``warn`` (stderr)."""
    from hctqa.core.extraction.table import DEFAULT_STRATEGY

    strategy = strategy or DEFAULT_STRATEGY
    ocr_language = ocr_language or DEFAULT_LANGUAGE
    warn = warn or sys.stderr  # looked up now: a caller may have redirected it
    kind = _check_kind(path)
    if kind == "image":
        count = 1
        base: dict[str, Any] = {"op": "image_tables", "path": str(path)}
    else:
        count = _call(runner, {"op": "pdf_open", "path": str(path)}, str(path))
        base = {"op": "tables", "path": str(path)}
    base["ocr_language"] = ocr_language
    wanted = [p for p, _ in boxes] if boxes else (list(pages) or list(range(1, count + 1)))
    missing = sorted({p for p in wanted if p > count})
    if missing:
        raise CommandError(
            f"{path} has {count} page{'s' * (count != 1)}; there is no page "
            + ", ".join(str(p) for p in missing)
        )
    tables: list[dict[str, Any]] = []
    through_ocr: list[int] = []
    requests = (
        [(n, {"page": n, "boxes": b, "strategy": strategy}) for n, b in _runs(boxes)]
        if boxes
        else [(n, {"page": n, "boxes": None}) for n in dict.fromkeys(wanted)]
    )
    for number, request in requests:
        found = _call(runner, {**base, **request}, f"page {number}")
        if found.source == "ocr" and number not in through_ocr:
            through_ocr.append(number)
        elif not found.has_text and not boxes:
            print(f"page {number} has no text: nothing was read from it", file=warn)
        tables += [t.as_json() for t in found.tables]
    if through_ocr:
        pages_read = ", ".join(str(n) for n in through_ocr)
        print(f"read through OCR ({ocr_language}): page {pages_read}", file=warn)
    return {"tables": tables}


def main(argv: Sequence[str] | None = None, *, runner: PageRunner | None = None) -> int:
    own = runner is None
    runner = runner or PageRunner(seconds=PAGE_SECONDS, memory_mb=MEMORY_MB)
    if own:
        runner.start()  # the child loads its libraries while the arguments are read
    try:
        args = parser().parse_args(argv)
        if own:
            runner.seconds = args.seconds
        document = extract(
            args.file,
            args.page,
            args.box,
            runner,
            strategy=args.strategy,
            ocr_language=args.ocr_language,
        )
    except (CommandError, DocumentError) as exc:
        print(
            f"{args.file}: {exc}" if isinstance(exc, DocumentError) else str(exc), file=sys.stderr
        )
        return 1
    finally:
        if own:
            runner.close()
    import json

    json.dump(document, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
