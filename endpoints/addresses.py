"""Where an endpoint's requests may go, decided on the addresses a host name resolves to.

Every address is judged after unwrapping the IPv6 forms that carry an IPv4 address
(IPv4-mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo): the
packets end up at that IPv4 address, so ``[::ffff:169.254.169.254]`` is the metadata service.

- **forbidden**, always: link-local (169.254.0.0/16, fe80::/10, where cloud metadata services
  answer), cloud metadata addresses outside it, "this network" (0.0.0.0/8, which Linux
  connects to the local host), multicast, reserved and broadcast addresses, and the
  deprecated IPv4-compatible form.
- **private**: loopback, private ranges, shared address space (100.64.0.0/10), unique-local
  IPv6 and every other address that is not globally reachable. Only endpoints an admin
  registered may use them (or all, with INFERENCE_ALLOW_PRIVATE_ENDPOINTS).
- **public**: the rest.

No Django here: the chat client checks each connection with these functions, and connects
to the very address it checked, so a second DNS answer (rebinding) cannot switch it.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Literal

Reach = Literal["public", "private", "forbidden"]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
SockAddr = tuple[int, tuple]  # (family, sockaddr) as socket.connect takes it

_SEVERITY: dict[Reach, int] = {"public": 0, "private": 1, "forbidden": 2}
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the network's prefix
# length, so it cannot be read back; treated as private.
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
# Metadata services that do not live in link-local space: AWS over IPv6, Alibaba Cloud.
_METADATA = frozenset(ipaddress.ip_address(a) for a in ("fd00:ec2::254", "100.100.100.200"))


class AddressRefused(Exception):
    """The endpoint's host is, or resolves to, an address requests may not go to."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _ipv4(address: ipaddress.IPv4Address) -> tuple[Reach, str]:
    if address in _METADATA:
        return "forbidden", "a cloud metadata service"
    if address.is_link_local:
        return "forbidden", "link-local (169.254.x.x, where cloud metadata services answer)"
    if address in _THIS_NETWORK:
        return "forbidden", "in 0.0.0.0/8, which reaches the machine itself"
    if address.is_multicast or address.is_reserved or address == ipaddress.IPv4Address(2**32 - 1):
        return "forbidden", "not a host's address"
    if address.is_loopback:
        return "private", "a loopback address"
    if address.is_global:
        return "public", "public"
    return "private", "a private address"


def _ipv6(address: ipaddress.IPv6Address) -> tuple[Reach, str]:
    if address.ipv4_mapped is not None:
        return _ipv4(address.ipv4_mapped)
    if address in _NAT64:
        return _ipv4(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address in _NAT64_LOCAL:
        return "private", "a local-use NAT64 address"
    if address in _METADATA:
        return "forbidden", "a cloud metadata service"
    if address.is_link_local:
        return "forbidden", "link-local (fe80::/10)"
    if address.is_unspecified or address.is_multicast:
        return "forbidden", "not a host's address"
    if address.is_loopback:
        return "private", "a loopback address"
    if address in _IPV4_COMPATIBLE:
        return "forbidden", "a deprecated IPv4-compatible address"
    verdict: tuple[Reach, str] = (
        ("public", "public")
        if address.is_global and not address.is_site_local
        else ("private", "a private address")
    )
    # 6to4 and Teredo tunnel to the IPv4 addresses they carry: the worst of them counts.
    carried = [address.sixtofour] if address.sixtofour is not None else []
    carried += list(address.teredo or ())
    for inner in carried:
        judged = _ipv4(inner)
        if _SEVERITY[judged[0]] > _SEVERITY[verdict[0]]:
            verdict = judged
    return verdict


def classify(address: IPAddress) -> tuple[Reach, str]:
    """How far requests may go to this address, and why, in words for an error message."""
    if isinstance(address, ipaddress.IPv4Address):
        return _ipv4(address)
    return _ipv6(address)


def address_check(address: IPAddress, *, allow_private: bool, host: str = "") -> None:
    """Raise AddressRefused unless requests may go to ``address``."""
    reach, why = classify(address)
    if reach == "public" or (reach == "private" and allow_private):
        return
    shown = str(address) if not host or host.strip("[]") == str(address) else f"{host} ({address})"
    if reach == "forbidden":
        raise AddressRefused(f"{shown} is {why}, which is never a model endpoint")
    raise AddressRefused(
        f"{shown} is {why}; only endpoints an admin registered may use loopback and private "
        "addresses"
    )


def machine(address: IPAddress) -> str:
    """One spelling per machine an address reaches: the IPv4 address an IPv6 form carries
    (mapped, NAT64), and every loopback address as one (a server listening on all of them
    answers on each)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in _NAT64:
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return "loopback" if address.is_loopback else str(address)


def literal(host: str) -> IPAddress | None:
    """The address, if the host is written as one (``[::1]``, ``127.0.0.1``)."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def resolve_checked(host: str, port: int, *, allow_private: bool) -> list[SockAddr]:
    """Every address ``host`` resolves to, each checked: one refused address refuses the host,
    so a name cannot pair a public address with a private one and hope for the fallback.
    OSError when the name does not resolve."""
    infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    out: list[SockAddr] = []
    for family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        address_check(address, allow_private=allow_private, host=host)
        if (family, sockaddr) not in out:
            out.append((family, sockaddr))
    return out
