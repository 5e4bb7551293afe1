"""Pages of the ingest app: upload, a document's progress and candidates, the review page,
the page images and crops (streamed to permitted users only), and extraction quality."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from dataset import services as dataset_services
from dataset.models import TABLE_NOTES_MAX_CHARS, TABLE_TITLE_MAX_CHARS
from dataset.permissions import ADDING_COLLECTIONS
from ingest import api, files, selectors, services
from ingest.forms import CollectionForm, UploadForm
from ingest.permissions import INGESTING
from plumbing.errors import ApplicationError
from plumbing.permissions import requires
from plumbing.throttles import seconds_to_wait


def _stream(relative: str, content_type: str) -> FileResponse:
    """A private file to a permitted user; never cached by shared caches."""
    handle = open(files.path_of(relative), "rb")  # noqa: SIM115 - FileResponse closes it
    response = FileResponse(handle, content_type=content_type)
    response["Cache-Control"] = "private, no-cache"
    return response


@login_required
@requires(INGESTING)
def home(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None)
    status = 200
    wait = None
    if request.method == "POST" and form.is_valid():
        uploads = request.FILES.getlist("files")
        if not uploads:
            form.add_error(None, "Choose one or more PDF files, saved web pages or images.")
        created = []
        for index, upload in enumerate(uploads):
            if (wait := seconds_to_wait(request, api.INGEST_THROTTLE)) is not None:
                names = ", ".join(u.name or "?" for u in uploads[index:])
                messages.error(request, f"{names}: {api.too_many_files(wait)}")
                break
            try:
                created.append(
                    services.document_upload(
                        user=request.user,
                        collection=form.cleaned_data["collection"],
                        file_name=upload.name or "",
                        chunks=upload.chunks(),
                    )
                )
            except services.UploadRefused as exc:
                messages.error(request, f"{upload.name}: {exc.message}")
        for document in created:
            messages.success(
                request,
                f"{document.file_name}: document {document.collection.code}--{document.number}; "
                "the ingest worker opens it and reads its pages.",
            )
        if len(created) == 1 and len(uploads) == 1:
            return redirect(created[0])
        if created:
            return redirect("ingest:home")
        status = 400 if wait is None else 429
    elif request.method == "POST":
        status = 400
    documents = list(selectors.documents_recent(limit=50))
    context = {
        "form": form,
        "budget": selectors.ingest_budget(user_id=request.user.pk, now=timezone.now()),
        "documents": documents,
        "any_working": any(d.is_working for d in documents),
        "can_add_collection": ADDING_COLLECTIONS.allows(request.user),
    }
    if request.htmx and request.method == "GET":
        return render(request, "ingest/partials/_document_rows.html", context)
    response = render(request, "ingest/home.html", context, status=status)
    if wait is not None:
        response["Retry-After"] = str(wait)
    return response


@login_required
@requires(ADDING_COLLECTIONS)
def collection_new(request: HttpRequest) -> HttpResponse:
    form = CollectionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            collection = dataset_services.collection_create(user=request.user, **form.cleaned_data)
        except ApplicationError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(request, f"Collection {collection.name} ({collection.code}) created.")
            return redirect("ingest:home")
    status = 400 if request.method == "POST" else 200
    return render(request, "ingest/collection_new.html", {"form": form}, status=status)


@login_required
@requires(INGESTING)
def document(request: HttpRequest, document_id: int) -> HttpResponse:
    view = selectors.document_view(document_id=document_id)
    template = "ingest/partials/_document_progress.html" if request.htmx else "ingest/document.html"
    return render(request, template, {"view": view, "document": view.document})


@login_required
@requires(INGESTING)
def page_image(request: HttpRequest, document_id: int, number: int) -> FileResponse:
    document = selectors.document_get(document_id=document_id)
    page = selectors.page_get(document=document, number=number)
    if not page.image_path:
        raise Http404("this page has no image")
    return _stream(page.image_path, "image/jpeg")


@login_required
@requires(INGESTING)
def crop(request: HttpRequest, candidate_id: int) -> FileResponse:
    candidate = selectors.candidate_get(candidate_id=candidate_id)
    if not candidate.crop_path:
        raise Http404("this candidate has no image")
    return _stream(candidate.crop_path, "image/png")


@login_required
@requires(INGESTING)
def candidate(request: HttpRequest, candidate_id: int) -> HttpResponse:
    review = selectors.candidate_review(candidate_id=candidate_id, editor=request.user)
    payload = api.candidate_payload(review)
    preview = selectors.preview(review.candidate.accepted_csv or review.candidate.machine_csv)
    context = {
        "review": review,
        "candidate": review.candidate,
        "payload": payload,
        "preview": preview,
        "flagged": selectors.flagged_cells(review.candidate),
        "title_max": TABLE_TITLE_MAX_CHARS,
        "notes_max": TABLE_NOTES_MAX_CHARS,
    }
    return render(request, "ingest/candidate.html", context)


@login_required
@requires(INGESTING)
def page(request: HttpRequest, document_id: int, number: int) -> HttpResponse:
    """A page without a candidate under review: its image, its boxes, and drawing a new one."""
    document = selectors.document_get(document_id=document_id)
    page = selectors.page_get(document=document, number=number)
    if not page.image_path:
        raise Http404("this page was not read, so it has no image to draw on")
    payload = api.page_payload_for_drawing(document, page)
    context = {"document": document, "page": page, "payload": payload, "preview": None}
    return render(request, "ingest/candidate.html", context)


@login_required
@require_POST
@requires(INGESTING)
def reject(request: HttpRequest, candidate_id: int) -> HttpResponse:
    """The review page's Reject without JavaScript."""
    review = selectors.candidate_review(candidate_id=candidate_id, editor=request.user)
    try:
        services.candidate_reject(
            editor=request.user, candidate=review.candidate, reason=request.POST.get("reason", "")
        )
    except ApplicationError as exc:
        messages.error(request, f"Not rejected: {exc.message}.")
        return redirect(review.candidate)
    messages.success(request, f"Candidate {review.candidate.table_id_for()} rejected.")
    return redirect(api.candidate_payload(review)["next"])


@login_required
@require_POST
@requires(INGESTING)
def image(request: HttpRequest, candidate_id: int) -> HttpResponse:
    """The image of a web page's table, uploaded on its review page."""
    candidate = selectors.candidate_get(candidate_id=candidate_id)
    upload = request.FILES.get("image")
    try:
        if upload is None:
            raise ApplicationError("choose an image file", field="image")
        services.candidate_image_attach(
            editor=request.user, candidate=candidate, data=upload.read(services.MAX_IMAGE_BYTES + 1)
        )
    except ApplicationError as exc:
        messages.error(request, f"Image not kept: {exc.message}.")
    else:
        messages.success(request, "The image is kept; it becomes the table's image.")
    return redirect(candidate)


def quality(request: HttpRequest) -> HttpResponse:
    return render(request, "ingest/quality.html", {"report": selectors.quality_report()})
