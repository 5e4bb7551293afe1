"""REST API of the ingest app (session or token). The review page uses it too, so everything
done in the browser can be done with a token as well."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dataset import services as dataset_services
from dataset.models import Collection
from hctqa.core.extraction.grid import Grid
from hctqa.core.extraction.table import FLAGS
from hctqa.core.tables import parse_table
from ingest import selectors, services
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
from ingest.permissions import INGESTING
from plumbing.api import ConflictOutput, ErrorOutput
from plumbing.parsers import BoundedJSONParser
from plumbing.permissions import api_rule
from plumbing.throttles import seconds_to_wait

_MAX_INT = 2**53
# Each file sent for ingesting counts once against API_THROTTLE_INGEST, page and API alike.
INGEST_THROTTLE = "ingest"


def too_many_files(wait: int) -> str:
    return (
        f"not ingested: you have sent many files for ingesting lately (API_THROTTLE_INGEST); "
        f"try again in {wait} s."
    )


class _IngestApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(INGESTING)]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, DjangoPermissionDenied):
            exc = PermissionDenied(str(exc))
        return super().handle_exception(exc)


# --- What the API answers (documented here, built by the payload functions below) --------


class CollectionOutput(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    publisher = serializers.CharField()
    url = serializers.CharField()
    licence = serializers.CharField()
    ocr_language = serializers.CharField(help_text="Tesseract's code; blank: eng.")


class PageOutput(serializers.Serializer):
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=PageStatus.choices)
    message = serializers.CharField()
    width = serializers.FloatField(allow_null=True, help_text="Points (pixels for an image).")
    height = serializers.FloatField(allow_null=True)
    seconds = serializers.FloatField(allow_null=True)
    ocr_language = serializers.CharField(
        allow_null=True, help_text="Read through OCR in this language; null: its text layer."
    )
    image = serializers.CharField(allow_null=True, help_text="The page's picture, once read.")


class CandidateSummaryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    page = serializers.IntegerField(allow_null=True)
    strategy = serializers.ChoiceField(choices=Strategy.choices)
    bbox = serializers.ListField(
        child=serializers.FloatField(),
        allow_null=True,
        help_text="[x0, top, x1, bottom] in points (pixels for an image).",
    )
    status = serializers.ChoiceField(choices=CandidateStatus.choices)
    table = serializers.CharField(allow_null=True, help_text="The table it became, if accepted.")
    url = serializers.CharField()


class DocumentOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(help_text="<collection code>--<number>")
    collection = serializers.CharField()
    number = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    file_name = serializers.CharField()
    sha256 = serializers.CharField()
    size_bytes = serializers.IntegerField()
    page_count = serializers.IntegerField(allow_null=True)
    uploaded_by = serializers.CharField()
    uploaded_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=DocumentStatus.choices)
    state = serializers.CharField(
        help_text="As pages show it: a document done with pages that failed is partly_failed."
    )
    message = serializers.CharField()
    refused_code = serializers.CharField(allow_null=True)
    pages_done = serializers.IntegerField()
    url = serializers.CharField()


class DocumentDetailOutput(DocumentOutput):
    pages = PageOutput(many=True)
    candidates = CandidateSummaryOutput(many=True)


class UploadResultOutput(serializers.Serializer):
    file = serializers.CharField()
    document = DocumentOutput(
        required=False, help_text="Made, or the document that already holds these bytes."
    )
    error = serializers.CharField(required=False, help_text="Why it was not ingested.")
    code = serializers.CharField(required=False, help_text="duplicate, throttled, …")


class UploadOutput(serializers.Serializer):
    results = UploadResultOutput(many=True, help_text="One per file, in the order sent.")


class DocumentsInput(serializers.Serializer):
    collection = serializers.CharField(help_text="The collection's code or name.")
    file = serializers.ListField(
        child=serializers.FileField(), help_text="One or more PDFs, web pages or images."
    )


class _DocumentRef(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    url = serializers.CharField()


class _Box(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    bbox = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    status = serializers.ChoiceField(choices=CandidateStatus.choices)
    current = serializers.BooleanField()


class CandidateOutput(CandidateSummaryOutput):
    """A candidate for review: what extraction read, the editor's draft, the page, the boxes
    of the page's other candidates and where to go next."""

    table_id = serializers.CharField(help_text="The id it takes when accepted.")
    document = _DocumentRef()
    version = serializers.IntegerField(help_text="Changes with each extraction of its box.")
    title = serializers.CharField()
    notes = serializers.CharField()
    flags = serializers.ListField(
        child=serializers.ListField(), help_text="[row, col, [flag, …]] per flagged cell."
    )
    flag_labels = serializers.DictField(child=serializers.CharField())
    reject_reason = serializers.CharField()
    decided_by = serializers.CharField()
    machine = serializers.JSONField(
        allow_null=True, help_text="The extraction as an editor state; null once accepted."
    )
    state = serializers.JSONField(help_text="The editor state: the draft, or the extraction.")
    has_draft = serializers.BooleanField()
    draft_client_ms = serializers.IntegerField(allow_null=True)
    page_size = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    page_image = serializers.CharField(allow_null=True)
    crop = serializers.CharField(allow_null=True)
    ocr_text = serializers.CharField()
    ocr_language = serializers.CharField()
    boxes = _Box(many=True)
    api = serializers.CharField()
    draw = serializers.CharField()
    next = serializers.CharField(help_text="The next candidate to review, or the document.")


class _AcceptScores(serializers.Serializer):
    exact = serializers.BooleanField(allow_null=True)
    teds = serializers.FloatField(allow_null=True)
    cell_precision = serializers.FloatField(allow_null=True)
    cell_recall = serializers.FloatField(allow_null=True)


class CandidateAcceptedOutput(CandidateOutput):
    table_url = serializers.CharField(allow_null=True)
    scores = _AcceptScores(help_text="The extraction against what was accepted.")


class DraftSavedOutput(serializers.Serializer):
    accepted = serializers.BooleanField()
    version = serializers.IntegerField()


class PreviewOutput(serializers.Serializer):
    html = serializers.CharField()
    error = serializers.CharField(help_text="Why it cannot be read as a table; blank if it can.")
    header_rows = serializers.IntegerField()
    header_columns = serializers.IntegerField()
    canonical_csv = serializers.CharField()


class QualityRowOutput(serializers.Serializer):
    label = serializers.CharField()
    tables = serializers.IntegerField()
    exact = serializers.FloatField()
    teds = serializers.FloatField()
    cell_precision = serializers.FloatField()
    cell_recall = serializers.FloatField()
    adjusted = serializers.IntegerField(help_text="Tables whose box a person drew or moved.")


class QualityOutput(serializers.Serializer):
    overall = QualityRowOutput(many=True)
    by_collection = QualityRowOutput(many=True)
    by_strategy = QualityRowOutput(many=True)
    by_month = QualityRowOutput(many=True)
    rejected = serializers.IntegerField()
    pending = serializers.IntegerField()


def collection_payload(collection: Collection) -> dict[str, Any]:
    return {
        "code": collection.code,
        "name": collection.name,
        "publisher": collection.publisher,
        "url": collection.url,
        "licence": collection.licence,
        "ocr_language": collection.ocr_language,
    }


def document_payload(document: Document, *, pages: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": document.pk,
        "name": f"{document.collection.code}--{document.number}",
        "collection": document.collection.code,
        "number": document.number,
        "kind": document.kind,
        "file_name": document.file_name,
        "sha256": document.sha256,
        "size_bytes": document.size_bytes,
        "page_count": document.page_count,
        "uploaded_by": str(document.uploaded_by or ""),
        "uploaded_at": document.uploaded_at.isoformat(),
        "status": document.status,
        "state": document.state,
        "message": document.message,
        "refused_code": document.refused_code or None,
        "pages_done": document.pages_done,
        "url": document.get_absolute_url(),
    }
    if pages:
        data["pages"] = [page_payload(document, p) for p in document.pages.order_by("number")]
        data["candidates"] = [candidate_summary(c) for c in document.candidates.order_by("number")]
    return data


def page_payload(document: Document, page: DocumentPage) -> dict[str, Any]:
    return {
        "number": page.number,
        "status": page.status,
        "message": page.message,
        "width": page.width,
        "height": page.height,
        "seconds": page.seconds,
        "ocr_language": page.ocr_language or None,
        "image": reverse("ingest:page_image", args=[document.pk, page.number])
        if page.image_path
        else None,
    }


def candidate_summary(candidate: Candidate) -> dict[str, Any]:
    return {
        "id": candidate.pk,
        "number": candidate.number,
        "page": candidate.page,
        "strategy": candidate.strategy,
        "bbox": candidate.bbox,
        "status": candidate.status,
        "table": candidate.table_id,
        "url": candidate.get_absolute_url(),
    }


def _marks(canonical_csv: str) -> tuple[int, int]:
    table = parse_table(canonical_csv)
    return table.header_rows, table.header_columns


def candidate_payload(review: selectors.Review) -> dict[str, Any]:
    """What the review page needs: the extraction, the editor's draft, the page and boxes."""
    candidate = review.candidate
    if candidate.status == "accepted" and candidate.accepted_csv:
        from hctqa.core.extraction.grid import grid_from_canonical

        accepted = grid_from_canonical(candidate.accepted_csv)
        state = {
            **accepted.as_json(),
            "header_rows": candidate.header_rows,
            "header_columns": candidate.header_columns,
            "title": candidate.table.title if candidate.table else "",
            "notes": candidate.table.notes if candidate.table else "",
        }
    else:
        # The grid as extracted; only its header marks are read from its CSV.
        rows, cols = _marks(candidate.machine_csv)
        state = {
            **Grid.from_json(candidate.machine_grid).as_json(),
            "header_rows": rows,
            "header_columns": cols,
            "title": candidate.title,
            "notes": candidate.notes,
            "flags": candidate.cell_flags,
        }
    draft = review.draft
    page = review.page
    document = candidate.document
    return {
        **candidate_summary(candidate),
        "table_id": candidate.table_id_for(),
        "document": {
            "id": document.pk,
            "name": f"{document.collection.code}--{document.number}",
            "url": document.get_absolute_url(),
        },
        "version": candidate.version,
        # As extracted; the reviewer's title and notes are the state's.
        "title": candidate.title,
        "notes": candidate.notes,
        "flags": candidate.cell_flags,
        "flag_labels": FLAGS,
        "reject_reason": candidate.reject_reason,
        "decided_by": str(candidate.decided_by or ""),
        "machine": state if candidate.status != "accepted" else None,
        "state": draft.state if draft and draft.base_version == candidate.version else state,
        "has_draft": bool(draft and draft.base_version == candidate.version),
        "draft_client_ms": draft.client_ms if draft else None,
        "page_size": [page.width, page.height] if page and page.width else None,
        "page_image": page_payload(document, page)["image"] if page else None,
        "crop": reverse("ingest:crop", args=[candidate.pk]) if candidate.crop_path else None,
        "ocr_text": candidate.ocr_text,
        "ocr_language": page.ocr_language if page else "",
        "boxes": review.boxes,
        "api": reverse("api-ingest-candidate", args=[candidate.pk]),
        "draw": reverse("api-ingest-draw", args=[document.pk]),
        "next": reverse("ingest:candidate", args=[review.next_pending])
        if review.next_pending
        else document.get_absolute_url(),
    }


def page_payload_for_drawing(document: Document, page: DocumentPage) -> dict[str, Any]:
    """The review page with no candidate: a page to draw a table's box on."""
    return {
        "id": None,
        "page": page.number,
        "document": {
            "id": document.pk,
            "name": f"{document.collection.code}--{document.number}",
            "url": document.get_absolute_url(),
        },
        "status": "pending",
        "page_size": [page.width, page.height],
        "page_image": page_payload(document, page)["image"],
        "page_message": page.message,
        "boxes": [
            {"id": c.pk, "number": c.number, "bbox": c.bbox, "status": c.status, "current": False}
            for c in document.candidates.filter(page=page.number).order_by("number")
        ],
        "draw": reverse("api-ingest-draw", args=[document.pk]),
    }


class CollectionsApi(_IngestApi):
    class Input(serializers.Serializer):
        code = serializers.CharField(max_length=16)
        name = serializers.CharField(max_length=200)
        publisher = serializers.CharField(max_length=200, required=False, allow_blank=True)
        url = serializers.CharField(max_length=500, required=False, allow_blank=True)
        licence = serializers.CharField(max_length=200, required=False, allow_blank=True)
        ocr_language = serializers.CharField(max_length=40, required=False, allow_blank=True)

    @extend_schema(summary="Collections new tables can join", responses=CollectionOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response([collection_payload(c) for c in selectors.collections()])

    @extend_schema(
        request=Input,
        responses={201: CollectionOutput, 400: ErrorOutput},
        summary="Create a collection (admins)",
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        collection = dataset_services.collection_create(user=request.user, **data.validated_data)
        return Response(collection_payload(collection), status=201)


class DocumentsApi(_IngestApi):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(summary="Recently uploaded documents", responses=DocumentOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response([document_payload(d) for d in selectors.documents_recent(limit=100)])

    @extend_schema(
        summary="Upload PDFs, saved web pages or PNG/JPEG images",
        request={"multipart/form-data": DocumentsInput},
        responses={
            201: UploadOutput,
            400: UploadOutput,
            409: OpenApiResponse(UploadOutput, description="Every file is a duplicate."),
            429: OpenApiResponse(UploadOutput, description="Throttled (Retry-After)."),
        },
    )
    def post(self, request: Request) -> Response:
        collection = services.collection_find(name=str(request.data.get("collection", "")))
        uploads = request.FILES.getlist("file")
        if not uploads:
            raise services.ApplicationError("attach one or more files as 'file'", field="file")
        results: list[dict[str, Any]] = []
        wait = None
        for upload in uploads:
            if wait is None:
                wait = seconds_to_wait(request, INGEST_THROTTLE)
            if wait is not None:
                results.append(
                    {"file": upload.name, "error": too_many_files(wait), "code": "throttled"}
                )
                continue
            try:
                document = services.document_upload(
                    user=request.user,
                    collection=collection,
                    file_name=upload.name or "",
                    chunks=upload.chunks(),
                )
            except services.UploadRefused as exc:
                entry: dict[str, Any] = {
                    "file": upload.name,
                    "error": exc.message,
                    "code": exc.code,
                }
                if exc.document is not None:
                    entry["document"] = document_payload(exc.document)
                results.append(entry)
            else:
                results.append({"file": upload.name, "document": document_payload(document)})
        created = any("document" in r and "error" not in r for r in results)
        duplicates = all(r.get("code") == "duplicate" for r in results if "error" in r)
        status = 201 if created else (429 if wait else 409 if duplicates else 400)
        response = Response({"results": results}, status=status)
        if wait is not None:
            response["Retry-After"] = str(wait)
        return response


class DocumentApi(_IngestApi):
    @extend_schema(
        summary="A document: provenance, progress per page, candidates",
        responses=DocumentDetailOutput,
    )
    def get(self, request: Request, document_id: int) -> Response:
        document = selectors.document_get(document_id=document_id)
        return Response(document_payload(document, pages=True))


class DrawInput(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, required=False)
    bbox = serializers.ListField(child=serializers.FloatField(), min_length=4, max_length=4)
    strategy = serializers.ChoiceField(
        choices=["auto", "lines", "text", "manual"], required=False, default="auto"
    )


class DrawApi(_IngestApi):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        request=DrawInput,
        responses={201: CandidateOutput, 400: ErrorOutput},
        summary="A new candidate from a box drawn on a page",
    )
    def post(self, request: Request, document_id: int) -> Response:
        data = DrawInput(data=request.data)
        data.is_valid(raise_exception=True)
        document = selectors.document_get(document_id=document_id)
        candidate = services.candidate_draw(
            editor=request.user,
            document=document,
            page_number=data.validated_data.get("page", 1),
            bbox=data.validated_data["bbox"],
            strategy=data.validated_data["strategy"],
        )
        review = selectors.candidate_review(candidate_id=candidate.pk, editor=request.user)
        return Response(candidate_payload(review), status=201)


class CandidateApi(_IngestApi):
    @extend_schema(
        summary="A candidate for review: extraction, draft, page and boxes",
        responses=CandidateOutput,
    )
    def get(self, request: Request, candidate_id: int) -> Response:
        review = selectors.candidate_review(candidate_id=candidate_id, editor=request.user)
        return Response(candidate_payload(review))


class _StateInput(serializers.Serializer):
    state = serializers.JSONField()
    base_version = serializers.IntegerField(min_value=0, max_value=_MAX_INT)
    elapsed_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT, default=0)


class CandidateDraftApi(_IngestApi):
    parser_classes = [BoundedJSONParser]

    class Input(_StateInput):
        client_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT)

    @extend_schema(
        request=Input,
        responses={200: DraftSavedOutput, 409: ConflictOutput},
        summary="Keep unsaved corrections (409 if stale)",
    )
    def put(self, request: Request, candidate_id: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.candidate_draft_save(
            editor=request.user,
            candidate=selectors.candidate_get(candidate_id=candidate_id),
            **data.validated_data,
        )
        return Response({"accepted": result.accepted, "version": result.version})


class CandidateSaveApi(_IngestApi):
    """Accept: the corrected table joins the dataset."""

    parser_classes = [BoundedJSONParser]

    @extend_schema(
        request=_StateInput,
        responses={200: CandidateAcceptedOutput, 400: ErrorOutput, 409: ConflictOutput},
        summary="Accept the corrected table into the dataset",
    )
    def post(self, request: Request, candidate_id: int) -> Response:
        data = _StateInput(data=request.data)
        data.is_valid(raise_exception=True)
        candidate = services.candidate_accept(
            editor=request.user,
            candidate=selectors.candidate_get(candidate_id=candidate_id),
            **data.validated_data,
        )
        review = selectors.candidate_review(candidate_id=candidate.pk, editor=request.user)
        return Response(
            {
                **candidate_payload(review),
                "table_url": candidate.table.get_absolute_url() if candidate.table else None,
                "scores": {
                    "exact": candidate.exact,
                    "teds": candidate.teds,
                    "cell_precision": candidate.cell_precision,
                    "cell_recall": candidate.cell_recall,
                },
            }
        )


class CandidateRejectApi(_IngestApi):
    parser_classes = [BoundedJSONParser, FormParser]

    class Input(serializers.Serializer):
        reason = serializers.CharField(max_length=1000)

    @extend_schema(
        request=Input,
        responses={200: CandidateSummaryOutput, 400: ErrorOutput, 409: ConflictOutput},
        summary="Reject a candidate, saying why",
    )
    def post(self, request: Request, candidate_id: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        candidate = services.candidate_reject(
            editor=request.user,
            candidate=selectors.candidate_get(candidate_id=candidate_id),
            reason=data.validated_data["reason"],
        )
        return Response(candidate_summary(candidate))


class CandidateExtractApi(_IngestApi):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        request=DrawInput,
        responses={200: CandidateOutput, 400: ErrorOutput, 409: ConflictOutput},
        summary="Extract the candidate's moved or resized box again",
    )
    def post(self, request: Request, candidate_id: int) -> Response:
        data = DrawInput(data=request.data)
        data.is_valid(raise_exception=True)
        candidate = services.candidate_reextract(
            editor=request.user,
            candidate=selectors.candidate_get(candidate_id=candidate_id),
            bbox=data.validated_data["bbox"],
            strategy=data.validated_data["strategy"],
        )
        review = selectors.candidate_review(candidate_id=candidate.pk, editor=request.user)
        return Response(candidate_payload(review))


class PreviewApi(_IngestApi):
    parser_classes = [BoundedJSONParser]

    class Input(serializers.Serializer):
        state = serializers.JSONField()

    @extend_schema(
        request=Input,
        responses={200: PreviewOutput, 400: ErrorOutput},
        summary="The edited table as the dataset will show it",
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        edit = services.edit_state(data.validated_data["state"])
        return Response(selectors.preview(edit.grid.to_canonical()))


class QualityApi(_IngestApi):
    @extend_schema(
        summary="Extraction quality per collection, strategy and month", responses=QualityOutput
    )
    def get(self, request: Request) -> Response:
        report = selectors.quality_report()

        def rows(items: list[selectors.QualityRow]) -> list[dict[str, Any]]:
            return [asdict(r) for r in items]

        return Response(
            {
                "overall": rows(report.overall),
                "by_collection": rows(report.by_collection),
                "by_strategy": rows(report.by_strategy),
                "by_month": rows(report.by_month),
                "rejected": report.rejected,
                "pending": report.pending,
            }
        )
