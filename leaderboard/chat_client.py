"""Chat completions against an OpenAI-compatible endpoint, many in flight at once, with
retries. No database access here: the caller's thread saves what comes back.

A pool of daemon threads, each with its own keep-alive connection. Each thread takes a
request from the job queue, sends it (retrying 429s, 5xx, timeouts and connection errors
with exponential back-off, jitter and the server's Retry-After) and puts one result on the
results queue.

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
import json
import queue
import random
import ssl
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import httpx2

from hctqa.core import safe_json

Outcome = Literal["answered", "rejected", "failed", "fatal"]

# Worth another try: the server is busy, overloaded or briefly down.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
# The endpoint, key or model is wrong: every other question would fail the same way.
FATAL_STATUSES = frozenset({401, 403, 404})
_ERROR_TEXT = 500  # characters of an error body kept


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key: str
    model: str
    temperature: float
    max_tokens: int

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


def _error_text(reply: Reply) -> str:
    try:
        body = safe_json.loads(reply.content)
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return message[:_ERROR_TEXT]
    except ValueError:
        pass
    text = reply.content[:_ERROR_TEXT].decode("utf-8", "replace").strip()
    return text or reply.reason


# --- Transports: one POST, its status, headers and body --------------------------------


# Connection failures in a row (at least twice the requests in flight) that stop a run.
UNREACHABLE_AFTER = 12
# Connecting is quick or not happening: a host that drops packets fails in this many seconds,
# not in the full request timeout.
CONNECT_TIMEOUT = 10.0


class TransportTimeout(Exception):
    """No reply within the timeout."""


class TransportError(Exception):
    """The endpoint could not be reached, or the connection broke."""


@dataclass(frozen=True)
class Reply:
    status: int
    reason: str
    headers: Mapping[str, str]
    content: bytes


class Transport(Protocol):
    def post(self, body: bytes) -> Reply: ...

    def close(self) -> None: ...


class _StdlibTransport:
    """One keep-alive ``http.client`` connection per thread. A connection the server closed
    while idle is reopened and the request sent again at once: that is not a failure."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path or "/"
        self._headers = {**headers, "Host": parts.netloc}
        self._timeout = timeout
        self._context = ssl.create_default_context() if self._https else None
        self._local = threading.local()
        self._open: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._closed = False

    def _connection(self) -> http.client.HTTPConnection:
        if self._closed:  # the pool stopped: no new connections, no re-sends
            raise TransportError("the run stopped")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._https:
                conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self._timeout, context=self._context
                )
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
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
        for fresh_try in (False, True):
            conn = self._connection()
            reused = self._local.used
            if conn.sock is None:
                try:
                    conn.timeout = min(self._timeout, CONNECT_TIMEOUT)
                    conn.connect()
                    conn.sock.settimeout(self._timeout)
                except OSError as exc:  # refused, no route, or no answer within the timeout
                    self._drop()
                    raise TransportError(str(exc) or type(exc).__name__) from None
            try:
                conn.request("POST", self._path, body=body, headers=self._headers)
                response = conn.getresponse()
                content = response.read()
            except TimeoutError:
                self._drop()
                raise TransportTimeout from None
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                # A keep-alive connection the server had closed: reopen it, once.
                if reused and not fresh_try:
                    continue
                raise TransportError(str(exc) or type(exc).__name__) from None
            self._local.used = True
            if response.will_close:
                self._drop()
            return Reply(response.status, response.reason, response.headers, content)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._closed = True
        with self._lock:
            for conn in self._open:
                with contextlib.suppress(Exception):
                    conn.close()


class _HttpxTransport:
    """For endpoints behind an HTTP(S) proxy: httpx2 reads the proxy settings from the
    environment like every other client."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float, size: int) -> None:
        self._url = url
        self._client = httpx2.Client(
            timeout=httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            limits=httpx2.Limits(max_connections=size, max_keepalive_connections=size),
            headers=headers,
        )

    def post(self, body: bytes) -> Reply:
        try:
            response = self._client.post(self._url, content=body)
        except httpx2.TimeoutException:
            raise TransportTimeout from None
        except httpx2.TransportError as exc:
            raise TransportError(str(exc) or type(exc).__name__) from None
        return Reply(
            response.status_code, response.reason_phrase, response.headers, response.content
        )

    def close(self) -> None:
        self._client.close()


def _proxied(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    proxies = urllib.request.getproxies()
    scheme = urlsplit(url).scheme
    return bool(proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host)


def transport_for(endpoint: Endpoint, *, timeout: float, size: int) -> Transport:
    headers = {
        "Authorization": f"Bearer {endpoint.api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    if _proxied(endpoint.url):
        return _HttpxTransport(endpoint.url, headers, timeout, size)
    return _StdlibTransport(endpoint.url, headers, timeout)


def parse_completion(payload: bytes) -> tuple[str, str]:
    """``(content, finish_reason)`` of the first choice; ValueError if it is not a chat
    completion."""
    try:
        data = safe_json.loads(payload)
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ValueError("the reply is not a chat completion") from None
    if not isinstance(content, str):
        raise ValueError("the reply's content is not text")
    return content, str(choice.get("finish_reason") or "")


class ChatPool:
    """``concurrency`` requests in flight; ``submit`` and ``get`` are for one caller thread.

    ``stop`` ends the pool promptly: waiting retries end at once, requests in flight are
    abandoned (their threads are daemons and their results are dropped). After a fatal reply
    (wrong key, URL or model) no thread sends anything new: the caller stops the pool when
    it reads that result.
    """

    def __init__(self, endpoint: Endpoint, *, concurrency: int, policy: RetryPolicy) -> None:
        self.endpoint = endpoint
        self.policy = policy
        self._body_head = {
            "model": endpoint.model,
            "temperature": endpoint.temperature,
            "max_tokens": endpoint.max_tokens,
        }
        self._transport = transport_for(endpoint, timeout=policy.timeout_seconds, size=concurrency)
        self._jobs: queue.SimpleQueue[ChatRequest | None] = queue.SimpleQueue()
        self._results: queue.SimpleQueue[ChatResult] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._halt = threading.Event()  # a fatal reply came: send nothing more
        # Connection failures in a row across all threads, with no reply in between.
        self._unreachable = 0
        self._unreachable_lock = threading.Lock()
        self.unreachable_limit = max(UNREACHABLE_AFTER, 2 * concurrency)
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
        self._stop.set()
        for _ in self._threads:
            self._jobs.put(None)
        # Closing the connections aborts requests in flight; their threads see the stop and
        # exit.
        with contextlib.suppress(Exception):
            self._transport.close()

    def __enter__(self) -> ChatPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the threads' side

    def _work(self) -> None:
        while not self._stop.is_set():
            request = self._jobs.get()
            if request is None:
                return
            try:
                result = self._send(request)
            except Exception as exc:  # never lose a question to a bug in one thread
                if self._stop.is_set():
                    return
                result = ChatResult(
                    key=request.key, outcome="failed", error=f"{type(exc).__name__}: {exc}"
                )
            if result is not None and result.outcome == "fatal":
                self._halt.set()
            key = self.endpoint.api_key
            if result is not None and len(key) >= 4 and key in result.error:
                # Error text is stored and shown; a proxy that echoes headers must not leak it.
                result = replace(result, error=result.error.replace(key, "***"))
            if result is not None and not self._stop.is_set():
                self._results.put(result)

    def _send(self, request: ChatRequest) -> ChatResult | None:
        policy = self.policy
        body = json.dumps(
            {**self._body_head, "messages": request.messages}, ensure_ascii=False
        ).encode("utf-8")
        error = ""
        for attempt in range(1, policy.max_attempts + 1):
            if self._stop.is_set() or self._halt.is_set():
                return None
            retry_after: float | None = None
            started = time.perf_counter()
            try:
                response = self._transport.post(body)
            except TransportTimeout:
                error = f"no reply within {policy.timeout_seconds:g} s"
            except TransportError as exc:
                error = f"could not reach the endpoint: {exc}"
                with self._unreachable_lock:
                    self._unreachable += 1
                    down = self._unreachable >= self.unreachable_limit
                if down:
                    # A host that is down fails every question the same way: stop the run
                    # instead of spending every question's retries on it.
                    return ChatResult(
                        key=request.key,
                        outcome="fatal",
                        error=f"could not reach it {self.unreachable_limit} times in a row ({exc})",
                        attempts=attempt,
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
                        return ChatResult(
                            key=request.key,
                            outcome="answered",
                            content=content,
                            finish_reason=finish_reason,
                            attempts=attempt,
                            latency_ms=round((time.perf_counter() - started) * 1000),
                        )
                else:
                    message = f"HTTP {status}: {_error_text(response)}"
                    if status in FATAL_STATUSES:
                        return ChatResult(
                            key=request.key, outcome="fatal", error=message, attempts=attempt
                        )
                    if status not in RETRY_STATUSES and status < 500:
                        # The request itself was refused (too long a prompt, say): final.
                        return ChatResult(
                            key=request.key, outcome="rejected", error=message, attempts=attempt
                        )
                    error = message
                    retry_after = retry_after_seconds(response.headers)
            if attempt < policy.max_attempts and self._stop.wait(
                policy.delay(attempt, retry_after)
            ):
                return None
        return ChatResult(
            key=request.key,
            outcome="failed",
            error=f"no answer after {policy.max_attempts} attempts; the last: {error}",
            attempts=policy.max_attempts,
        )
