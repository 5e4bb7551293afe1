"""Extraction: the ingest worker opens a document (or refuses it), reads its pages one by one
in a child process (``page_runner``), each under INGEST_PAGE_SECONDS, and makes the table
candidates it finds; it shares the worker fairly between uploaders. A job of the one lifecycle
(``ingest.jobs.DOCUMENT_EXTRACTION``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from dataset.models import (
    TABLE_NOTES_MAX_CHARS,
    TABLE_TITLE_MAX_CHARS,
)
from hctqa.core.extraction.grid import Grid, clean_text
from hctqa.core.extraction.metrics import compare
from hctqa.core.extraction.worker import PageError, PageRunner, PageTimeout, WorkerFailed
from hctqa.core.hidden_text import CONTROL_SPACES, without_hidden
from hctqa.core.wording import counted
from ingest import files, selectors
from ingest import jobs as ingest_jobs
from ingest.jobs import DOCUMENT_EXTRACTION, candidate_scores_resend
from ingest.models import (
    Candidate,
    CandidateStatus,
    Document,
    DocumentKind,
    DocumentPage,
    DocumentStatus,
    PageStatus,
    Strategy,
)
from ingest.services.uploads import UploadRefused
from plumbing import jobs

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


def page_runner() -> PageRunner:
    """The child process that reads pages, each under INGEST_PAGE_SECONDS."""
    return PageRunner(
        seconds=settings.INGEST_PAGE_SECONDS, memory_mb=settings.INGEST_WORKER_MEMORY_MB
    )


def visible_line(text: str) -> str:
    """One line of visible text: a cell or a title."""
    return clean_text(without_hidden(text, allowed=CONTROL_SPACES))


# --- Extraction -------------------------------------------------------------------------------


def _grid_json(grid: Grid) -> dict[str, Any]:
    return grid.as_json()


def extracted_fields(found: Any) -> dict[str, Any]:
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
        "title": visible_line(found.title)[:TABLE_TITLE_MAX_CHARS],
        "notes": without_hidden(found.notes, allowed=CONTROL_SPACES).strip()[
            :TABLE_NOTES_MAX_CHARS
        ],
        "cell_flags": [[row, col, list(flags)] for row, col, flags in found.cell_flags],
    }


def candidates_add(
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
            **extracted_fields(candidate),
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
            f"This PDF has {counted(pages, 'page')}, more than the limit of "
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
        candidates_add(locked, page.number, found, result.ocr_texts)
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
        candidates_add(locked, None, found)
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


def _hand_back(document_id: int, attempt: jobs.Token, wait: float, message: str) -> None:
    """Put an extraction back in the queue (its pages done stay done), to go on after
    ``wait`` seconds; the sweeper leaves it alone until then. Giving way is no failed
    attempt: the sweeper counts only those."""
    at = timezone.now() + timedelta(seconds=wait)
    with transaction.atomic():
        if jobs.hand_back(DOCUMENT_EXTRACTION, document_id, attempt, at=at, message=message):
            transaction.on_commit(
                lambda: ingest_jobs.enqueue_extraction(document_id, countdown=wait)
            )


def document_extract(*, document_id: int, shared: bool = True) -> str:
    """Open the document (refusing it if it cannot be read), then extract every page not yet
    done, recording each as it finishes (the ingest task's body; the ``ingest`` command runs
    it too). Safe to run again: pages done by an earlier attempt are skipped.

    The worker is ``shared`` fairly: before each page the extraction gives way (goes back in
    the queue, to go on later) when its uploader's hour of ingest work is used up, or when
    someone who has used less of the hour has a document waiting (``_give_way``). The
    ``ingest`` command, reading a file in its own process, does not share (``shared=False``)."""
    # Queued, or extracting with a silent worker: two workers never extract it at once. A
    # wait it was handed back with is over.
    attempt = jobs.claim(DOCUMENT_EXTRACTION, document_id, message="")
    if attempt is None:
        return "not claimed"
    document = Document.objects.select_related("collection").get(pk=document_id)
    if shared and (wait := _give_way(document, worked=0)) is not None:
        _hand_back(document_id, attempt, *wait)
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
    with jobs.heartbeat(DOCUMENT_EXTRACTION, document_id, attempt), page_runner() as runner:
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
                    _hand_back(document_id, attempt, *wait)
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
    fail those that stopped INGEST_MAX_ATTEMPTS times; resend lost candidate scorings (the
    sweeps worker does both, ``plumbing.jobs``). Returns how many were queued again."""
    swept = jobs.sweep(DOCUMENT_EXTRACTION)
    candidate_scores_resend()
    return len(swept.requeued)
