"""A ceiling on request bodies, checked before anything reads one.

Django streams a multipart upload of any size to a temporary file before a view sees it, so
the per-file limits (``SUBMISSION_MAX_BYTES``, ``INGEST_MAX_BYTES``) alone would let one
request fill the disk first. A body without a ``Content-Length`` is never read by Django.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.REQUEST_MAX_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit and length > limit:
            return too_large(request, length=length, limit=limit)
        return self.get_response(request)


def too_large(request: HttpRequest, *, length: int, limit: int) -> HttpResponse:
    message = (
        f"This request is {filesizeformat(length)}; at most {filesizeformat(limit)} can be sent at "
        "once. Send fewer or smaller files at a time."
    )
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=413)
    return render(request, "413.html", {"message": message}, status=413)
