"""Release pages: the list (and, for admins, cutting one), a release, a build's progress, and
the downloads."""

from __future__ import annotations

import mimetypes

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from hctqa.errors import ApplicationError
from releases import selectors, services
from releases.models import Edition, Release

_TYPES = {
    ".jsonl": "application/jsonl",
    ".json": "application/json",
    ".parquet": "application/vnd.apache.parquet",
    ".gz": "application/gzip",
    ".md": "text/markdown; charset=utf-8",
}


def _release_context(release: Release, request: HttpRequest) -> dict[str, object]:
    return {
        "release": release,
        "downloads": selectors.release_downloads(release=release, user=request.user),
        "changes": selectors.changelog_rows(release),
    }


def _list_context(request: HttpRequest, form: dict[str, str] | None = None) -> dict[str, object]:
    can_cut = selectors.can_cut_release(request.user)
    return {
        "releases": [_release_context(r, request) for r in selectors.release_list()],
        "can_cut": can_cut,
        "active_build": selectors.active_build(),
        "builds": selectors.recent_builds(limit=5) if can_cut else [],
        "form": form or {"version": "", "title": "", "notes": ""},
    }


@require_GET
def release_list(request: HttpRequest) -> HttpResponse:
    return render(request, "releases/list.html", _list_context(request))


@login_required
@require_POST
def release_cut(request: HttpRequest) -> HttpResponse:
    form = {k: request.POST.get(k, "") for k in ("version", "title", "notes")}
    try:
        build = services.release_build_start(user=request.user, **form)
    except ApplicationError as exc:
        messages.error(request, f"No release was started: {exc.message}.")
        context = {**_list_context(request, form), "error_field": exc.field}
        return render(request, "releases/list.html", context, status=400)
    messages.success(request, f"Release {build.version} is being built.")
    return redirect("releases:build", build_id=build.pk)


@require_GET
def release_detail(request: HttpRequest, version: str) -> HttpResponse:
    release = selectors.release_get(version=version)
    context = {"release": release, "item": _release_context(release, request)}
    return render(request, "releases/detail.html", context)


@login_required
@require_GET
def build_detail(request: HttpRequest, build_id: int) -> HttpResponse:
    if not selectors.can_cut_release(request.user):
        raise PermissionDenied("Only admins see release builds")
    build = selectors.build_get(build_id=build_id)
    template = "releases/partials/_build.html" if request.htmx else "releases/build.html"
    return render(request, template, {"build": build})


@require_GET
def release_download(request: HttpRequest, version: str, edition: str, path: str) -> HttpResponse:
    """A release file, as it was written when the release was cut. Never built per request:
    the file is streamed from disk (the WSGI server's sendfile where it has one)."""
    release = selectors.release_get(version=version)
    location, entry = selectors.release_file(
        release=release, edition=edition, path=path, user=request.user
    )
    etag = f'"{entry["sha256"]}"'
    private = edition == Edition.FULL
    if request.headers.get("If-None-Match") == etag:
        response: HttpResponse = HttpResponseNotModified()
    else:
        try:
            handle = open(location, "rb")  # noqa: SIM115 - FileResponse closes it
        except OSError:
            raise Http404(
                f"The file {path} of release {version} is missing on the server"
            ) from None
        name = f"hctqa-{release.version}-{edition}-{path.replace('/', '-')}"
        suffix = "." + path.rsplit(".", 1)[-1] if "." in path else ""
        content_type = (
            _TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"
        )
        response = FileResponse(
            handle, as_attachment=True, filename=name, content_type=content_type
        )
        response["Content-Length"] = str(entry["size"])
    response["ETag"] = etag
    # A release never changes: caches may keep the public files for good.
    response["Cache-Control"] = (
        "private, no-store" if private else "public, max-age=31536000, immutable"
    )
    return response
