"""The site's own views: where logging in leads, the 403 and CSRF pages, media files and the
favicon. The pages of the dataset, the boards and the rest are their apps'."""

from __future__ import annotations

import posixpath
from typing import Any

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.views.static import serve


def _leaves_media_root(path: str) -> bool:
    """A ``..`` part (``%2f`` arrives decoded), an absolute path, a backslash or a NUL."""
    return "\x00" in path or "\\" in path or posixpath.isabs(path) or ".." in path.split("/")


def media(request: HttpRequest, path: str) -> HttpResponse:
    # A probe for files outside MEDIA_ROOT is a plain 404: Django's own refusal
    # (SuspiciousFileOperation) would log its traceback as an error for every such request.
    if _leaves_media_root(path):
        raise Http404("No such file")
    try:
        # MEDIA_ROOT is read per request, not frozen when the URLconf loads.
        return serve(request, path, document_root=settings.MEDIA_ROOT)
    except SuspiciousFileOperation:
        raise Http404("No such file") from None


def landing(request: HttpRequest) -> HttpResponse:
    """Where logging in leads: each role to its own workspace."""
    return redirect(workspace_url(request.user))


def workspace_url(user: Any) -> str:
    """Annotators, adjudicators and admins work in the annotation hub; researchers in their
    submissions; anyone else starts at the home page."""
    if user.is_authenticated:
        if any(user.has_perm(p) for p in _ANNOTATION_PERMISSIONS):
            return reverse("annotate:hub")
        if user.has_perm("leaderboard.add_submission"):
            return reverse("leaderboard:my_submissions")
    return reverse("home")


_ANNOTATION_PERMISSIONS = (
    "annotation.annotate_table",
    "annotation.write_question",
    "annotation.verify_question",
)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The 403 page: why, and what to do. ``Forbidden`` refusals carry their own advice."""
    reason = str(exception) or "your account may not open this page"
    roles = (
        sorted(request.user.groups.values_list("name", flat=True))
        if request.user.is_authenticated
        else []
    )
    context = {
        "reason": reason[:1].upper() + reason[1:],
        "hint": getattr(exception, "hint", ""),
        "roles": roles,
        "workspace": workspace_url(request.user),
    }
    return render(request, "403.html", context, status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Django's CSRF refusal as a page of the site, saying what to do; nothing was saved."""
    if "cookie" in reason.lower():
        why = "Your browser did not send this site's security cookie with the form."
    else:
        why = "The form's security token no longer matches your session."
    context = {"reason": why, "workspace": workspace_url(request.user)}
    return render(request, "403_csrf.html", context, status=403)


def favicon(request: HttpRequest) -> HttpResponse:
    # Read per request: the static file's hashed name exists only after collectstatic.
    return redirect(static("favicon.png"), permanent=True)
