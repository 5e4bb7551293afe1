"""Pages in a child process, so that a page that takes too long can be stopped.

pdfminer and PDFium cannot be interrupted from another thread, and a hostile or broken PDF
can keep them busy for minutes. ``PageRunner`` keeps one child process
(``python -m hctqa.core.extraction.worker``) and sends it one request at a time; when a
reply does not come within the time limit, the child is killed and the request fails with
``PageTimeout``. The next request starts a fresh child. The child also runs under a memory
limit, and reads files only: it writes nothing and reaches no network.

Requests and replies are pickles, each preceded by its length (8 bytes, big endian), on the
child's stdin and stdout; both ends are this module. A request is a dict with ``op``:

- ``{"op": "pdf_pages", "path"}`` → the page count (``documents.pdf_page_count``);
- ``{"op": "pdf_open", "path"}`` → the page count, from the document the next page requests
  read (the command line's way: no second PDF library to load), with PDFium's refusal for a
  file that cannot be opened;
- ``{"op": "page", "path", "page"}`` → ``pdf.PageExtraction`` with crops and page image
  (``needs_ocr`` when the page has no usable text);
- ``{"op": "scanned_page", "path", "page", "ocr_language"}`` → the same, read through OCR;
- ``{"op": "region", "path", "page", "bbox", "strategy", "ocr_language"}`` →
  ``(Candidate, crop PNG, OCR text)``, through OCR on a page without usable text;
- ``{"op": "image_open", "path", "max_pixels"}`` → ``(width, height)`` of a PNG or JPEG,
  decoded whole (``images.open_image``: the pixel limit, truncated and damaged files);
- ``{"op": "image_page", "path", "ocr_language", "max_pixels"}`` → ``pdf.PageExtraction`` of
  an image file (pixels); ``{"op": "image_region", … "bbox", "strategy"}`` → as ``region``;
- ``{"op": "html", "path"}`` → ``list[html.HtmlTable]``;
- ``{"op": "pdfplumber_tables", "path", "page", "bbox", "settings"}`` → pdfplumber's own
  tables (a baseline of the extraction track): ``[(bbox, rows)]``, every table of the page
  (``find_tables``), or the largest of ``extract_tables`` in ``bbox`` when one is given;
- ``{"op": "tables", "path", "page", "boxes", "strategy", "ocr_language"}`` →
  ``extract.PageTables`` (what the command line prints): one table per box, or every table of
  the page when boxes is None; a page without usable text is read through OCR when
  ``ocr_language`` is given;
- ``{"op": "image_tables", "path", "boxes", "strategy", "ocr_language", "max_pixels"}`` → the
  same for a PNG or JPEG image (one page, read through OCR, pixels).

A reply is ``("ok", value)`` or ``("error", code, message)``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

_HEADER = struct.Struct(">Q")
_STARTUP_SECONDS = 60.0
_REPO = Path(__file__).resolve().parents[3]


class PageTimeout(Exception):
    """The child took longer than the limit; it was stopped."""


class WorkerFailed(Exception):
    """The child died (out of memory, a crash in a PDF library)."""


class PageError(Exception):
    """The child reported a problem it understood (``code``, ``message``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _frame(value: object) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


class PageRunner:
    """One child process at a time, each request limited to ``seconds``."""

    def __init__(self, *, seconds: float, memory_mb: int = 0) -> None:
        self.seconds = seconds
        self.memory_mb = memory_mb
        self.proc: subprocess.Popen[bytes] | None = None
        self._ready = False  # the child said "ready"

    def __enter__(self) -> PageRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Starts the child without waiting for it: the first request waits until it is
        ready. A caller with work of its own to do meanwhile saves the child's start-up."""
        if self.proc is None or self.proc.poll() is not None:
            self._launch()

    def _launch(self) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONPATH": str(_REPO)}
        proc = subprocess.Popen(  # noqa: S603 - this interpreter, our own module
            [sys.executable, "-m", "hctqa.core.extraction.worker", str(self.memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=_REPO,
            env=env,
        )
        self.proc = proc
        self._ready = False
        return proc

    def _start(self) -> subprocess.Popen[bytes]:
        proc = self.proc if self.proc is not None and self.proc.poll() is None else None
        proc = proc or self._launch()
        if not self._ready:
            reply = self._read(proc, _STARTUP_SECONDS)
            if reply != ("ready",):
                self.close()
                raise WorkerFailed("the extraction process did not start")
            self._ready = True
        return proc

    def _read_exact(self, proc: subprocess.Popen[bytes], size: int, deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        remaining = size
        while remaining:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PageTimeout
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise PageTimeout
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                raise WorkerFailed(f"the extraction process stopped (exit code {proc.poll()})")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _read(self, proc: subprocess.Popen[bytes], seconds: float) -> Any:
        deadline = time.monotonic() + seconds
        size = _HEADER.unpack(self._read_exact(proc, _HEADER.size, deadline))[0]
        return pickle.loads(self._read_exact(proc, size, deadline))  # noqa: S301 - our child

    def call(self, request: dict[str, Any]) -> Any:
        """The child's answer to ``request``; ``PageTimeout``, ``WorkerFailed`` or
        ``PageError`` otherwise. After a timeout or a failure the child is gone."""
        alive = self.proc is not None and self.proc.poll() is None and self._ready
        proc = self.proc if alive else self._start()  # type: ignore[assignment]
        assert proc.stdin is not None
        try:
            proc.stdin.write(_frame(request))
            proc.stdin.flush()
            reply = self._read(proc, self.seconds)
        except (PageTimeout, WorkerFailed, BrokenPipeError) as exc:
            self.close()
            if isinstance(exc, BrokenPipeError):
                raise WorkerFailed("the extraction process stopped") from None
            raise
        if reply[0] == "ok":
            return reply[1]
        raise PageError(reply[1], reply[2])

    def close(self) -> None:
        proc, self.proc = self.proc, None
        self._ready = False
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


# --- The child ------------------------------------------------------------------------------


def _opened(documents: dict[str, Any], path: str) -> Any:
    """The pdfplumber document of ``path``, kept open for the requests on its pages."""
    if path not in documents:
        import pdfplumber

        for old in documents.values():
            old.close()
        documents.clear()
        documents[path] = pdfplumber.open(path)
    return documents[path]


def _page_count(documents: dict[str, Any], path: str) -> int:
    """The page count from the document the page requests will read (no second PDF library
    to load); one that cannot be opened so is refused with PDFium's reason."""
    from hctqa.core.extraction import documents as docs

    docs.check_pdf_file_end(Path(path))
    try:
        count = len(_opened(documents, path).pages)
    except Exception:  # noqa: BLE001 - a broken PDF raises anything; PDFium says what
        for old in documents.values():
            with contextlib.suppress(Exception):
                old.close()
        documents.clear()
        count = 0
    return count if count > 0 else docs.pdf_page_count(Path(path))


def _handle(request: dict[str, Any], documents: dict[str, Any]) -> Any:
    from hctqa.core.extraction import documents as docs

    op = request["op"]
    if op == "pdf_pages":
        return docs.pdf_page_count(Path(request["path"]))
    if op == "pdf_open":
        return _page_count(documents, request["path"])
    if op == "html":
        from hctqa.core.extraction.html import HtmlTableError, html_tables

        try:
            return html_tables(Path(request["path"]).read_bytes())
        except HtmlTableError as exc:
            raise docs.DocumentError("html_no_table", str(exc)) from None
    path = request["path"]
    if op.startswith("image_"):
        return _image(request)
    page = _opened(documents, path).pages[request["page"] - 1]
    try:
        if op == "tables":
            from hctqa.core.extraction.extract import DEFAULT_STRATEGY, read_tables

            return read_tables(
                page,
                request["page"],
                request.get("boxes"),
                request.get("strategy") or DEFAULT_STRATEGY,
                request.get("ocr_language"),
            )
        if op == "page":
            from hctqa.core.extraction import pdf

            return pdf.extract_page(page, request["page"])
        if op == "scanned_page":
            from hctqa.core.extraction.scanned import scanned_page

            return scanned_page(page, request["page"], request["ocr_language"])
        if op == "region":
            return _region(page, request)
        if op == "pdfplumber_tables":
            return _pdfplumber_tables(page, request.get("bbox"), request.get("settings") or {})
    finally:
        page.close()
    raise ValueError(f"unknown request {op!r}")


def _region(page: Any, request: dict[str, Any]) -> tuple[Any, bytes, str]:
    from hctqa.core.extraction import pdf
    from hctqa.core.extraction.ocr import needs_ocr

    bbox = tuple(request["bbox"])
    language = request.get("ocr_language")
    if language and needs_ocr(page):
        from hctqa.core.extraction.scanned import scanned_region

        return scanned_region(page, request["page"], bbox, request["strategy"], language)  # type: ignore[arg-type]
    candidate = pdf.region_candidate(page, request["page"], bbox, request["strategy"])  # type: ignore[arg-type]
    image, dpi = pdf.render_page(page)
    return candidate, pdf.crop_png(image, dpi, candidate.bbox), ""


def _pdfplumber_tables(
    page: Any, bbox: list[float] | None, settings: dict[str, Any]
) -> list[tuple[tuple[float, ...], list[list[str | None]]]]:
    if bbox is None:
        return [(tuple(t.bbox), t.extract()) for t in page.find_tables(settings)]
    found = page.crop(tuple(bbox), strict=False).extract_tables(settings)
    largest = max(found, key=lambda rows: sum(len(r) for r in rows), default=None)
    return [] if largest is None else [(tuple(bbox), largest)]


def _image(request: dict[str, Any]) -> Any:
    """The requests on an image file (PNG, JPEG): one page, read through OCR, in pixels."""
    from hctqa.core.extraction import scanned
    from hctqa.core.extraction.documents import DEFAULT_LANGUAGE
    from hctqa.core.extraction.extract import DEFAULT_STRATEGY, tables_of
    from hctqa.core.extraction.images import DEFAULT_MAX_PIXELS, open_image
    from hctqa.core.extraction.ocr import layout_from_image

    op, path = request["op"], request["path"]
    language = request.get("ocr_language") or DEFAULT_LANGUAGE
    max_pixels = request.get("max_pixels") or DEFAULT_MAX_PIXELS
    if op == "image_open":
        return open_image(path, max_pixels=max_pixels)[0].size
    if op == "image_page":
        return scanned.image_page(path, language, max_pixels)
    if op == "image_region":
        bbox = tuple(request["bbox"])
        return scanned.image_region(path, bbox, request["strategy"], language, max_pixels)  # type: ignore[arg-type]
    if op == "image_tables":
        gray, dpi = open_image(path, max_pixels=max_pixels)
        return tables_of(
            layout_from_image(gray, dpi, language),
            request.get("boxes"),
            request.get("strategy") or DEFAULT_STRATEGY,
        )
    raise ValueError(f"unknown request {op!r}")


def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    from hctqa.core.extraction.documents import DocumentError

    documents: dict[str, Any] = {}
    replies.write(_frame(("ready",)))
    replies.flush()
    while True:
        header = requests.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        body = requests.read(_HEADER.unpack(header)[0])
        request = pickle.loads(body)  # noqa: S301 - from the process that started us
        reply: tuple[Any, ...]
        try:
            reply = ("ok", _handle(request, documents))
        except DocumentError as exc:
            reply = ("error", exc.code, exc.message)
        except MemoryError:
            documents.clear()
            reply = ("error", "memory", "it needs more memory than extraction may use")
        except Exception as exc:  # noqa: BLE001 - a broken PDF raises anything; say what
            reply = ("error", "unreadable", f"it cannot be read ({type(exc).__name__}: {exc})")
        replies.write(_frame(reply))
        replies.flush()


def main() -> None:
    memory_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    if memory_mb > 0:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # Replies go to the original stdout; anything printed by a library goes to stderr.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    import pdfplumber  # noqa: F401 - imported before "ready", so no request pays for it

    _serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
