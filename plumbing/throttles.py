"""DRF's rate throttles with their rates read from API_THROTTLE_RATES on each request (DRF's
own read them once, at import), and the client's address group (an IPv4 address or an IPv6 /64) from
plumbing.client_addresses."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import throttling

from plumbing.client_addresses import address_group, client_address


class _Configured:
    scope: str | None

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope or "")

    def get_ident(self, request: Any) -> str:
        # An IPv6 host may use any address of its /64: counting each apart would be no limit.
        return address_group(client_address(request))


class AnonRateThrottle(_Configured, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(_Configured, throttling.UserRateThrottle):
    pass


class ScopedRateThrottle(_Configured, throttling.ScopedRateThrottle):
    """For views with a ``throttle_scope``: per user, or per address for anonymous clients."""


class PageRateLimit(ScopedRateThrottle):
    """The same per-user or per-address counting for an HTML page's costly step (a rate in
    API_THROTTLE_RATES under ``scope``; none: no limit). Only the step is counted, so a page
    that serves a cached result costs nothing."""

    def __init__(self, scope: str) -> None:
        super().__init__()
        self.page_scope = scope

    def allows(self, request: Any) -> bool:
        view = type("Page", (), {"throttle_scope": self.page_scope})()
        return self.allow_request(request, view)

    def retry_after_seconds(self) -> int:
        return max(1, round(self.wait() or 1))


def seconds_to_wait(request: Any, scope: str) -> int | None:
    """Count one use of ``scope``'s budget for the request's person (or address): None while
    the budget lasts, else the seconds until it has room again. The page and the API call
    this with the same scope, so they share one budget."""
    limit = PageRateLimit(scope)
    return None if limit.allows(request) else limit.retry_after_seconds()
