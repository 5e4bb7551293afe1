from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.static import serve

from annotation.selectors import dataset_overview


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"overview": dataset_overview(viewer=request.user)})


def media(request: HttpRequest, path: str) -> HttpResponse:
    # MEDIA_ROOT is read per request, not frozen when the URLconf loads.
    return serve(request, path, document_root=settings.MEDIA_ROOT)
