"""Review: editors correct a candidate's grid (their drafts kept as they type), accept it as a
table of the dataset or reject it, and move or draw its box to extract it again. The edited
grid itself (``EditState.grid``) is what an accepted table is written from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dataset.models import (
    TABLE_NOTES_MAX_CHARS,
    TABLE_TITLE_MAX_CHARS,
)
from dataset.services import table_create
from hctqa.core.extraction.grid import Grid, GridCell
from hctqa.core.extraction.metrics import compare
from hctqa.core.extraction.pdf import STRATEGY_LINES, STRATEGY_MANUAL, STRATEGY_TEXT
from hctqa.core.extraction.table import FLAGS
from hctqa.core.extraction.worker import PageError, PageTimeout, WorkerFailed
from hctqa.core.hidden_text import CONTROL_SPACES, without_hidden
from hctqa.core.wording import counted
from ingest import files
from ingest import jobs as ingest_jobs
from ingest.models import (
    Candidate,
    CandidateDraft,
    CandidateStatus,
    Document,
    DocumentKind,
    DocumentPage,
)
from ingest.permissions import INGESTING
from ingest.services.extraction import candidates_add, extracted_fields, page_runner, visible_line
from plumbing.errors import ApplicationError, ConflictError

# What the review page may send: a grid of this size at most, cells of this length.
MAX_EDIT_POSITIONS = 100_000
MAX_CELL_CHARS = 5_000
_MAX_INT = 2**53


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
        cell = GridCell(row, col, rowspan, colspan, visible_line(item[4]))
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
    text = visible_line(value) if one_line else _notes(value)
    if len(text) > limit:
        raise ApplicationError(
            f"the {name} has {counted(len(text), 'character')}; at most {limit:,} are kept: "
            "shorten it",
            field=name,
        )
    return text


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
        grid=edit.grid,
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
            transaction.on_commit(lambda: ingest_jobs.enqueue_candidate_scoring(locked.pk))
    except BaseException:
        if table.image:
            table.image.delete(save=False)
        raise
    return locked


@transaction.atomic
def candidate_reject(*, editor: Any, candidate: Candidate, reason: str) -> Candidate:
    INGESTING.check(editor)
    reason = visible_line(reason)[:1000]
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
        with page_runner() as runner:
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
        for name, value in extracted_fields(found).items():
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
        candidates_add(locked, page_number, [(found, crop)], [ocr_text])
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
