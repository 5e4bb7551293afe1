"""Where a form sends the person back: only ever to a page of this site."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def local_url(request: HttpRequest, url: str, fallback: str) -> str:
    """``url`` if it is a page of this site (a path, or this host), else ``fallback``: a
    ``next`` field or a stored link never sends anyone elsewhere."""
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return fallback
