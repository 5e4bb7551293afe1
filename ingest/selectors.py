"""Reads of the ingest app: documents, candidates, the review page and extraction quality."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Avg, Case, Count, OuterRef, Q, QuerySet, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce, TruncMonth
from django.shortcuts import get_object_or_404

from dataset.models import Collection
from hctqa.core.extraction.table import FLAGS
from hctqa.core.render import to_html
from hctqa.core.tables import TableFormatError, parse_table
from ingest.models import (
    Candidate,
    CandidateDraft,
    CandidateStatus,
    Document,
    DocumentPage,
    DocumentStatus,
    PageStatus,
    Strategy,
)

# --- The ingest budget: worker seconds per person per hour -------------------------------

BUDGET_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class IngestBudget:
    used: float  # worker seconds of the person's pages read in the last hour
    limit: int  # INGEST_SECONDS_PER_HOUR; 0: no limit
    resumes_at: datetime | None  # when used up: when enough of the hour's work ages out

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.used) if self.limit else float("inf")

    @property
    def used_up(self) -> bool:
        return bool(self.limit) and self.used >= self.limit


def _recent_pages(now: datetime) -> QuerySet[DocumentPage]:
    return DocumentPage.objects.filter(finished_at__gt=now - BUDGET_WINDOW, seconds__isnull=False)


def seconds_used(*, user_ids: Iterable[int | None], now: datetime) -> dict[int | None, float]:
    """Worker seconds each person's documents took in the hour before ``now``: one query."""
    user_ids = list(user_ids)
    rows = (
        _recent_pages(now)
        .filter(document__uploaded_by__in=[u for u in user_ids if u is not None])
        .values_list("document__uploaded_by")
        .annotate(total=Sum("seconds"))
    )
    used: dict[int | None, float] = dict.fromkeys(user_ids, 0.0)
    used.update({user: float(total or 0) for user, total in rows})
    return used


def ingest_budget(*, user_id: int | None, now: datetime) -> IngestBudget:
    """What a person has used of the hour's ingest work, and, if all of it, when enough of
    it is an hour old for their pages to go on."""
    limit = settings.INGEST_SECONDS_PER_HOUR
    if user_id is None:
        return IngestBudget(0.0, limit, None)
    pages = _recent_pages(now).filter(document__uploaded_by=user_id)
    used = float(pages.aggregate(total=Sum("seconds"))["total"] or 0)
    resumes_at = None
    if limit and used >= limit:
        # The oldest pages age out first: after the one that brings the rest under the limit.
        left = used
        oldest_first = pages.order_by("finished_at").values_list("finished_at", "seconds")
        for finished, seconds in oldest_first:
            left -= seconds
            if left < limit:
                resumes_at = finished + BUDGET_WINDOW
                break
    return IngestBudget(used, limit, resumes_at)


def waiting_uploaders(*, excluding: Document) -> set[int | None]:
    """The people, other than ``excluding``'s uploader, with a document queued for the ingest
    worker."""
    return set(
        Document.objects.filter(status=DocumentStatus.QUEUED)
        .exclude(pk=excluding.pk)
        .exclude(uploaded_by=excluding.uploaded_by_id)
        .values_list("uploaded_by", flat=True)
        .distinct()
    )


def collections() -> QuerySet[Collection]:
    return Collection.objects.order_by("name")


def _documents() -> QuerySet[Document]:
    """Documents with their failed pages counted (``Document.state`` reads it): a subquery,
    so that it multiplies no other count."""
    failed = (
        DocumentPage.objects.filter(document=OuterRef("pk"), status=PageStatus.FAILED)
        .order_by()
        .values("document")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Document.objects.select_related("collection", "uploaded_by").annotate(
        n_failed_pages=Coalesce(Subquery(failed), 0)
    )


def documents_recent(*, limit: int = 50) -> QuerySet[Document]:
    return (
        _documents()
        .annotate(
            n_candidates=Count("candidates"),
            n_pending=Count("candidates", filter=Q(candidates__status=CandidateStatus.PENDING)),
        )
        .order_by("-uploaded_at", "-pk")[:limit]
    )


def document_get(*, document_id: int) -> Document:
    return get_object_or_404(_documents(), pk=document_id)


@dataclass(frozen=True)
class DocumentView:
    document: Document
    pages: list[DocumentPage]
    candidates: list[Candidate]

    @property
    def ocr_pages(self) -> list[int]:
        """The pages read through OCR (no usable text layer, or an image)."""
        return [p.number for p in self.pages if p.ocr_language]


def document_view(*, document_id: int) -> DocumentView:
    document = document_get(document_id=document_id)
    pages = list(document.pages.order_by("number"))
    candidates = list(document.candidates.select_related("decided_by", "table").order_by("number"))
    return DocumentView(document, pages, candidates)


def candidate_get(*, candidate_id: int) -> Candidate:
    return get_object_or_404(
        Candidate.objects.select_related("document__collection", "decided_by", "table"),
        pk=candidate_id,
    )


def page_get(*, document: Document, number: int) -> DocumentPage:
    return get_object_or_404(DocumentPage, document=document, number=number)


def preview(canonical_csv: str) -> dict[str, Any]:
    """The table as the dataset will show it: the project's parser and HTML rendering."""
    try:
        table = parse_table(canonical_csv)
    except TableFormatError as exc:
        return {
            "html": "",
            "error": str(exc),
            "header_rows": 0,
            "header_columns": 0,
            "canonical_csv": canonical_csv,
        }
    return {
        "html": to_html(table),
        "error": "",
        "header_rows": table.header_rows,
        "header_columns": table.header_columns,
        "canonical_csv": canonical_csv,
    }


@dataclass(frozen=True)
class Review:
    candidate: Candidate
    page: DocumentPage | None
    boxes: list[dict[str, Any]]  # every candidate on the same page
    draft: CandidateDraft | None
    next_pending: int | None


def candidate_review(*, candidate_id: int, editor: Any) -> Review:
    candidate = candidate_get(candidate_id=candidate_id)
    document = candidate.document
    page = None
    boxes: list[dict[str, Any]] = []
    if candidate.page is not None:
        page = document.pages.filter(number=candidate.page).first()
        for other in document.candidates.filter(page=candidate.page).order_by("number"):
            boxes.append(
                {
                    "id": other.pk,
                    "number": other.number,
                    "bbox": other.bbox,
                    "status": other.status,
                    "current": other.pk == candidate.pk,
                }
            )
    draft = CandidateDraft.objects.filter(candidate=candidate, editor=editor).first()
    return Review(candidate, page, boxes, draft, next_pending(candidate))


def next_pending(candidate: Candidate) -> int | None:
    """The candidate to review after this one: the rest of its document first (those after
    it, then those before it), then the next documents, then the earlier ones."""
    document = candidate.document
    return (
        Candidate.objects.filter(status=CandidateStatus.PENDING)
        .exclude(pk=candidate.pk)
        .annotate(
            turn=Case(
                When(document=document, number__gt=candidate.number, then=Value(0)),
                When(document=document, then=Value(1)),
                When(document__pk__gt=document.pk, then=Value(2)),
                default=Value(3),
            )
        )
        .order_by("turn", "document_id", "number")
        .values_list("pk", flat=True)
        .first()
    )


@dataclass(frozen=True)
class FlaggedCell:
    row: int  # 1-based, in the extracted grid
    col: int
    text: str
    reasons: list[str]


def flagged_cells(candidate: Candidate) -> list[FlaggedCell]:
    """The cells the extractor was least sure of, where the reviewer looks first."""
    texts = {(c[0], c[1]): c[4] for c in (candidate.machine_grid or {}).get("cells", [])}
    return [
        FlaggedCell(row + 1, col + 1, texts.get((row, col), ""), [FLAGS[f] for f in flags])
        for row, col, flags in candidate.cell_flags
        if all(f in FLAGS for f in flags)
    ]


# --- Quality ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class QualityRow:
    label: str
    tables: int
    exact: float
    teds: float
    cell_precision: float
    cell_recall: float
    adjusted: int


_FIGURES = {
    "n": Count("pk"),
    "n_exact": Count("pk", filter=Q(exact=True)),
    "teds_mean": Avg("teds"),
    "precision": Avg("cell_precision"),
    "recall": Avg("cell_recall"),
    "n_adjusted": Count("pk", filter=Q(box_adjusted=True)),
}


def _row(label: str, figures: Mapping[str, Any]) -> QualityRow:
    return QualityRow(
        label=label,
        tables=figures["n"],
        exact=figures["n_exact"] / figures["n"] if figures["n"] else 0.0,
        teds=figures["teds_mean"] or 0.0,
        cell_precision=figures["precision"] or 0.0,
        cell_recall=figures["recall"] or 0.0,
        adjusted=figures["n_adjusted"],
    )


def _rows(accepted: QuerySet[Candidate], key: str, label: Any) -> list[QualityRow]:
    grouped = accepted.values(key).annotate(**_FIGURES).order_by(key)
    return [_row(label(row[key]), row) for row in grouped]


@dataclass(frozen=True)
class QualityReport:
    overall: list[QualityRow]
    by_collection: list[QualityRow]
    by_strategy: list[QualityRow]
    by_month: list[QualityRow]
    rejected: int
    pending: int


def quality_report() -> QualityReport:
    """How close the machine extraction was to what people accepted: per collection, per
    strategy (ruled lines, text alignment, HTML) and per month. Tables typed by hand on
    scanned pages are not an extraction and are left out."""
    accepted = Candidate.objects.filter(status=CandidateStatus.ACCEPTED).exclude(
        strategy=Strategy.MANUAL
    )
    names = dict(Collection.objects.values_list("pk", "name"))
    strategies = dict(Strategy.choices)
    totals = accepted.aggregate(**_FIGURES)
    counts = Candidate.objects.aggregate(
        rejected=Count("pk", filter=Q(status=CandidateStatus.REJECTED)),
        pending=Count("pk", filter=Q(status=CandidateStatus.PENDING)),
    )
    return QualityReport(
        overall=[_row("All", totals)] if totals["n"] else [],
        by_collection=_rows(accepted, "document__collection", lambda pk: names.get(pk, pk)),
        by_strategy=_rows(accepted, "strategy", lambda code: strategies.get(code, code)),
        by_month=_rows(
            accepted.annotate(month=TruncMonth("decided_at")),
            "month",
            lambda month: month.strftime("%Y-%m"),
        ),
        rejected=counts["rejected"],
        pending=counts["pending"],
    )
