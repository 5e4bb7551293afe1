"""The tracks' pages: what each track measures, its items and how to submit to it; the
admins' build of the items, followed live."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from pagecache.pages import public_page
from plumbing.errors import ApplicationError
from plumbing.permissions import requires
from tracks import selectors
from tracks.permissions import BUILDING_ITEMS
from tracks.registry import TRACKS
from tracks.services.builds import item_build_start


@public_page
def index(request: HttpRequest) -> HttpResponse:
    counts = {c.info.slug: c for c in selectors.track_counts()}
    cards = [
        {"info": info, "counts": counts.get(slug), "origins": selectors.gold_origins(info)}
        for slug, info in TRACKS.items()
    ]
    context = {
        "cards": cards,
        "qa_counts": selectors.qa_counts(),
        "source_labels": selectors.source_labels(),
        "ground_truth_sets": selectors.ground_truth_sets(),
        "can_build": BUILDING_ITEMS.allows(request.user),
        "build": selectors.latest_build(),
    }
    return render(request, "tracks/index.html", context)


@login_required
@requires(BUILDING_ITEMS)
def build_status(request: HttpRequest) -> HttpResponse:
    return render(
        request, "tracks/partials/_build_status.html", {"build": selectors.latest_build()}
    )


@login_required
@require_POST
@requires(BUILDING_ITEMS)
def build_start(request: HttpRequest) -> HttpResponse:
    try:
        item_build_start(user=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "The build is queued; this page follows it.")
    return redirect("tracks:index")
