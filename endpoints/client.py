"""Chat completions against an OpenAI-compatible endpoint: the one client that question
generation and inference runs share, so every check on where a request goes lives here. No
database access: the caller saves what comes back.

- ``ChatClient.complete`` sends one request with retries (429s, 5xx, timeouts and connection
  errors, with exponential back-off, jitter and the server's Retry-After).
- ``ChatPool`` keeps many in flight: a pool of daemon threads, each with its own keep-alive
  connection, taking requests from a job queue and putting one result each on a results queue.

Where requests go:

- Each new connection resolves the host, checks every address it resolves to
  (``endpoints.addresses``) and connects to the address it checked, so DNS rebinding cannot
  switch it. HTTPS keeps verifying the certificate against the host name (and sends it as
  SNI).
- Redirects are never followed (a 3xx stops the run): the key goes only to the base URL.
- Replies are read up to ``MAX_REPLY_BYTES``, and a request gets ``timeout_seconds`` in all,
  however slowly the server drips its reply. An answer longer than the target's
  ``max_content_chars`` is refused. Timeouts and connection failures in a row stop the
  client (``unreachable_limit``): an endpoint that never finishes a reply cannot hold a
  worker for every question's retries.
- A researcher's own endpoint gets no detail of its error pages back: the status and, at
  most, a short excerpt of an OpenAI-style error message.

Why threads and the standard library's ``http.client`` rather than the openai client: the
work per request is what limits a run on a small machine, since every thread shares one
interpreter. Measured on two cores against a 100 ms server with 32 in flight: the openai
client costs about 2 ms of CPU per request (request options, response models) and reaches
about 280 requests/s; ``httpx2`` about 0.9 ms; ``http.client`` about 0.3 ms. The wire format
is the same: ``POST {base_url}/chat/completions`` with a bearer key. When an HTTP(S) proxy
applies to the endpoint, requests go through ``httpx2``, which speaks to proxies.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import ipaddress
import json
import queue
import random
import re
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import httpx2

from endpoints.addresses import (
    AddressRefused,
    SockAddr,
    address_check,
    literal,
    machine,
    resolve_checked,
)
from hctqa.core import safe_json
from hctqa.core.wording import counted

Outcome = Literal["answered", "rejected", "failed", "fatal"]

# Worth another try: the server is busy, overloaded or briefly down.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
# The endpoint, key or model is wrong: every other question would fail the same way.
FATAL_STATUSES = frozenset({401, 403, 404})
_ERROR_TEXT = 500  # characters of an error body kept, for an admin-registered endpoint
_OWN_ERROR_TEXT = 160  # characters of an error message kept, for anyone else's
# A reply of 8,192 tokens is some tens of kB; nothing a chat completion needs comes close.
MAX_REPLY_BYTES = 1024 * 1024
_ADDRESSES_TRIED = 3  # of a host's addresses, in the resolver's order


@dataclass(frozen=True)
class ChatTarget:
    """Where requests go and how. ``allow_private``: loopback and private addresses may be
    reached (endpoints an admin registered). ``error_detail``: error bodies are kept whole
    enough to read (admin-registered endpoints); otherwise only a short excerpt."""

    base_url: str
    api_key: str = field(repr=False)
    model: str
    temperature: float
    max_tokens: int
    allow_private: bool = False
    error_detail: bool = False
    # An answer longer than this is refused (None: no limit but MAX_REPLY_BYTES). What is
    # kept is stored, cached and scored: a hostile endpoint's megabyte per question, times
    # every question of a run, would fill the database and the worker's memory.
    max_content_chars: int | None = None
    # Whose credential this is, for the response cache: a keyed hash, never the key.
    cache_scope: str = ""
    # (machine, port) that no connection goes to (``addresses.machine``): for someone's own
    # endpoint, the registered endpoints that answer without a key.
    off_limits: frozenset[tuple[str, int]] = frozenset()

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    base_seconds: float = 1.0
    max_seconds: float = 60.0
    timeout_seconds: float = 120.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        The server's Retry-After wins when it gives one (capped, plus a little jitter so a
        burst of 429s does not come back as one burst); otherwise exponential back-off with
        "equal jitter": half the step fixed, half random.
        """
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), self.max_seconds)
            return wait + random.uniform(0, 0.1 * wait + 0.01)  # noqa: S311 - not security
        step = min(self.max_seconds, self.base_seconds * 2 ** (attempt - 1))
        return step / 2 + random.uniform(0, step / 2)  # noqa: S311 - not security


@dataclass(frozen=True)
class ChatRequest:
    key: str
    messages: list[dict[str, Any]] = field(repr=False)


@dataclass(frozen=True)
class ChatResult:
    key: str
    outcome: Outcome
    content: str = ""
    finish_reason: str = ""
    error: str = ""
    attempts: int = 1
    latency_ms: int | None = None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait a 429 or 503 asks for: ``retry-after-ms`` (OpenAI), or ``Retry-After`` as
    seconds or as an HTTP date. ``headers`` look-ups ignore case."""
    value = headers.get("retry-after-ms")
    if value:
        with contextlib.suppress(ValueError):
            return float(value) / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError):
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


_UNPRINTABLE = re.compile(r"[^\x20-\x7e\u00a0-\ufffc]+")


def _error_message(content: bytes) -> str | None:
    """The message of an OpenAI-style error body (``{"error": {"message": …}}``), if it is one."""
    try:
        body = safe_json.loads(content)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return message if isinstance(message, str) and message else None


def error_text(reply: Reply, *, detail: bool) -> str:
    """What an error reply says, for the run's stored errors.

    ``detail`` (an endpoint an admin registered): its error message, or the start of its body.
    Otherwise the status and at most a short, printable excerpt of an OpenAI-style error
    message, never a page's body: the URL may name an internal service, whose reply must not
    come back to whoever chose it.
    """
    message = _error_message(reply.content)
    if detail:
        if message:
            return f"HTTP {reply.status}: {message[:_ERROR_TEXT]}"
        text = reply.content[:_ERROR_TEXT].decode("utf-8", "replace").strip()
        return f"HTTP {reply.status}: {text or reply.reason}"
    try:
        phrase = HTTPStatus(reply.status).phrase
    except ValueError:
        phrase = ""
    head = f"HTTP {reply.status} {phrase}".rstrip()
    if not message:
        return head
    excerpt = " ".join(_UNPRINTABLE.sub(" ", message).split())
    if len(excerpt) > _OWN_ERROR_TEXT:
        excerpt = excerpt[: _OWN_ERROR_TEXT - 1].rstrip() + "…"
    return f"{head}: {excerpt}" if excerpt else head


# --- Transports: one POST, its status, headers and body --------------------------------


# Connection failures and timeouts in a row (at least twice the requests in flight) that stop
# a run.
UNREACHABLE_AFTER = 12
# Connecting is quick or not happening: a host that drops packets fails in this many seconds,
# not in the full request timeout.
CONNECT_TIMEOUT = 10.0


class TransportTimeout(Exception):
    """No reply within the timeout."""


class TransportError(Exception):
    """The endpoint could not be reached, or the connection broke."""


class TransportRefused(Exception):
    """The request may not be sent there at all (a forbidden address)."""


class ReplyTooLarge(Exception):
    """The reply went past MAX_REPLY_BYTES."""


@dataclass(frozen=True)
class Reply:
    status: int
    reason: str
    headers: Mapping[str, str]
    content: bytes


class Transport(Protocol):
    def post(self, body: bytes) -> Reply: ...

    def close(self) -> None: ...


def off_limits_check(
    candidates: list[SockAddr], port: int, off_limits: frozenset[tuple[str, int]]
) -> None:
    for _family, sockaddr in candidates:
        if (machine(ipaddress.ip_address(str(sockaddr[0]).split("%")[0])), port) in off_limits:
            raise AddressRefused(
                f"{sockaddr[0]} port {port} is a registered endpoint that answers without a "
                "key; choose it by name"
            )


def checked_connector(
    *, allow_private: bool, off_limits: frozenset[tuple[str, int]] = frozenset()
) -> Callable[..., socket.socket]:
    """A stand-in for ``socket.create_connection`` that resolves the host once, checks every
    address, and connects to a checked one."""

    def create_connection(
        address: tuple[str, int], timeout: float | None = None, source_address: Any = None
    ) -> socket.socket:
        host, port = address
        try:  # an AddressRefused goes up as it is: no connection failure, a refusal
            candidates = resolve_checked(host, port, allow_private=allow_private)
        except (OSError, UnicodeError) as exc:
            raise OSError(f"The host {host} does not resolve ({exc})") from None
        off_limits_check(candidates, port, off_limits)
        error: OSError = OSError(f"The host {host} has no address")
        for family, sockaddr in candidates[:_ADDRESSES_TRIED]:
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            return sock
        raise error

    return create_connection


class _Watchdog:
    """Ends requests that pass their deadline. A socket timeout bounds each read, not the
    whole reply: a server could drip a byte at a time for ever. One thread per transport
    shuts such sockets down, which ends the blocked read."""

    TICK = 0.2

    def __init__(self) -> None:
        self._watched: dict[int, tuple[float, socket.socket]] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, sock: socket.socket, deadline: float) -> None:
        with self._lock:
            self._watched[threading.get_ident()] = (deadline, sock)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="chat-deadlines", daemon=True
                )
                self._thread.start()

    def unwatch(self) -> None:
        with self._lock:
            self._watched.pop(threading.get_ident(), None)

    def _run(self) -> None:
        while not self._stopped.wait(self.TICK):
            now = time.monotonic()
            # Under the lock: a thread that has just finished cannot start its next request
            # on the same socket before this one is ended.
            with self._lock:
                for deadline, sock in self._watched.values():
                    if deadline <= now:
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self._stopped.set()


def _read_capped(response: http.client.HTTPResponse) -> bytes:
    length = response.getheader("content-length")
    if length and length.isdigit() and int(length) > MAX_REPLY_BYTES:
        raise ReplyTooLarge
    content = response.read(MAX_REPLY_BYTES + 1)
    if len(content) > MAX_REPLY_BYTES:
        raise ReplyTooLarge
    if response.length:  # the server hung up before the length it announced
        raise http.client.IncompleteRead(content, response.length)
    return content


class _StdlibTransport:
    """One keep-alive ``http.client`` connection per thread. A connection the server closed
    while idle is reopened and the request sent again at once: that is not a failure."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        timeout: float,
        *,
        allow_private: bool,
        off_limits: frozenset[tuple[str, int]],
    ) -> None:
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path or "/"
        self._headers = {**headers, "Host": parts.netloc}
        self._timeout = timeout
        self._context = ssl.create_default_context() if self._https else None
        self._connector = checked_connector(allow_private=allow_private, off_limits=off_limits)
        self._watchdog = _Watchdog()
        self._local = threading.local()
        self._open: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._closed = False

    def _connection(self) -> http.client.HTTPConnection:
        if self._closed:  # the pool stopped: no new connections, no re-sends
            raise TransportError("The run stopped")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._https:
                conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self._timeout, context=self._context
                )
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            # Resolve, check and connect to the checked address; TLS still verifies the name.
            conn._create_connection = self._connector  # type: ignore[attr-defined]
            self._local.conn = conn
            self._local.used = False
            with self._lock:
                self._open.add(conn)
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            with self._lock:
                self._open.discard(conn)
        self._local.conn = None

    def post(self, body: bytes) -> Reply:
        deadline = time.monotonic() + self._timeout
        for fresh_try in (False, True):
            conn = self._connection()
            reused = self._local.used
            if conn.sock is None:
                try:
                    conn.timeout = min(self._timeout, CONNECT_TIMEOUT)
                    conn.connect()
                    conn.sock.settimeout(self._timeout)
                except AddressRefused as exc:
                    self._drop()
                    raise TransportRefused(exc.message) from None
                except (OSError, ssl.CertificateError) as exc:  # refused, no route, no answer
                    self._drop()
                    raise TransportError(str(exc) or type(exc).__name__) from None
            self._watchdog.watch(conn.sock, deadline)
            try:
                conn.request("POST", self._path, body=body, headers=self._headers)
                response = conn.getresponse()
                content = _read_capped(response)
            except ReplyTooLarge:
                self._drop()
                raise
            except TimeoutError:
                self._drop()
                raise TransportTimeout from None
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                if time.monotonic() >= deadline:
                    raise TransportTimeout from None
                # A keep-alive connection the server had closed: reopen it, once.
                if reused and not fresh_try:
                    continue
                raise TransportError(str(exc) or type(exc).__name__) from None
            finally:
                self._watchdog.unwatch()
            self._local.used = True
            if response.will_close:
                self._drop()
            return Reply(response.status, response.reason, response.headers, content)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._closed = True
        self._watchdog.stop()
        with self._lock:
            for conn in self._open:
                with contextlib.suppress(Exception):
                    conn.close()


class _HttpxTransport:
    """For endpoints behind an HTTP(S) proxy: httpx2 reads the proxy settings from the
    environment like every other client. The proxy resolves the host, so the check here is
    of what the host resolves to on this machine; a name that does not resolve here is
    refused unless private addresses are allowed."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        timeout: float,
        size: int,
        *,
        allow_private: bool,
        off_limits: frozenset[tuple[str, int]],
    ) -> None:
        self._url = url
        self._off_limits = off_limits
        self._timeout = timeout
        self._allow_private = allow_private
        self._checked = False
        self._client = httpx2.Client(
            timeout=httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            limits=httpx2.Limits(max_connections=size, max_keepalive_connections=size),
            headers=headers,
            follow_redirects=False,
        )

    def _check(self) -> None:
        parts = urlsplit(self._url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
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
        self._checked = True

    def post(self, body: bytes) -> Reply:
        if not self._checked:
            self._check()
        deadline = time.monotonic() + self._timeout
        try:
            with self._client.stream("POST", self._url, content=body) as response:
                length = response.headers.get("content-length", "")
                if length.isdigit() and int(length) > MAX_REPLY_BYTES:
                    raise ReplyTooLarge
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > MAX_REPLY_BYTES:
                        raise ReplyTooLarge
                    if time.monotonic() > deadline:
                        raise TransportTimeout
                    chunks.append(chunk)
        except httpx2.TimeoutException:
            raise TransportTimeout from None
        except httpx2.TransportError as exc:
            raise TransportError(str(exc) or type(exc).__name__) from None
        return Reply(
            response.status_code, response.reason_phrase, response.headers, b"".join(chunks)
        )

    def close(self) -> None:
        self._client.close()


def _proxied(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    proxies = urllib.request.getproxies()
    scheme = urlsplit(url).scheme
    return bool(proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host)


def transport_for(target: ChatTarget, *, timeout: float, size: int) -> Transport:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"
    if _proxied(target.url):
        return _HttpxTransport(
            target.url,
            headers,
            timeout,
            size,
            allow_private=target.allow_private,
            off_limits=target.off_limits,
        )
    return _StdlibTransport(
        target.url,
        headers,
        timeout,
        allow_private=target.allow_private,
        off_limits=target.off_limits,
    )


def parse_completion(payload: bytes) -> tuple[str, str]:
    """``(content, finish_reason)`` of the first choice; ValueError if it is not a chat
    completion."""
    try:
        data = safe_json.loads(payload)
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ValueError("The reply is not a chat completion") from None
    if not isinstance(content, str):
        raise ValueError("The reply's content is not text")
    return content, str(choice.get("finish_reason") or "")


class ChatClient:
    """Sends chat requests to one target, retrying what is worth retrying. Safe to use from
    many threads (``size`` of them).

    ``stop`` ends it promptly: waiting retries end at once and connections close. After a
    fatal reply (wrong key, URL or model; a forbidden address; a redirect) it sends nothing
    new.
    """

    def __init__(self, target: ChatTarget, *, policy: RetryPolicy, size: int = 1) -> None:
        self.target = target
        self.policy = policy
        self._body_head = {
            "model": target.model,
            "temperature": target.temperature,
            "max_tokens": target.max_tokens,
        }
        self._transport = transport_for(target, timeout=policy.timeout_seconds, size=size)
        self.stopped = threading.Event()
        self._halt = threading.Event()  # a fatal reply came: send nothing more
        # Connection failures and timeouts in a row across all threads, no reply in between.
        self._unreachable = 0
        self._unreachable_lock = threading.Lock()
        self.unreachable_limit = max(UNREACHABLE_AFTER, 2 * size)

    def stop(self) -> None:
        self.stopped.set()
        # Closing the connections aborts requests in flight.
        with contextlib.suppress(Exception):
            self._transport.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def complete(self, request: ChatRequest) -> ChatResult | None:
        """The request's result (None once the client is stopped or halted). The key never
        appears in an error: error text is stored and shown, and a proxy may echo headers."""
        try:
            result = self._send(request)
        except Exception as exc:  # never lose a question to a bug in one thread
            if self.stopped.is_set():
                return None
            result = ChatResult(
                key=request.key, outcome="failed", error=f"{type(exc).__name__}: {exc}"
            )
        if result is None:
            return None
        if result.outcome == "fatal":
            self._halt.set()
        key = self.target.api_key
        if len(key) >= 4:
            error = result.error
            for form in {key, repr(key)[1:-1], json.dumps(key)[1:-1]}:
                error = error.replace(form, "***")
            if error != result.error:
                result = replace(result, error=error)
        return result

    def _fatal(self, request: ChatRequest, error: str, attempt: int) -> ChatResult:
        return ChatResult(key=request.key, outcome="fatal", error=error, attempts=attempt)

    def _send(self, request: ChatRequest) -> ChatResult | None:
        policy = self.policy
        body = json.dumps(
            {**self._body_head, "messages": request.messages}, ensure_ascii=False
        ).encode("utf-8")
        error = ""
        for attempt in range(1, policy.max_attempts + 1):
            if self.stopped.is_set() or self._halt.is_set():
                return None
            retry_after: float | None = None
            started = time.perf_counter()
            try:
                response = self._transport.post(body)
            except TransportRefused as exc:
                return self._fatal(request, f"The endpoint's address is refused: {exc}", attempt)
            except ReplyTooLarge:
                return ChatResult(
                    key=request.key,
                    outcome="rejected",
                    error=f"The reply is larger than {MAX_REPLY_BYTES // 1024} KiB",
                    attempts=attempt,
                )
            except (TransportTimeout, TransportError) as exc:
                if isinstance(exc, TransportTimeout):
                    error = reason = f"No reply within {policy.timeout_seconds:g} s"
                else:
                    reason = str(exc)
                    error = f"Could not reach the endpoint: {reason}"
                with self._unreachable_lock:
                    self._unreachable += 1
                    down = self._unreachable >= self.unreachable_limit
                if down:
                    # A host that is down, or that never finishes a reply (a slow drip, a
                    # connection held open), fails every question the same way: stop the run
                    # instead of holding the worker for every question's retries.
                    return self._fatal(
                        request,
                        f"Could not reach it {self.unreachable_limit} times in a row ({reason})",
                        attempt,
                    )
            else:
                with self._unreachable_lock:
                    self._unreachable = 0
                status = response.status
                if status == 200:
                    try:
                        content, finish_reason = parse_completion(response.content)
                    except ValueError as exc:
                        error = str(exc)
                    else:
                        limit = self.target.max_content_chars
                        if limit is not None and len(content) > limit:
                            return ChatResult(
                                key=request.key,
                                outcome="rejected",
                                error=f"The answer is {len(content):,} characters long, over "
                                f"the {limit:,} kept",
                                attempts=attempt,
                            )
                        return ChatResult(
                            key=request.key,
                            outcome="answered",
                            content=content,
                            finish_reason=finish_reason,
                            attempts=attempt,
                            latency_ms=round((time.perf_counter() - started) * 1000),
                        )
                elif 300 <= status < 400:
                    # Following it would send the key to wherever the reply points.
                    return self._fatal(
                        request,
                        f"HTTP {status}: the endpoint redirects, and requests never follow a "
                        "redirect; give the final URL as the base URL",
                        attempt,
                    )
                else:
                    message = error_text(response, detail=self.target.error_detail)
                    if status in FATAL_STATUSES:
                        return self._fatal(request, message, attempt)
                    if status not in RETRY_STATUSES and status < 500:
                        # The request itself was refused (too long a prompt, say): final.
                        return ChatResult(
                            key=request.key, outcome="rejected", error=message, attempts=attempt
                        )
                    error = message
                    retry_after = retry_after_seconds(response.headers)
            if attempt < policy.max_attempts and self.stopped.wait(
                policy.delay(attempt, retry_after)
            ):
                return None
        return ChatResult(
            key=request.key,
            outcome="failed",
            error=f"No answer after {counted(policy.max_attempts, 'attempt')}; the last: {error}",
            attempts=policy.max_attempts,
        )


class ChatPool:
    """``concurrency`` requests in flight; ``submit`` and ``get`` are for one caller thread.

    ``stop`` ends the pool promptly: waiting retries end at once, requests in flight are
    abandoned (their threads are daemons and their results are dropped). After a fatal reply
    no thread sends anything new: the caller stops the pool when it reads that result.
    """

    def __init__(self, target: ChatTarget, *, concurrency: int, policy: RetryPolicy) -> None:
        self.client = ChatClient(target, policy=policy, size=concurrency)
        self._jobs: queue.SimpleQueue[ChatRequest | None] = queue.SimpleQueue()
        self._results: queue.SimpleQueue[ChatResult] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"inference-http-{i}", daemon=True)
            for i in range(concurrency)
        ]
        for thread in self._threads:
            thread.start()

    # --- the caller's side

    def submit(self, request: ChatRequest) -> None:
        self._jobs.put(request)

    def get(self, timeout: float) -> ChatResult | None:
        try:
            return self._results.get(timeout=timeout) if timeout > 0 else self._results.get_nowait()
        except queue.Empty:
            return None

    def stop(self) -> None:
        self.client.stop()
        for _ in self._threads:
            self._jobs.put(None)

    def __enter__(self) -> ChatPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the threads' side

    def _work(self) -> None:
        stopped = self.client.stopped
        while not stopped.is_set():
            request = self._jobs.get()
            if request is None:
                return
            result = self.client.complete(request)
            if result is not None and not stopped.is_set():
                self._results.put(result)
