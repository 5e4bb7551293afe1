"""Writes of the ingest app: collections, uploads, extraction, and the review of candidates.

The web pages, the API, the ``ingest`` command and the Celery task all go through these.
Extraction itself (``hctqa.core.extraction``) runs in a child process per document
(``PageRunner``), each page under ``INGEST_PAGE_SECONDS``.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from dataset.models import (
    TABLE_NOTES_MAX_CHARS,
    TABLE_TITLE_MAX_CHARS,
    Collection,
    Table,
)
from dataset.services import table_create
from hctqa.core.extraction import documents as docs
from hctqa.core.extraction.grid import Grid, GridCell, clean_text
from hctqa.core.extraction.images import PNG, image_format
from hctqa.core.extraction.metrics import compare
from hctqa.core.extraction.pdf import STRATEGY_LINES, STRATEGY_MANUAL, STRATEGY_TEXT
from hctqa.core.extraction.table import FLAGS
from hctqa.core.extraction.worker import PageError, PageRunner, PageTimeout, WorkerFailed
from hctqa.core.hidden_text import CONTROL_SPACES, without_hidden
from ingest import files, selectors
from ingest.models import (
    Candidate,
    CandidateDraft,
    CandidateStatus,
    Document,
    DocumentKind,
    DocumentPage,
    DocumentStatus,
    PageStatus,
    Strategy,
)
from ingest.permissions import INGESTING
from plumbing.errors import ApplicationError, ConflictError
from plumbing.heartbeat import beating

NO_TABLE_MESSAGE = (
    "No table was found in this document. To add one, open a page below, draw a box around "
    "the table on the page image (drag with the mouse, or press n and move it with the arrow "
    "keys), then extract it."
)
NO_TEXT_MESSAGE = (
    "This page has no text layer (it is a scanned image), so nothing can be read from it. "
    "Draw a box around the table on the page image and type the table in the editor."
)
BLANK_MESSAGE = (
    "This page is blank: no text layer and no ink on it, so it was not read through OCR."
)
NO_TEXT_READ_MESSAGE = (
    "OCR ({language}) found no text on this page. If it holds a table in another language, "
    "set the collection's OCR language; or draw a box around the table and type it."
)
# What the review page may send: a grid of this size at most, cells of this length.
MAX_EDIT_POSITIONS = 100_000
MAX_CELL_CHARS = 5_000
_MAX_INT = 2**53


class UploadRefused(ApplicationError):
    """An upload that is not ingested; ``code`` names the case (``duplicate``, ``encrypted``,
    ``too_large``, …)."""

    def __init__(self, code: str, message: str, *, document: Document | None = None) -> None:
        super().__init__(message, field="file")
        self.code = code
        self.document = document


def _runner() -> PageRunner:
    return PageRunner(
        seconds=settings.INGEST_PAGE_SECONDS, memory_mb=settings.INGEST_WORKER_MEMORY_MB
    )


# --- Collections (made by dataset.services.collection_create) -----------------------------


def collection_find(*, name: str) -> Collection:
    """A collection by its code or its name (as the command takes it)."""
    found = Collection.objects.filter(Q(code=name) | Q(name__iexact=name)).first()
    if found is None:
        known = ", ".join(Collection.objects.order_by("code").values_list("code", flat=True))
        raise ApplicationError(
            f"no collection {name!r}; collections: {known or 'none'}. Create one at "
            "/ingest/collections/new/ or in the admin.",
            field="collection",
        )
    return found


# --- Uploads ----------------------------------------------------------------------------------
# The upload request only receives, hashes and stores the file, judging it by its bytes (size,
# kind, a PDF's end marker, seen before): nothing in it parses a PDF or HTML, which can take
# INGEST_PAGE_SECONDS and would hold a web worker. Opening the file is the ingest worker's job
# (``document_extract``); a file it cannot open is refused there, on the document's page.


@dataclass(frozen=True)
class Received:
    path: Path
    sha256: str
    size: int
    head: bytes
    tail: bytes


_HEAD_BYTES = 4096
_TAIL_BYTES = 2048


def _receive(chunks: Iterable[bytes]) -> Received:
    """The upload written to a private temporary file, at most INGEST_MAX_BYTES of it."""
    limit = settings.INGEST_MAX_BYTES
    path = files.incoming()
    digest = hashlib.sha256()
    size = 0
    head = tail = b""
    try:
        with open(path, "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise UploadRefused(
                        "too_large",
                        f"This file is larger than the limit of {limit:,} bytes "
                        "(INGEST_MAX_BYTES); split the document, or ask an admin to raise it.",
                    )
                if len(head) < _HEAD_BYTES:
                    head += chunk[: _HEAD_BYTES - len(head)]
                tail = (tail + chunk)[-_TAIL_BYTES:]
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size == 0:
        path.unlink(missing_ok=True)
        raise UploadRefused("empty", "This file is empty.")
    return Received(path, digest.hexdigest(), size, head, tail)


def _remembered_refusal(sha256: str) -> None:
    """The same bytes as a file the ingest worker refused lately: refused again at once, with
    the reason it had, and not read again (a refused file sent in a loop costs nothing)."""
    since = timezone.now() - timedelta(seconds=settings.INGEST_REFUSED_MEMORY_SECONDS)
    refused = (
        Document.objects.select_related("collection")
        .filter(sha256=sha256, status=DocumentStatus.REFUSED, finished_at__gte=since)
        .order_by("-finished_at")
        .first()
    )
    if refused is not None:
        raise UploadRefused(
            refused.refused_code,
            f"{refused.message} (This same file was refused as document "
            f"{refused.collection.code}--{refused.number} on "
            f"{refused.finished_at:%Y-%m-%d %H:%M} UTC; it is not read again for now.)",
            document=refused,
        )


def _duplicate(sha256: str) -> None:
    existing = (
        Document.objects.select_related("collection")
        .filter(sha256=sha256)
        .exclude(status=DocumentStatus.REFUSED)
        .first()
    )
    if existing is not None:
        raise UploadRefused(
            "duplicate",
            f"This file was already ingested as document {existing.collection.code}--"
            f"{existing.number} ({existing.file_name}, {existing.collection.name}); it is not "
            "ingested again.",
            document=existing,
        )


def _kind_of(received: Received) -> str:
    """PDF, HTML or a PNG/JPEG image by the first bytes; a PDF must end with its end marker.
    No parsing: a picture is decoded by the ingest worker."""
    try:
        kind = docs.sniff(received.head)
        if kind == DocumentKind.PDF:
            docs.check_pdf_bytes_end(received.tail)
    except docs.DocumentError as exc:
        raise UploadRefused(exc.code, exc.message) from None
    return kind


def _suffix(kind: str, head: bytes) -> str:
    if kind == DocumentKind.IMAGE:
        return "png" if image_format(head) == PNG else "jpg"
    return kind


def _next_document_number(collection: Collection) -> int:
    """After the collection's documents and the document numbers of its existing table ids
    (the release's tables are ``psa--<document>--<n>`` too)."""
    used = Document.objects.filter(collection=collection).aggregate(n=Max("number"))["n"] or 0
    prefix = f"{collection.code}--"
    for table_id in Table.objects.filter(id__startswith=prefix).values_list("id", flat=True):
        number = table_id[len(prefix) :].split("--", 1)[0]
        if number.isdigit():
            used = max(used, int(number))
    return used + 1


def _enqueue(document_id: int, countdown: float = 0) -> None:
    from ingest.tasks import extract_document

    if countdown > 0:
        extract_document.apply_async((document_id,), countdown=countdown)
    else:
        extract_document.delay(document_id)


def document_upload(
    *,
    user: Any,
    collection: Collection,
    file_name: str,
    chunks: Iterable[bytes],
    enqueue: bool = True,
) -> Document:
    """Keep an uploaded file and queue it for the ingest worker; or refuse it, keeping nothing.

    Refused here, each with its own message (``UploadRefused.code``): over the byte limit,
    empty, neither PDF, HTML nor a PNG or JPEG image by content (another picture format is
    named), a PDF cut short, a file already ingested (which says which document it is), and a
    file the worker refused within INGEST_REFUSED_MEMORY_SECONDS (with that refusal's reason).
    What needs the file opened (encrypted, damaged, too many pages, a web page without a
    table, a picture over INGEST_MAX_IMAGE_PIXELS, truncated or damaged) is refused by the
    worker, on the document's page.
    """
    if user is not None:  # None: the ingest command, run by whoever runs the server
        INGESTING.check(user)
    received = _receive(chunks)
    stored = ""
    try:
        _remembered_refusal(received.sha256)
        _duplicate(received.sha256)
        kind = _kind_of(received)
        name = without_hidden(Path(file_name or "document").name)[:255] or "document"
        stored = f"documents/{received.sha256}.{_suffix(kind, received.head)}"
        target = files.path_of(stored)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(received.path, target)
        with transaction.atomic():
            locked = Collection.objects.select_for_update().get(pk=collection.pk)
            document = Document.objects.create(
                collection=locked,
                number=_next_document_number(locked),
                kind=kind,
                file_name=name,
                sha256=received.sha256,
                size_bytes=received.size,
                stored_path=stored,
                uploaded_by=user,
                queued_at=timezone.now(),
            )
            if enqueue:
                transaction.on_commit(lambda: _enqueue(document.pk))
    except IntegrityError:
        # The same file, uploaded at the same moment by someone else, won the race.
        files.remove(stored)
        _duplicate(received.sha256)
        raise
    except BaseException:
        received.path.unlink(missing_ok=True)
        if stored:
            files.remove(stored)
        raise
    return document


# --- Extraction -------------------------------------------------------------------------------


def _stale_before() -> datetime:
    return timezone.now() - timedelta(seconds=settings.INGEST_STALE_SECONDS)


def _claim(document_id: int) -> bool:
    """Take the document for extraction: queued, or extracting with a stale heartbeat (its
    worker died). Two workers never extract the same document at once."""
    now = timezone.now()
    return bool(
        Document.objects.filter(pk=document_id)
        .filter(
            Q(status=DocumentStatus.QUEUED)
            | Q(status=DocumentStatus.EXTRACTING, heartbeat_at__lt=_stale_before())
        )
        .update(
            status=DocumentStatus.EXTRACTING,
            started_at=now,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            message="",  # a wait it was handed back with is over
        )
    )


def _grid_json(grid: Grid) -> dict[str, Any]:
    return grid.as_json()


def _extracted(found: Any) -> dict[str, Any]:
    """A candidate's fields from what extraction found (``pdf.Candidate`` or a web page's
    table): grid, boxes, title, notes and the cells' flags. A runaway title or notes (a
    whole page of text read as a caption) is cut to what a table keeps. Hidden characters
    (a NUL, a right-to-left override) are dropped, here as in what an editor types."""
    grid = Grid(
        found.grid.n_rows,
        found.grid.n_cols,
        tuple(
            replace(c, text=without_hidden(c.text, allowed=CONTROL_SPACES))
            for c in found.grid.cells
        ),
    )
    return {
        "strategy": found.strategy,
        "bbox": list(found.bbox) if found.bbox else None,
        "cell_boxes": [list(b) for b in found.cell_boxes],
        "machine_grid": _grid_json(grid),
        "machine_csv": grid.to_canonical(),
        "title": _plain(found.title)[:TABLE_TITLE_MAX_CHARS],
        "notes": without_hidden(found.notes, allowed=CONTROL_SPACES).strip()[
            :TABLE_NOTES_MAX_CHARS
        ],
        "cell_flags": [[row, col, list(flags)] for row, col, flags in found.cell_flags],
    }


def _new_candidates(
    document: Document,
    page: int | None,
    found: list[tuple[Any, bytes]],
    ocr_texts: Sequence[str] = (),
) -> int:
    """Create candidates numbered after the document's last (its row must be locked)."""
    last = document.candidates.aggregate(n=Max("number"))["n"] or 0
    texts = list(ocr_texts) + [""] * (len(found) - len(ocr_texts))
    for k, ((candidate, crop), ocr_text) in enumerate(zip(found, texts, strict=True), start=1):
        number = last + k
        crop_path = ""
        if crop:
            crop_path = f"crops/{document.pk}/{number}-1.png"
            files.write(crop_path, crop)
        Candidate.objects.create(
            document=document,
            number=number,
            page=page,
            crop_path=crop_path,
            **_extracted(candidate),
            ocr_text=without_hidden(ocr_text, allowed=CONTROL_SPACES),
        )
    return len(found)


def _finish_page(document_id: int, number: int, **fields: Any) -> None:
    DocumentPage.objects.filter(document_id=document_id, number=number).update(
        finished_at=timezone.now(), **fields
    )
    Document.objects.filter(pk=document_id).update(
        pages_done=F("pages_done") + 1, heartbeat_at=timezone.now()
    )


def _too_slow() -> UploadRefused:
    return UploadRefused(
        "too_slow",
        f"Opening this file took longer than {settings.INGEST_PAGE_SECONDS} s "
        "(INGEST_PAGE_SECONDS), so it was stopped; it may be damaged or built to be slow.",
    )


def _opened(runner: PageRunner, request: dict[str, Any]) -> Any:
    """The child's answer to a request that opens the whole file, or ``UploadRefused``."""
    try:
        return runner.call(request)
    except PageError as exc:
        raise UploadRefused(exc.code, exc.message) from None
    except PageTimeout:
        raise _too_slow() from None
    except WorkerFailed as exc:
        raise UploadRefused("corrupt", f"This file could not be read: {exc}.") from None


def _refuse(document_id: int, refusal: UploadRefused) -> None:
    """The file could not be opened: the document says why, and keeps no file, page or
    candidate; its bytes are refused at upload for INGEST_REFUSED_MEMORY_SECONDS."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document_id)
        if locked.status != DocumentStatus.EXTRACTING:
            return
        stored = locked.stored_path
        locked.candidates.all().delete()
        locked.pages.all().delete()
        now = timezone.now()
        Document.objects.filter(pk=document_id).update(
            status=DocumentStatus.REFUSED,
            refused_code=refusal.code,
            message=refusal.message,
            page_count=None,
            pages_done=0,
            stored_path="",
            finished_at=now,
            heartbeat_at=now,
        )
    files.remove(stored)


def _open_pdf(runner: PageRunner, document: Document) -> None:
    """Count the PDF's pages and make its page rows (once; a second attempt finds them)."""
    path = str(files.path_of(document.stored_path))
    pages = int(_opened(runner, {"op": "pdf_pages", "path": path}))
    if pages > settings.INGEST_MAX_PAGES:
        raise UploadRefused(
            "too_many_pages",
            f"This PDF has {pages:,} pages, more than the limit of "
            f"{settings.INGEST_MAX_PAGES:,} (INGEST_MAX_PAGES); split it into parts.",
        )
    _add_pages(document, pages)


def _add_pages(document: Document, pages: int) -> None:
    """The document's page rows, made once: a second attempt finds them."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.page_count is not None:
            return
        DocumentPage.objects.bulk_create(
            DocumentPage(document=locked, number=n) for n in range(1, pages + 1)
        )
        Document.objects.filter(pk=document.pk).update(page_count=pages)


def _open_image(runner: PageRunner, document: Document) -> None:
    """Decode the picture whole (the pixel limit, truncated and damaged files) and make its
    one page row (once)."""
    path = str(files.path_of(document.stored_path))
    _opened(
        runner,
        {"op": "image_open", "path": path, "max_pixels": settings.INGEST_MAX_IMAGE_PIXELS},
    )
    _add_pages(document, 1)


def _call_page(runner: PageRunner, request: dict[str, Any], what: str) -> tuple[Any | None, str]:
    """The child's reading of a page, or None and what went wrong, said for the page."""
    try:
        return runner.call(request), ""
    except PageTimeout:
        return None, (
            f"{what} took longer than {settings.INGEST_PAGE_SECONDS} s (INGEST_PAGE_SECONDS) "
            "and was stopped; draw a box on it to extract a region."
        )
    except WorkerFailed as exc:
        return None, f"{what} stopped the reader ({exc})."
    except PageError as exc:
        return None, f"{what} could not be done: {exc.message}"


def _read_page(
    runner: PageRunner, document: Document, page: DocumentPage
) -> tuple[Any | None, Any | None, str]:
    """(the page as read, what it shows when OCR failed on it, the problem). A PDF page
    without usable text is read again through OCR in the collection's language, as is an
    image file; a time limit reached by OCR says so."""
    path = str(files.path_of(document.stored_path))
    language = document.collection.ocr_language
    if document.kind == DocumentKind.IMAGE:
        request = {
            "op": "image_page",
            "path": path,
            "ocr_language": language,
            "max_pixels": settings.INGEST_MAX_IMAGE_PIXELS,
        }
        result, problem = _call_page(runner, request, f"Reading the image through OCR ({language})")
        return result, None, problem
    request = {"op": "page", "path": path, "page": page.number}
    result, problem = _call_page(runner, request, f"Page {page.number}")
    if result is None or not result.needs_ocr or result.blank:
        return result, None, problem
    request = {"op": "scanned_page", "path": path, "page": page.number, "ocr_language": language}
    what = f"Reading page {page.number} through OCR ({language})"
    scanned, problem = _call_page(runner, request, what)
    return scanned, (result if scanned is None else None), problem


def _extract_pdf_page(runner: PageRunner, document: Document, page: DocumentPage) -> None:
    """One page of a PDF or an image file: its candidates, crops and page image."""
    started = time.monotonic()
    result, shown, message = _read_page(runner, document, page)
    seconds = time.monotonic() - started
    if result is None:
        fields: dict[str, Any] = {}
        if shown is not None:  # OCR failed: the page can still be drawn on and typed in
            fields = {"width": shown.width, "height": shown.height}
            fields["image_path"] = f"pages/{document.pk}/{page.number}.jpg"
            files.write(fields["image_path"], shown.page_image)
        with transaction.atomic():
            Document.objects.select_for_update().get(pk=document.pk)
            if DocumentPage.objects.filter(pk=page.pk, status=PageStatus.PENDING).exists():
                _finish_page(
                    document.pk,
                    page.number,
                    status=PageStatus.FAILED,
                    message=message,
                    seconds=seconds,
                    **fields,
                )
        return
    image_path = f"pages/{document.pk}/{page.number}.jpg"
    files.write(image_path, result.page_image)
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if not DocumentPage.objects.filter(pk=page.pk, status=PageStatus.PENDING).exists():
            return  # done by an earlier attempt
        found = list(zip(result.candidates, result.crops, strict=True))
        _new_candidates(locked, page.number, found, result.ocr_texts)
        if result.blank:
            status, message = PageStatus.NO_TEXT, BLANK_MESSAGE
        elif not result.has_text:
            status, message = PageStatus.NO_TEXT, NO_TEXT_MESSAGE
            if result.ocr_language:
                message = NO_TEXT_READ_MESSAGE.format(language=result.ocr_language)
        else:
            status = PageStatus.DONE
            message = "" if found else "No table found on this page."
        _finish_page(
            document.pk,
            page.number,
            status=status,
            message=message,
            width=result.width,
            height=result.height,
            seconds=seconds,
            image_path=image_path,
            ocr_language=result.ocr_language,
        )


def _extract_html(runner: PageRunner, document: Document) -> None:
    """A web page is opened and read in one step: its tables, or a refusal (no table, too
    slow). Its one page and its candidates are written together."""
    if document.page_count is not None:
        return  # read by an earlier attempt
    started = time.monotonic()
    path = str(files.path_of(document.stored_path))
    tables = _opened(runner, {"op": "html", "path": path})
    notes: list[str] = []
    found: list[tuple[Any, bytes]] = []
    for table in tables:
        if table.skipped_reason:
            notes.append(table.skipped_reason)
            continue
        found.append((_HtmlCandidate(table.grid), b""))
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.page_count is not None:
            return
        DocumentPage.objects.create(
            document=locked,
            number=1,
            status=PageStatus.DONE,
            message=" ".join(notes),
            seconds=time.monotonic() - started,
            finished_at=timezone.now(),
        )
        _new_candidates(locked, None, found)
        Document.objects.filter(pk=document.pk).update(
            page_count=1, pages_done=1, heartbeat_at=timezone.now()
        )


@dataclass(frozen=True)
class _HtmlCandidate:
    grid: Grid
    strategy: str = Strategy.HTML
    bbox: tuple[float, ...] | None = None
    cell_boxes: tuple[tuple[float, ...], ...] = ()
    title: str = ""
    notes: str = ""
    cell_flags: tuple[tuple[int, int, tuple[str, ...]], ...] = ()


def _beat(document_id: int) -> int:
    return Document.objects.filter(pk=document_id, status=DocumentStatus.EXTRACTING).update(
        heartbeat_at=timezone.now()
    )


def _give_way(document: Document, *, worked: float) -> tuple[float, str] | None:
    """Whether this extraction stops for now, and for how long (seconds) and why: its
    uploader has used the hour's ingest budget (INGEST_SECONDS_PER_HOUR), or someone who has
    used less of the hour has a document waiting (more than a slice less, so two people's
    documents take turns a slice at a time, INGEST_SLICE_SECONDS). None: go on."""
    now = timezone.now()
    owner = document.uploaded_by_id
    budget = selectors.ingest_budget(user_id=owner, now=now)
    if budget.used_up and budget.resumes_at is not None:
        wait = max(1.0, (budget.resumes_at - now).total_seconds())
        at = timezone.localtime(budget.resumes_at).strftime("%H:%M")
        return wait, (
            f"Waiting: its uploader's ingest work for this hour ({budget.limit:,} s, "
            f"INGEST_SECONDS_PER_HOUR) is used; its pages go on at about {at}."
        )
    others = selectors.waiting_uploaders(excluding=document)
    if not others:
        return None
    used = selectors.seconds_used(user_ids=[owner, *others], now=now)
    slice_seconds = settings.INGEST_SLICE_SECONDS
    their_turn = any(used[o] + slice_seconds < used[owner] for o in others)
    if their_turn and (worked == 0 or worked >= slice_seconds):
        return 0.0, "Queued: another person's document is being read first, in turn."
    return None


def _hand_back(document_id: int, wait: float, message: str) -> None:
    """Put an extraction back in the queue (its pages done stay done), to go on after
    ``wait`` seconds; the sweeper leaves it alone until then."""
    now = timezone.now()
    with transaction.atomic():
        if Document.objects.filter(pk=document_id, status=DocumentStatus.EXTRACTING).update(
            status=DocumentStatus.QUEUED,
            queued_at=now + timedelta(seconds=wait),
            heartbeat_at=now,
            message=message,
            # Giving way is no failed attempt: the sweeper counts only those.
            attempts=F("attempts") - 1,
        ):
            transaction.on_commit(lambda: _enqueue(document_id, countdown=wait))


def document_extract(*, document_id: int, shared: bool = True) -> str:
    """Open the document (refusing it if it cannot be read), then extract every page not yet
    done, recording each as it finishes (the ingest task's body; the ``ingest`` command runs
    it too). Safe to run again: pages done by an earlier attempt are skipped.

    The worker is ``shared`` fairly: before each page the extraction gives way (goes back in
    the queue, to go on later) when its uploader's hour of ingest work is used up, or when
    someone who has used less of the hour has a document waiting (``_give_way``). The
    ``ingest`` command, reading a file in its own process, does not share (``shared=False``)."""
    if not _claim(document_id):
        return "not claimed"
    document = Document.objects.select_related("collection").get(pk=document_id)
    if shared and (wait := _give_way(document, worked=0)) is not None:
        _hand_back(document_id, *wait)
        return DocumentStatus.QUEUED
    if not files.path_of(document.stored_path).is_file():
        # Not the file's fault (a worker without the web hosts' INGEST_FILES_ROOT): failed,
        # not refused, so the same file may be sent again once the worker is fixed.
        Document.objects.filter(pk=document_id, status=DocumentStatus.EXTRACTING).update(
            status=DocumentStatus.FAILED,
            message="The ingest worker cannot find the uploaded file: it needs the web "
            "server's INGEST_FILES_ROOT. Once that is fixed, an admin deletes this document "
            "(in the admin) and the file can be uploaded again.",
            finished_at=timezone.now(),
        )
        return DocumentStatus.FAILED
    with beating(lambda: _beat(document_id), f"document-{document_id}"), _runner() as runner:
        try:
            if document.kind == DocumentKind.HTML:
                _extract_html(runner, document)
            elif document.page_count is None and document.kind == DocumentKind.IMAGE:
                _open_image(runner, document)
            elif document.page_count is None:
                _open_pdf(runner, document)
        except UploadRefused as refusal:
            _refuse(document_id, refusal)
            return DocumentStatus.REFUSED
        if document.kind != DocumentKind.HTML:
            started = time.monotonic()
            for page in document.pages.filter(status=PageStatus.PENDING).order_by("number"):
                worked = time.monotonic() - started
                if shared and worked and (wait := _give_way(document, worked=worked)):
                    _hand_back(document_id, *wait)
                    return DocumentStatus.QUEUED
                _extract_pdf_page(runner, document, page)
    pages = list(document.pages.values_list("status", "message"))
    failed = [m for s, m in pages if s == PageStatus.FAILED]
    has_candidates = document.candidates.exists()
    if failed and len(failed) == len(pages):
        status, message = DocumentStatus.FAILED, " ".join(failed)
    else:
        status = DocumentStatus.DONE
        message = "" if has_candidates else NO_TABLE_MESSAGE
        if failed:
            message = " ".join([*failed, message]).strip()
    Document.objects.filter(pk=document_id, status=DocumentStatus.EXTRACTING).update(
        status=status, message=message, finished_at=timezone.now(), heartbeat_at=timezone.now()
    )
    return status


def _enqueue_scoring(candidate_id: int) -> None:
    from ingest.tasks import score_candidate

    score_candidate.delay(candidate_id)


def candidate_score(*, candidate_id: int) -> float | None:
    """TEDS of an accepted candidate's machine extraction against the accepted table (the
    task's body); nothing to do when it is already there."""
    candidate = Candidate.objects.filter(pk=candidate_id, status=CandidateStatus.ACCEPTED).first()
    if candidate is None or candidate.teds is not None:
        return candidate.teds if candidate else None
    value = compare(candidate.machine_csv, candidate.accepted_csv).teds
    Candidate.objects.filter(pk=candidate_id, teds__isnull=True).update(teds=value)
    return value


def documents_sweep() -> int:
    """Queue again the extractions whose worker died (heartbeat older than
    INGEST_STALE_SECONDS) or whose message seems lost (queued for INGEST_QUEUED_RESEND_SECONDS);
    fail those that stopped INGEST_MAX_ATTEMPTS times (beat, on the sweeps queue). Conditional
    updates: two sweepers never both act on one document."""
    now = timezone.now()
    resend = now - timedelta(seconds=settings.INGEST_QUEUED_RESEND_SECONDS)
    stuck_condition = Q(status=DocumentStatus.EXTRACTING, heartbeat_at__lt=_stale_before()) | Q(
        status=DocumentStatus.QUEUED, queued_at__lt=resend
    )
    queued = 0
    for pk, attempts in Document.objects.filter(stuck_condition).values_list("pk", "attempts"):
        still_stuck = Document.objects.filter(stuck_condition, pk=pk)
        if attempts >= settings.INGEST_MAX_ATTEMPTS:
            still_stuck.update(
                status=DocumentStatus.FAILED,
                message=f"Extraction stopped {attempts} times without finishing; "
                "the pages done so far keep their tables.",
                finished_at=now,
            )
            continue
        with transaction.atomic():
            if still_stuck.update(status=DocumentStatus.QUEUED, queued_at=now):
                transaction.on_commit(lambda pk=pk: _enqueue(pk))
                queued += 1
    # Scores whose task was lost: sent again once per INGEST_QUEUED_RESEND_SECONDS at most
    # (the cache remembers the sending), not at every sweep while a long extraction runs.
    unscored = Candidate.objects.filter(
        status=CandidateStatus.ACCEPTED, teds__isnull=True, decided_at__lt=resend
    ).values_list("pk", flat=True)
    for candidate_id in unscored:
        if cache.add(
            f"ingest-score-resent:{candidate_id}", 1, settings.INGEST_QUEUED_RESEND_SECONDS
        ):
            _enqueue_scoring(candidate_id)
    return queued


# --- Reviewing candidates ---------------------------------------------------------------------


@dataclass(frozen=True)
class EditState:
    """What the review page edits: the grid, the header marks, the title and the notes."""

    grid: Grid
    header_rows: int
    header_columns: int
    title: str = ""
    notes: str = ""


def _whole(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApplicationError(f"{name} should be a whole number from {low} to {high}")
    return value


def edit_state(data: Mapping[str, Any]) -> EditState:
    """The review page's grid, checked: sizes, spans inside the grid, no overlaps."""
    if not isinstance(data, Mapping):
        raise ApplicationError("the table should be an object with n_rows, n_cols and cells")
    n_rows = _whole(data.get("n_rows"), "n_rows", 1, MAX_EDIT_POSITIONS)
    n_cols = _whole(data.get("n_cols"), "n_cols", 1, MAX_EDIT_POSITIONS)
    if n_rows * n_cols > MAX_EDIT_POSITIONS:
        raise ApplicationError(f"a table has at most {MAX_EDIT_POSITIONS:,} cells")
    raw = data.get("cells")
    if not isinstance(raw, list) or len(raw) > n_rows * n_cols:
        raise ApplicationError("cells should be a list of [row, col, rowspan, colspan, text]")
    cells: list[GridCell] = []
    taken: set[tuple[int, int]] = set()
    for item in raw:
        if not (isinstance(item, list) and len(item) == 5 and isinstance(item[4], str)):
            raise ApplicationError("each cell should be [row, col, rowspan, colspan, text]")
        row = _whole(item[0], "a cell's row", 0, n_rows - 1)
        col = _whole(item[1], "a cell's column", 0, n_cols - 1)
        rowspan = _whole(item[2], "a cell's rowspan", 1, n_rows - row)
        colspan = _whole(item[3], "a cell's colspan", 1, n_cols - col)
        if len(item[4]) > MAX_CELL_CHARS:
            raise ApplicationError(f"a cell holds at most {MAX_CELL_CHARS:,} characters")
        cell = GridCell(row, col, rowspan, colspan, _plain(item[4]))
        spots = set(cell.positions())
        if spots & taken:
            raise ApplicationError(f"cells overlap at row {row + 1}, column {col + 1}")
        taken |= spots
        cells.append(cell)
    _check_flags(data.get("flags", []), n_rows, n_cols)
    return EditState(
        grid=Grid.build(n_rows, n_cols, cells),
        header_rows=_whole(data.get("header_rows", 1), "header_rows", 0, n_rows),
        header_columns=_whole(data.get("header_columns", 1), "header_columns", 0, n_cols),
        title=_text(data.get("title", ""), "title", TABLE_TITLE_MAX_CHARS, one_line=True),
        notes=_text(data.get("notes", ""), "notes", TABLE_NOTES_MAX_CHARS, one_line=False),
    )


def _text(value: Any, name: str, limit: int, *, one_line: bool) -> str:
    """The title (one line) or the notes (lines kept, each trimmed), at most ``limit``
    characters once cleaned."""
    if not isinstance(value, str):
        raise ApplicationError(f"the {name} should be text", field=name)
    text = _plain(value) if one_line else _notes(value)
    if len(text) > limit:
        raise ApplicationError(
            f"the {name} has {len(text):,} characters; at most {limit:,} are kept: shorten it",
            field=name,
        )
    return text


def _plain(text: str) -> str:
    """One line of visible text: a cell or a title."""
    return clean_text(without_hidden(text, allowed=CONTROL_SPACES))


def _notes(text: str) -> str:
    """Lines of visible text, each trimmed."""
    lines = (
        " ".join(line.split()) for line in without_hidden(text, allowed=CONTROL_SPACES).splitlines()
    )
    return "\n".join(lines).strip()


def _visible_json(value: Any) -> Any:
    """A draft as the editor sent it, but for hidden characters in its texts."""
    if isinstance(value, str):
        return without_hidden(value, allowed=CONTROL_SPACES)
    if isinstance(value, list):
        return [_visible_json(v) for v in value]
    if isinstance(value, dict):
        return {without_hidden(str(k)): _visible_json(v) for k, v in value.items()}
    return value


def _check_flags(value: Any, n_rows: int, n_cols: int) -> None:
    """The marks the review page keeps with its draft: [row, col, [flag, …]] in the grid."""
    if not isinstance(value, list) or len(value) > n_rows * n_cols:
        raise ApplicationError("flags should be a list of [row, col, [flag, …]]")
    for item in value:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[2], list)
            and all(isinstance(flag, str) and flag in FLAGS for flag in item[2])
        ):
            raise ApplicationError(f"each flag should be [row, col, [one of {', '.join(FLAGS)}]]")
        _whole(item[0], "a flag's row", 0, n_rows - 1)
        _whole(item[1], "a flag's column", 0, n_cols - 1)


def _pending(candidate: Candidate) -> None:
    if candidate.status == CandidateStatus.ACCEPTED:
        raise ConflictError(
            f"this table was already accepted as {candidate.table_id} by "
            f"{candidate.decided_by or 'someone'}",
            current=_decision(candidate),
        )
    if candidate.status == CandidateStatus.REJECTED:
        raise ConflictError(
            f"this candidate was rejected by {candidate.decided_by or 'someone'}: "
            f"{candidate.reject_reason}",
            current=_decision(candidate),
        )


def _decision(candidate: Candidate) -> dict[str, Any]:
    return {
        "status": candidate.status,
        "version": candidate.version,
        "table": candidate.table_id,
        "reject_reason": candidate.reject_reason,
        "decided_by": str(candidate.decided_by or ""),
        "machine_grid": candidate.machine_grid,
    }


def _locked(candidate: Candidate) -> Candidate:
    # Only the candidate's row: PostgreSQL locks no row of an outer join's nullable side.
    return (
        Candidate.objects.select_for_update(of=("self",))
        .select_related("document__collection", "decided_by")
        .get(pk=candidate.pk)
    )


@dataclass(frozen=True)
class DraftResult:
    accepted: bool  # False: a draft written later was already kept
    version: int


@transaction.atomic
def candidate_draft_save(
    *,
    editor: Any,
    candidate: Candidate,
    state: Mapping[str, Any],
    base_version: int,
    client_ms: int,
    elapsed_ms: int = 0,
) -> DraftResult:
    """Keep an editor's unsaved corrections. Refused (409) once the candidate is decided or
    re-extracted since the draft began; ignored when a later draft is already kept."""
    INGESTING.check(editor)
    edit_state(state)  # refuse what could not be accepted later
    locked = _locked(candidate)
    _pending(locked)
    if base_version != locked.version:
        raise ConflictError(
            "this candidate was extracted again since you opened it", current=_decision(locked)
        )
    client_ms = _whole(client_ms, "client_ms", 0, _MAX_INT)
    draft = CandidateDraft.objects.filter(candidate=locked, editor=editor).first()
    if draft is not None and draft.base_version == base_version and client_ms <= draft.client_ms:
        return DraftResult(accepted=False, version=locked.version)
    seconds = max(0, min(elapsed_ms, 3_600_000)) // 1000
    if draft is None:
        CandidateDraft.objects.create(
            candidate=locked,
            editor=editor,
            state=_visible_json(dict(state)),
            base_version=base_version,
            client_ms=client_ms,
            seconds_spent=seconds,
        )
    else:
        draft.state = _visible_json(dict(state))
        draft.base_version = base_version
        draft.client_ms = client_ms
        draft.seconds_spent += seconds
        draft.save()
    return DraftResult(accepted=True, version=locked.version)


@transaction.atomic
def candidate_accept(
    *,
    editor: Any,
    candidate: Candidate,
    state: Mapping[str, Any],
    base_version: int,
    elapsed_ms: int = 0,
) -> Candidate:
    """Make the corrected table a ``Table`` of the dataset, in both annotation queues at once.

    The candidate is locked, and ``Candidate.table`` is one-to-one: two people never accept
    it twice. A retried request (same editor, same table) returns the accepted candidate.
    """
    INGESTING.check(editor)
    edit = edit_state(state)
    canonical = edit.grid.to_canonical()
    if not any(cell.text for cell in edit.grid.cells):
        raise ApplicationError("the table is empty: type its cells before accepting it")
    locked = _locked(candidate)
    if (
        locked.status == CandidateStatus.ACCEPTED
        and locked.decided_by_id == editor.pk
        and locked.accepted_csv == canonical
    ):
        return locked
    _pending(locked)
    if base_version != locked.version:
        raise ConflictError(
            "this candidate was extracted again since you opened it", current=_decision(locked)
        )
    table = table_create(
        table_id=locked.table_id_for(),
        source=locked.document.collection.code,
        canonical_csv=canonical,
        title=edit.title,
        notes=edit.notes,
        image_png=files.read(locked.crop_path) if locked.crop_path else None,
    )
    try:
        # TEDS can take seconds on a large table: the ingest worker adds it after commit.
        scores = compare(locked.machine_csv, canonical, with_teds=False)
        draft = CandidateDraft.objects.filter(candidate=locked, editor=editor).first()
        locked.status = CandidateStatus.ACCEPTED
        locked.table = table
        locked.accepted_csv = canonical
        locked.header_rows = edit.header_rows
        locked.header_columns = edit.header_columns
        locked.decided_by = editor
        locked.decided_at = timezone.now()
        locked.seconds_spent += (draft.seconds_spent if draft else 0) + max(0, elapsed_ms) // 1000
        locked.exact = scores.exact
        locked.teds = scores.teds if scores.exact else None
        locked.cell_precision = scores.cell_precision
        locked.cell_recall = scores.cell_recall
        locked.save()
        CandidateDraft.objects.filter(candidate=locked).delete()
        if not scores.exact:
            transaction.on_commit(lambda: _enqueue_scoring(locked.pk))
    except BaseException:
        if table.image:
            table.image.delete(save=False)
        raise
    return locked


@transaction.atomic
def candidate_reject(*, editor: Any, candidate: Candidate, reason: str) -> Candidate:
    INGESTING.check(editor)
    reason = _plain(reason)[:1000]
    if not reason:
        raise ApplicationError("say why the candidate is rejected", field="reason")
    locked = _locked(candidate)
    if locked.status == CandidateStatus.REJECTED and locked.reject_reason == reason:
        return locked
    _pending(locked)
    locked.status = CandidateStatus.REJECTED
    locked.reject_reason = reason
    locked.decided_by = editor
    locked.decided_at = timezone.now()
    locked.save()
    CandidateDraft.objects.filter(candidate=locked).delete()
    return locked


def _bbox(value: Any, page: DocumentPage) -> tuple[float, float, float, float]:
    if not (isinstance(value, list | tuple) and len(value) == 4):
        raise ApplicationError(
            "the box should be [x0, top, x1, bottom] in points (pixels for an image)"
        )
    try:
        x0, top, x1, bottom = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ApplicationError("the box should be four numbers") from None
    width, height = page.width or 0.0, page.height or 0.0
    x0, x1 = sorted((max(0.0, min(width, x0)), max(0.0, min(width, x1))))
    top, bottom = sorted((max(0.0, min(height, top)), max(0.0, min(height, bottom))))
    if x1 - x0 < 4 or bottom - top < 4:
        raise ApplicationError("the box is too small: drag around the whole table")
    return x0, top, x1, bottom


_STRATEGIES = ("auto", STRATEGY_LINES, STRATEGY_TEXT, STRATEGY_MANUAL)


def _region(
    document: Document, page: DocumentPage, bbox: Any, strategy: str
) -> tuple[Any, bytes, str]:
    """The table in a box of a page: (candidate, crop, OCR text). A page read through OCR
    (an image file, a scan) is read through OCR again, in the collection's language."""
    if document.kind == DocumentKind.HTML:
        raise ApplicationError("only PDF pages and images have regions to extract")
    if page.width is None or not page.image_path:
        raise ApplicationError(f"page {page.number} was not read, so it has no image to draw on")
    if strategy not in _STRATEGIES:
        raise ApplicationError(f"strategy should be one of {', '.join(_STRATEGIES)}")
    box = _bbox(bbox, page)
    language = document.collection.ocr_language
    request = {
        "op": "image_region" if document.kind == DocumentKind.IMAGE else "region",
        "path": str(files.path_of(document.stored_path)),
        "page": page.number,
        "bbox": list(box),
        "strategy": "manual" if strategy == STRATEGY_MANUAL else strategy,
        "ocr_language": language,
        "max_pixels": settings.INGEST_MAX_IMAGE_PIXELS,
    }
    try:
        with _runner() as runner:
            candidate, crop, text = runner.call(request)
    except PageTimeout:
        raise ApplicationError(
            f"extracting this region took longer than {settings.INGEST_PAGE_SECONDS} s and "
            "was stopped; type the table instead"
        ) from None
    except (WorkerFailed, PageError) as exc:
        raise ApplicationError(f"this region could not be read: {exc}") from None
    return candidate, crop, text


def candidate_reextract(
    *, editor: Any, candidate: Candidate, bbox: Any, strategy: str = "auto"
) -> Candidate:
    """Extract the candidate's (moved or resized) box again; its machine extraction, cells
    and crop become the new region's, and its version moves on."""
    INGESTING.check(editor)
    _pending(candidate)
    if candidate.page is None:
        raise ApplicationError("a web page's table has no box to extract again")
    page = candidate.document.pages.get(number=candidate.page)
    found, crop, ocr_text = _region(candidate.document, page, bbox, strategy)
    with transaction.atomic():
        locked = _locked(candidate)
        _pending(locked)
        crop_path = f"crops/{locked.document_id}/{locked.number}-{locked.version + 1}.png"
        files.write(crop_path, crop)
        for name, value in _extracted(found).items():
            setattr(locked, name, value)
        locked.crop_path = crop_path
        locked.ocr_text = without_hidden(ocr_text, allowed=CONTROL_SPACES)
        locked.box_adjusted = True
        locked.version += 1
        locked.save()
    return locked


def candidate_draw(
    *, editor: Any, document: Document, page_number: int, bbox: Any, strategy: str = "auto"
) -> Candidate:
    """A new candidate from a box drawn on a page: extracted if the region has a table,
    otherwise an empty grid to type it into (a scanned page)."""
    INGESTING.check(editor)
    page = document.pages.filter(number=page_number).first()
    if page is None:
        raise ApplicationError(f"the document has no page {page_number}")
    found, crop, ocr_text = _region(document, page, bbox, strategy)
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        _new_candidates(locked, page_number, [(found, crop)], [ocr_text])
        created = locked.candidates.order_by("-number").first()
        assert created is not None
        Candidate.objects.filter(pk=created.pk).update(box_adjusted=True)
        created.box_adjusted = True
    return created


MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_IMAGE_PIXELS = 40_000_000


def candidate_image_attach(*, editor: Any, candidate: Candidate, data: bytes) -> Candidate:
    """The image of a web page's table, uploaded with it: kept as PNG, it becomes the
    table's image when the candidate is accepted. Anything but a PNG, JPEG or WebP picture
    of sensible size is refused."""
    import io

    from PIL import Image, UnidentifiedImageError

    INGESTING.check(editor)
    _pending(candidate)
    if len(data) > MAX_IMAGE_BYTES:
        raise ApplicationError(f"the image is larger than {MAX_IMAGE_BYTES:,} bytes", field="image")
    try:
        with Image.open(io.BytesIO(data)) as picture:
            if picture.format not in ("PNG", "JPEG", "WEBP"):
                raise ApplicationError("the image should be PNG, JPEG or WebP", field="image")
            if picture.width * picture.height > MAX_IMAGE_PIXELS:
                raise ApplicationError("the image has too many pixels", field="image")
            out = io.BytesIO()
            picture.convert("RGB").save(out, format="PNG")
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError):
        raise ApplicationError("this file is not a readable image", field="image") from None
    with transaction.atomic():
        locked = _locked(candidate)
        _pending(locked)
        crop_path = f"crops/{locked.document_id}/{locked.number}-upload-{locked.version}.png"
        files.write(crop_path, out.getvalue())
        locked.crop_path = crop_path
        locked.save(update_fields=["crop_path", "updated_at"])
    return locked
