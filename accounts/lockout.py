"""Failed log-ins counted per address as well: django-axes counts them per user and address
(LOGIN_FAILURE_LIMIT), which a client trying one password on many usernames never reaches.
This handler adds a count of every failure from an address (an IPv4 address or an IPv6 /64,
``addresses.client_network``), whichever the username, against a higher limit of its own
(LOGIN_FAILURE_LIMIT_PER_ADDRESS): axes applies one limit to all its counts. Both counts
read axes' own records, so every log-in axes watches (the form, the admin, the API token
endpoint) is limited alike, and the lockout answer is the same."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.conf import settings
from django.db.models import QuerySet, Sum
from django.http import HttpRequest
from django.utils import timezone


def _address_attempts(request: HttpRequest) -> QuerySet[AccessAttempt]:
    """The failures recorded for the request's address within the cool-off, every user's."""
    return AccessAttempt.objects.filter(
        ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
        attempt_time__gte=get_cool_off_threshold(request),
    )


def _address_limit_reached(request: HttpRequest) -> bool:
    limit = settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS
    if limit <= 0:
        return False
    failures = _address_attempts(request).aggregate(n=Sum("failures_since_start"))["n"] or 0
    return failures >= limit


class LockoutHandler(AxesDatabaseHandler):
    """axes' database handler, locking an address out on its failures across usernames too."""

    def is_locked(self, request: HttpRequest, credentials: dict | None = None) -> bool:
        return super().is_locked(request, credentials) or _address_limit_reached(request)

    def user_login_failed(
        self, sender: Any, credentials: dict, request: HttpRequest | None = None, **kwargs: Any
    ) -> None:
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is None or request.axes_locked_out:  # type: ignore[attr-defined]
            return
        if self.is_whitelisted(request, credentials) or not _address_limit_reached(request):
            return
        # As axes marks a lockout: its middleware answers with LOCKOUT_CALLABLE's response.
        request.axes_locked_out = True  # type: ignore[attr-defined]
        request.axes_credentials = credentials  # type: ignore[attr-defined]
        user_locked_out.send(
            "axes",
            request=request,
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
        )


@dataclass(frozen=True)
class Lockout:
    """Why a client is locked out, and until when."""

    by_address: bool  # the address's failures across usernames (else the user's from it)
    until: datetime

    @property
    def seconds_left(self) -> int:
        return max(1, math.ceil((self.until - timezone.now()).total_seconds()))


def _locked_until(attempts: QuerySet[AccessAttempt], limit: int) -> datetime | None:
    """When a count of failures within the cool-off stops reaching ``limit``: the newest
    failures that reach it age out, the oldest of them last. None if it does not reach it.
    A record holds all its failures at its latest time (axes' own count reads it so)."""
    reached = 0
    rows = attempts.order_by("-attempt_time").values_list("attempt_time", "failures_since_start")
    for attempt_time, failures in rows:
        reached += failures
        if reached >= limit:
            return attempt_time + get_cool_off()
    return None


def lockout_of(request: HttpRequest, credentials: dict | None) -> Lockout:
    """The lockout in force for this request: the one that ends last when both are."""
    AxesProxyHandler.update_request(request)
    handler = AxesProxyHandler.get_implementation()
    found: list[Lockout] = []
    user_limit = get_failure_limit(request, credentials)
    for attempts in handler.get_user_attempts(request, credentials):
        if (until := _locked_until(attempts, user_limit)) is not None:
            found.append(Lockout(by_address=False, until=until))
    address_limit = settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS
    if address_limit > 0 and (until := _locked_until(_address_attempts(request), address_limit)):
        found.append(Lockout(by_address=True, until=until))
    if not found:  # refused by axes for another reason: a whole cool-off from now
        return Lockout(by_address=False, until=timezone.now() + get_cool_off())
    return max(found, key=lambda lockout: lockout.until)
