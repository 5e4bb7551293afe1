"""Release pages: the list (and, for admins, cutting one), a release, a build's progress, and
the downloads."""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotModified,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_POST, require_safe
from django_htmx.http import HttpResponseClientRefresh

from pagecache.pages import public_page
from plumbing.errors import ApplicationError
from plumbing.permissions import requires
from releases import selectors, services
from releases.models import Edition, Release
from releases.permissions import FOLLOWING_BUILDS

_TYPES = {
    ".jsonl": "application/jsonl",
    ".json": "application/json",
    ".parquet": "application/vnd.apache.parquet",
    ".gz": "application/gzip",
    ".md": "text/markdown; charset=utf-8",
}


def _release_context(
    release: Release, request: HttpRequest, hub: list[selectors.HubRepo]
) -> dict[str, object]:
    archives = selectors.release_archives(release=release, user=request.user)
    downloads = selectors.release_downloads(release=release, user=request.user)
    return {
        "release": release,
        "editions": [
            {"name": edition, "archive": archives.get(edition), "rows": rows}
            for edition, rows in downloads.items()
        ],
        "public_archive": archives.get(Edition.PUBLIC),
        "hub": hub,
        "changes": selectors.changelog_rows(release),
    }


def _list_context(request: HttpRequest, form: dict[str, str] | None = None) -> dict[str, object]:
    can_cut = selectors.can_cut_release(request.user)
    releases = list(selectors.release_list())
    hub = selectors.releases_on_hub(releases)
    return {
        "releases": [_release_context(r, request, hub[r.pk]) for r in releases],
        "can_cut": can_cut,
        "active_build": selectors.active_build(),
        "builds": selectors.recent_builds(limit=5) if can_cut else [],
        "form": form or {"version": "", "title": "", "notes": ""},
    }


@require_GET
@public_page
def release_list(request: HttpRequest) -> HttpResponse:
    if request.htmx and "build" in request.GET:
        # The notice of a build under way asks how it goes: admins' only, as the notice is.
        FOLLOWING_BUILDS.check(request.user)
        active = selectors.active_build()
        if active is not None and str(active.pk) == request.GET["build"]:
            context = {"active_build": active}
            return render(request, "releases/partials/_active_build.html", context)
        return HttpResponseClientRefresh()
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
    # No banner: the build page says how the build goes, and follows it.
    return redirect("releases:build", build_id=build.pk)


@require_GET
@public_page
def release_detail(request: HttpRequest, version: str) -> HttpResponse:
    release = selectors.release_get(version=version)
    hub = selectors.releases_on_hub([release])[release.pk]
    context = {"release": release, "item": _release_context(release, request, hub)}
    return render(request, "releases/detail.html", context)


@login_required
@require_GET
@requires(FOLLOWING_BUILDS)
def build_detail(request: HttpRequest, build_id: int) -> HttpResponse:
    build = selectors.build_get(build_id=build_id)
    template = "releases/partials/_build.html" if request.htmx else "releases/build.html"
    return render(request, template, {"build": build})


# One range of bytes: "first-last", "first-" or "-suffix" (RFC 9110, section 14.1.2).
_RANGE = re.compile(r"bytes=(\d{0,19})-(\d{0,19})")
_RANGE_BLOCK = 1 << 16


class _Unsatisfiable(Exception):
    pass


def _byte_range(request: HttpRequest, etag: str, size: int) -> tuple[int, int] | None:
    """The bytes a GET asks for, ``(first, last)`` inclusive, or None for the whole file: no
    ``Range``, one this server does not serve (several ranges, another unit, bad syntax, which
    RFC 9110 lets a server ignore) or an ``If-Range`` naming another version of the file.
    Raises ``_Unsatisfiable`` for a range that starts past the end."""
    header = request.headers.get("Range")
    if request.method != "GET" or not header:
        return None
    if_range = request.headers.get("If-Range")
    if if_range is not None and if_range != etag:
        return None
    match = _RANGE.fullmatch(header.replace(" ", ""))
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = match.groups()
    if first == "":  # the last N bytes
        if int(last) == 0 or size == 0:
            raise _Unsatisfiable
        return max(0, size - int(last)), size - 1
    if last and int(last) < int(first):
        return None
    if int(first) >= size:
        raise _Unsatisfiable
    return int(first), min(int(last), size - 1) if last else size - 1


def _slice(location: Path, first: int, last: int) -> Iterator[bytes]:
    with open(location, "rb") as handle:
        handle.seek(first)
        left = last - first + 1
        while left:
            data = handle.read(min(left, _RANGE_BLOCK))
            if not data:
                return
            left -= len(data)
            yield data


def _file_body(
    request: HttpRequest, location: Path, *, etag: str, size: int, content_type: str
) -> HttpResponse:
    """A file that is there: its headers alone (HEAD), the one range asked for (206, or 416
    past its end) or all of it."""
    try:
        byte_range = _byte_range(request, etag, size)
    except _Unsatisfiable:
        response = HttpResponse(status=416, content_type=content_type)
        response["Content-Range"] = f"bytes */{size}"
        return response
    if request.method == "HEAD":
        response = HttpResponse(content_type=content_type)
    elif byte_range is not None:
        first, last = byte_range
        response = StreamingHttpResponse(
            _slice(location, first, last), status=206, content_type=content_type
        )
        response["Content-Range"] = f"bytes {first}-{last}/{size}"
        size = last - first + 1
    else:
        try:
            handle = open(location, "rb")  # noqa: SIM115 - FileResponse closes it
        except OSError:
            raise Http404("The file is missing on the server") from None
        response = FileResponse(handle, content_type=content_type)
    response["Content-Length"] = str(size)
    return response


@require_safe
def release_download(request: HttpRequest, version: str, edition: str, path: str) -> HttpResponse:
    """A release file, as it was written when the release was cut. Never built per request:
    the file is streamed from disk (the WSGI server's sendfile where it has one). ``HEAD``
    gives the headers alone, and one ``Range`` of bytes is served (206), so that download
    tools can check a file and resume it; whoever may not have the file gets neither."""
    release = selectors.release_get(version=version)
    location, entry = selectors.release_file(
        release=release, edition=edition, path=path, user=request.user
    )
    etag = f'"{entry["sha256"]}"'
    size = entry["size"]
    private = edition == Edition.FULL
    suffix = "." + path.rsplit(".", 1)[-1] if "." in path else ""
    content_type = _TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    if request.headers.get("If-None-Match") == etag:
        response: HttpResponse = HttpResponseNotModified()
    elif not location.is_file():
        raise Http404(f"The file {path} of release {version} is missing on the server")
    else:
        response = _file_body(request, location, etag=etag, size=size, content_type=content_type)
        if response.status_code != 416:
            name = selectors.download_name(release=release, edition=edition, path=path)
            response["Content-Disposition"] = content_disposition_header(True, name)
    response["Accept-Ranges"] = "bytes"
    response["ETag"] = etag
    # A release never changes: caches may keep the public files for good.
    response["Cache-Control"] = (
        "private, no-store" if private else "public, max-age=31536000, immutable"
    )
    return response
