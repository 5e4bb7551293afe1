"""Which address a request came from, for the throttles that count per client."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's IP address. Behind ``TRUSTED_PROXY_COUNT`` proxies it is the entry the
    outermost of them appended to X-Forwarded-For; entries to the left of it are whatever the
    client sent, so they are never trusted. Django's, DRF's and django-axes' views of the
    client all come from here (axes' by way of ``client_network``)."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies <= 0:
        return remote
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    if len(forwarded) < proxies:
        return remote
    return forwarded[-proxies]


def address_group(address: str) -> str:
    """The unit a per-address limit counts: an IPv4 address, or an IPv6 /64 (one customer's
    network: a single host can pick any address in it)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def client_network(request: HttpRequest) -> str | None:
    """The client's address group (``address_group``) as one address, for a store that keeps
    addresses (django-axes' failed log-ins): an IPv4 address, or the first address of an
    IPv6 /64. None when the client's address is not one."""
    group = address_group(client_address(request))
    if group == "unknown":
        return None
    return str(ipaddress.ip_network(group, strict=False).network_address)
