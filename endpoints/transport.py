"""Where a chat request may go and what may come back: every check on the wire, in the one
httpx2 transport that the openai SDK sends through (``endpoints.client``). No database.

- **The checked address.** Each new connection resolves the host once, checks every address
  it resolves to (``endpoints.addresses``; one refused address refuses the host) and
  connects to an address it checked, so a second DNS answer (rebinding) cannot switch it.
  HTTPS still verifies the certificate against the host name and sends it as SNI. For
  someone's own endpoint, the registered endpoints that answer without a key are off limits
  too (``ChatTarget.off_limits``).
- **Only the base URL, only what we mean to send.** A request goes to ``{base_url}/chat/
  completions`` (POST) or ``{base_url}/models`` (GET, the models it serves) and nowhere
  else, with a fixed set of headers and the target's own key (or
  none): what the SDK adds from the environment (``OPENAI_ORG_ID``,
  ``OPENAI_CUSTOM_HEADERS``, …) or about the machine never leaves, and no cookie comes
  back. Redirects are never followed (the client is made with ``follow_redirects=False``;
  a 3xx is the caller's to refuse).
- **Size and time.** A reply is read up to ``MAX_REPLY_BYTES`` (a longer announced length is
  refused before reading), as sent: nothing is decompressed, so a small gzip body cannot
  grow past the limit. A request has ``timeout`` seconds in all, connecting and the whole
  reply included: every socket read or write waits at most until that deadline, so a server
  that drips a byte at a time ends with the deadline.
- **A proxy.** When an HTTP(S) proxy applies to the endpoint (the usual ``*_PROXY`` and
  ``NO_PROXY`` variables), requests go through it. The proxy resolves the host, so the
  check is of what the host resolves to here; a name that does not resolve here is refused
  unless private addresses are allowed.

Failures come out as this module's exceptions, which the SDK passes through untouched.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

from endpoints.addresses import (
    AddressRefused,
    SockAddr,
    address_check,
    literal,
    machine,
    resolve_checked,
)

# A reply of 8,192 tokens is some tens of kB; nothing a chat completion needs comes close.
MAX_REPLY_BYTES = 1024 * 1024
# Connecting is quick or not happening: a host that drops packets fails in this many seconds,
# not in the full request timeout.
CONNECT_TIMEOUT = 10.0
_ADDRESSES_TRIED = 3  # of a host's addresses, in the resolver's order
# The headers a request carries; the key is set here, from the target, never taken from it.
_SENT_HEADERS = frozenset(
    {b"host", b"content-type", b"content-length", b"accept", b"user-agent", b"connection"}
)


class TransportTimeout(Exception):
    """No reply within the timeout."""


class TransportError(Exception):
    """The endpoint could not be reached, or the connection broke."""


class TransportRefused(Exception):
    """The request may not be sent there at all (a forbidden address)."""


class ReplyTooLarge(Exception):
    """The reply went past MAX_REPLY_BYTES."""


# --- The deadline: one request at a time per thread, so the thread's own -----------------

_deadline = threading.local()


def _within_deadline(timeout: float | None, late: type[Exception]) -> float | None:
    at: float | None = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise late("past the request's deadline")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the request's deadline, and whose
    closing wakes a thread blocked reading it (a stopped run abandons its requests)."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _within_deadline(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _within_deadline(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        sock = self._inner.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _within_deadline(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def off_limits_check(
    candidates: list[SockAddr], port: int, off_limits: frozenset[tuple[str, int]]
) -> None:
    for _family, sockaddr in candidates:
        if (machine(ipaddress.ip_address(str(sockaddr[0]).split("%")[0])), port) in off_limits:
            raise AddressRefused(
                f"{sockaddr[0]} port {port} is a registered endpoint that answers without a "
                "key; choose it by name"
            )


class _Backend(httpcore2.NetworkBackend):
    """Connections for the pool. ``checked``: to the endpoint itself, resolved once, every
    address checked, and made to a checked address; otherwise (to a proxy the operator
    configured) as they are."""

    def __init__(
        self, *, checked: bool, allow_private: bool, off_limits: frozenset[tuple[str, int]]
    ) -> None:
        self._sockets = httpcore2.SyncBackend()
        self._checked = checked
        self._allow_private = allow_private
        self._off_limits = off_limits

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _within_deadline(timeout, httpcore2.ConnectTimeout)
        if not self._checked:
            return _Stream(
                self._sockets.connect_tcp(host, port, timeout, local_address, socket_options)
            )
        try:  # an AddressRefused goes up as it is: no connection failure, a refusal
            candidates = resolve_checked(host, port, allow_private=self._allow_private)
        except (OSError, UnicodeError) as exc:
            raise httpcore2.ConnectError(f"The host {host} does not resolve ({exc})") from None
        off_limits_check(candidates, port, self._off_limits)
        error: Exception = httpcore2.ConnectError(f"The host {host} has no address")
        for _family, sockaddr in candidates[:_ADDRESSES_TRIED]:
            try:
                stream = self._sockets.connect_tcp(
                    str(sockaddr[0]), port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                error = exc
                continue
            return _Stream(stream)
        raise error


def proxy_for(url: str) -> str | None:
    """The HTTP(S) proxy that the environment gives for ``url``, if one applies."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


class _CappedBody(httpx2.SyncByteStream):
    """The reply's body as it arrives, refused past MAX_REPLY_BYTES."""

    def __init__(self, stream: Iterable[bytes], closer: Any) -> None:
        self._stream = stream
        self._closer = closer

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        with _failures_mapped():
            for chunk in self._stream:
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise ReplyTooLarge
                yield chunk

    def close(self) -> None:
        _deadline.at = None
        with contextlib.suppress(Exception):
            self._closer.close()


@contextlib.contextmanager
def _failures_mapped() -> Iterator[None]:
    try:
        yield
    except AddressRefused as exc:
        raise TransportRefused(exc.message) from None
    except httpcore2.TimeoutException:
        raise TransportTimeout from None
    except (httpcore2.NetworkError, httpcore2.ProtocolError, httpcore2.ProxyError) as exc:
        raise TransportError(str(exc) or type(exc).__name__) from None
    except (OSError, ssl.SSLError) as exc:
        raise TransportError(str(exc) or type(exc).__name__) from None


class CheckedTransport(httpx2.BaseTransport):
    """The only way a request to an endpoint leaves: a POST to ``{base_url}/chat/completions``
    or a GET of ``{base_url}/models``, with ``api_key`` (if any), through the checks above.
    Safe to use from many threads, each with its own keep-alive connection."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float,
        allow_private: bool,
        off_limits: frozenset[tuple[str, int]] = frozenset(),
    ) -> None:
        base = base_url.rstrip("/")
        self._url = httpx2.URL(base + "/chat/completions")
        self._routes = {("POST", self._url), ("GET", httpx2.URL(base + "/models"))}
        self._authorization = [(b"authorization", f"Bearer {api_key}".encode())] if api_key else []
        self._timeout = timeout
        self._allow_private = allow_private
        self._off_limits = off_limits
        self._proxy = proxy_for(str(self._url))
        self._proxy_checked = False
        self._closed = False
        self._context = ssl.create_default_context()
        # A pool of one keep-alive connection per thread: a shared pool's bookkeeping, under
        # its lock, costs more CPU per request than the request, with 32 threads.
        self._local = threading.local()
        self._pools: list[httpcore2.ConnectionPool | httpcore2.HTTPProxy] = []
        self._pools_lock = threading.Lock()

    def _pool(self) -> httpcore2.ConnectionPool | httpcore2.HTTPProxy:
        pool = getattr(self._local, "pool", None)
        if pool is not None:
            return pool
        if self._proxy is None:
            pool = httpcore2.ConnectionPool(
                ssl_context=self._context,
                max_connections=1,
                network_backend=_Backend(
                    checked=True, allow_private=self._allow_private, off_limits=self._off_limits
                ),
            )
        else:
            proxy = httpx2.Proxy(self._proxy)
            if proxy.url.scheme not in ("http", "https"):
                raise TransportRefused(
                    f"Only HTTP(S) proxies are supported, not {proxy.url.scheme}"
                )
            pool = httpcore2.HTTPProxy(
                proxy_url=httpcore2.URL(
                    scheme=proxy.url.raw_scheme,
                    host=proxy.url.raw_host,
                    port=proxy.url.port,
                    target=proxy.url.raw_path,
                ),
                proxy_auth=proxy.raw_auth,
                proxy_headers=proxy.headers.raw,
                ssl_context=self._context,
                max_connections=1,
                network_backend=_Backend(checked=False, allow_private=True, off_limits=frozenset()),
            )
        with self._pools_lock:
            if self._closed:
                raise TransportError("The run stopped")
            self._pools.append(pool)
        self._local.pool = pool
        return pool

    def _check_proxied(self) -> None:
        """Where the proxy will send the request, as far as this machine can tell."""
        host = self._url.host
        port = self._url.port or (443 if self._url.scheme == "https" else 80)
        address = literal(host)
        try:
            if address is not None:
                address_check(address, allow_private=self._allow_private, host=host)
                candidates: list[SockAddr] = [(0, (str(address), port))]
            else:
                candidates = resolve_checked(host, port, allow_private=self._allow_private)
            off_limits_check(candidates, port, self._off_limits)
        except AddressRefused as exc:
            raise TransportRefused(exc.message) from None
        except (OSError, UnicodeError):
            if not self._allow_private:
                raise TransportRefused(
                    f"{host} does not resolve here, so where the proxy would send the "
                    "request cannot be checked"
                ) from None
        self._proxy_checked = True

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._closed:  # the run stopped: nothing new is sent
            raise TransportError("The run stopped")
        if (request.method, request.url) not in self._routes:
            raise TransportRefused(
                "Requests go only to the base URL's chat completions and model list"
            )
        if self._proxy is not None and not self._proxy_checked:
            self._check_proxied()
        headers = [(k, v) for k, v in request.headers.raw if k.lower() in _SENT_HEADERS]
        headers += [(b"accept-encoding", b"identity"), *self._authorization]
        _deadline.at = time.monotonic() + self._timeout
        with _failures_mapped():
            response = self._pool().handle_request(
                httpcore2.Request(
                    method=request.method.encode(),
                    url=httpcore2.URL(
                        scheme=request.url.raw_scheme,
                        host=request.url.raw_host,
                        port=request.url.port,
                        target=request.url.raw_path,
                    ),
                    headers=headers,
                    content=request.stream,
                    extensions=request.extensions,
                )
            )
        length = next((v for k, v in response.headers if k.lower() == b"content-length"), b"")
        if length.isdigit() and int(length) > MAX_REPLY_BYTES:
            response.close()
            raise ReplyTooLarge
        # Nothing is decompressed: what is counted is what is read.
        kept = [(k, v) for k, v in response.headers if k.lower() != b"content-encoding"]
        return httpx2.Response(
            status_code=response.status,
            headers=kept,
            stream=_CappedBody(response.stream, response),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close every connection, aborting requests in flight; send nothing after."""
        with self._pools_lock:
            self._closed = True
            pools = list(self._pools)
        for pool in pools:
            with contextlib.suppress(Exception):
                pool.close()
