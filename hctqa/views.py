from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.selectors import dataset_overview


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"overview": dataset_overview()})
