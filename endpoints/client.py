"""Chat completions against an OpenAI-compatible endpoint: the one client that question
generation and inference runs share. No database access: the caller saves what comes back.

- ``ChatClient.complete`` sends one request with retries (429s, 5xx, timeouts and connection
  errors, with exponential back-off, jitter and the server's Retry-After).
- ``ChatPool`` keeps many in flight: a pool of daemon threads sharing one client, each with
  its own keep-alive connection, taking requests from a job queue and putting one result
  each on a results queue.
- ``ChatClient.served_models`` reads ``GET {base_url}/models``: the names the endpoint
  serves and, where it says (vLLM's ``max_model_len``), each one's context length.
- A prompt the endpoint refuses as longer than the model's context is its own outcome,
  ``too_long``: the run scores it as unanswered, as the benchmark's own scripts did.

The wire protocol is the openai SDK's: its client builds and sends ``POST {base_url}/chat/
completions`` with the bearer key and turns error statuses into its exceptions. Kept here:
its retries are off (``max_retries=0``), so the policy below, which a stopped or halted run
cuts short, is the only retry loop; the request goes through ``post`` with the body as the
endpoint reads it, since ``chat.completions.create`` walks every message through its
parameter types (about 1 ms of CPU per request, more than all the rest); and the reply is
read by ``hctqa.core.safe_json``, which refuses a reply nested deep enough to crash a parser.
Every check on where a request goes and what comes back lives in the transport the SDK
sends through (``endpoints.transport``).

- Redirects are never followed (a 3xx stops the run): the key goes only to the base URL.
- An answer longer than the target's ``max_content_chars`` is refused. Timeouts and
  connection failures in a row stop the client (``unreachable_limit``): an endpoint that
  never finishes a reply cannot hold a worker for every question's retries.
- A researcher's own endpoint gets no detail of its error pages back: the status and, at
  most, a short excerpt of an OpenAI-style error message. Every error kept is one line of
  visible characters (``printable``), and the key never appears in it.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import queue
import random
import threading
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Literal

import httpx2
import openai

from endpoints.transport import (
    CONNECT_TIMEOUT,
    MAX_REPLY_BYTES,
    CheckedTransport,
    ReplyTooLarge,
    TransportError,
    TransportRefused,
    TransportTimeout,
)
from hctqa.core import safe_json
from hctqa.core.wording import counted

Outcome = Literal["answered", "rejected", "too_long", "failed", "fatal"]

# Worth another try: the server is busy, overloaded or briefly down.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
# The endpoint, key or model is wrong: every other question would fail the same way.
FATAL_STATUSES = frozenset({401, 403, 404})
_ERROR_TEXT = 500  # characters of an error body kept, for an admin-registered endpoint
_OWN_ERROR_TEXT = 160  # characters of an error message kept, for anyone else's


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


@dataclass(frozen=True)
class ServedModel:
    name: str
    # Tokens of prompt and answer together, as the endpoint reports it (None: it does not).
    context_length: int | None = None


class ModelListError(Exception):
    """The endpoint's model list could not be read: the message says why, for people.
    ``unreachable``: no reply at all (refused, unresolved, timed out), which may be this
    machine's view only, rather than the endpoint's answer."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


# The fields an OpenAI-compatible model list gives a model's context length in: vLLM's, then
# those of other servers and routers.
_CONTEXT_FIELDS = ("max_model_len", "context_length", "context_window")
MAX_SERVED_MODELS = 2000


def parse_model_list(payload: bytes) -> list[ServedModel]:
    """The models of a ``GET /models`` reply (``{"data": [{"id": …}, …]}``); ValueError if
    it is not one."""
    try:
        entries = safe_json.loads(payload)["data"]
    except (ValueError, KeyError, TypeError):
        raise ValueError("The reply is not a model list") from None
    if not isinstance(entries, list) or len(entries) > MAX_SERVED_MODELS:
        raise ValueError("The reply is not a model list")
    models = []
    for entry in entries:
        name = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError("The reply is not a model list")
        context = None
        for key in _CONTEXT_FIELDS:
            value = entry.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31:
                context = value
                break
        models.append(ServedModel(printable(name)[:200], context))
    return models


# What an endpoint says when a prompt is longer than the model's context: vLLM and OpenAI
# ("maximum context length"), llama.cpp ("context size"), others ("context window").
_CONTEXT_WORDS = ("context length", "context size", "context window")


def over_context(content: bytes) -> bool:
    """Whether an error reply says the prompt is over the model's context length."""
    try:
        error = safe_json.loads(content).get("error")
    except (ValueError, AttributeError):
        return False
    if isinstance(error, dict) and error.get("code") == "context_length_exceeded":
        return True
    message = error.get("message") if isinstance(error, dict) else error
    return isinstance(message, str) and any(w in message.lower() for w in _CONTEXT_WORDS)


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


# Control characters and line breaks become spaces; format characters (bidi overrides and
# isolates, zero-width ones, the BOM, tags), private-use, unassigned and surrogate code points
# are dropped: shown to a person, they hide or reorder the text around them.
_BREAKS = frozenset({"Cc", "Zl", "Zp"})
_HIDDEN = frozenset({"Cf", "Co", "Cn", "Cs"})


def printable(text: str) -> str:
    """``text`` as one line of visible characters, runs of spaces as one."""
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if category in _BREAKS:
            kept.append(" ")
        elif category not in _HIDDEN:
            kept.append(char)
    return " ".join("".join(kept).split())


@dataclass(frozen=True)
class Reply:
    status: int
    reason: str
    headers: Mapping[str, str]
    content: bytes


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
    Otherwise the status and at most a short excerpt of an OpenAI-style error message, never
    a page's body: the URL may name an internal service, whose reply must not come back to
    whoever chose it.
    """
    message = _error_message(reply.content)
    if detail:
        text = message or reply.content[:_ERROR_TEXT].decode("utf-8", "replace")
        text = printable(text[: 2 * _ERROR_TEXT])[:_ERROR_TEXT]
        return f"HTTP {reply.status}: {text or reply.reason}"
    try:
        phrase = HTTPStatus(reply.status).phrase
    except ValueError:
        phrase = ""
    head = f"HTTP {reply.status} {phrase}".rstrip()
    if not message:
        return head
    excerpt = printable(message[: 4 * _OWN_ERROR_TEXT])
    if len(excerpt) > _OWN_ERROR_TEXT:
        excerpt = excerpt[: _OWN_ERROR_TEXT - 1].rstrip() + "…"
    return f"{head}: {excerpt}" if excerpt else head


# What the SDK says about itself and this machine, and the OpenAI account headers it fills
# from the environment: none of it is an endpoint's business.
_SDK_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
    "X-Stainless-Retry-Count",
    "X-Stainless-Read-Timeout",
    "OpenAI-Organization",
    "OpenAI-Project",
)

# Connection failures and timeouts in a row (at least twice the requests in flight) that stop
# a run.
UNREACHABLE_AFTER = 12


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
        self._transport = CheckedTransport(
            target.base_url,
            target.api_key,
            timeout=policy.timeout_seconds,
            allow_private=target.allow_private,
            off_limits=target.off_limits,
        )
        timeout = httpx2.Timeout(
            policy.timeout_seconds, connect=min(policy.timeout_seconds, CONNECT_TIMEOUT)
        )
        sdk = openai.OpenAI(
            # Given, never read from the environment (OPENAI_API_KEY is the platform's).
            api_key=target.api_key,
            admin_api_key="",
            base_url=target.base_url,
            max_retries=0,  # the RetryPolicy is the one retry loop
            timeout=timeout,
            http_client=httpx2.Client(
                transport=self._transport,
                timeout=timeout,
                follow_redirects=False,
                trust_env=False,
            ),
        )
        self._sdk = sdk
        self._body = {
            "model": target.model,
            "temperature": target.temperature,
            "max_tokens": target.max_tokens,
        }
        # Headers the SDK would add, left out: the transport would drop them anyway, and
        # fewer headers cost less. A keyless endpoint gets no Authorization header.
        omitted = _SDK_HEADERS if target.api_key else (*_SDK_HEADERS, "Authorization")
        self._options: Any = {"headers": dict.fromkeys(omitted, openai.Omit())}
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

    def _post(self, messages: list[dict[str, Any]]) -> Reply:
        """One request through the SDK: the reply, whatever its status; the transport's
        exceptions when there is none."""
        return self._request("post", "/chat/completions", {**self._body, "messages": messages})

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Reply:
        send = self._sdk.post if method == "post" else self._sdk.get
        extra = {} if body is None else {"body": body}
        try:
            response = send(path, cast_to=httpx2.Response, options=self._options, **extra)
        except openai.APIStatusError as exc:
            response = exc.response
        except openai.APITimeoutError:
            raise TransportTimeout from None
        except openai.APIConnectionError as exc:
            raise TransportError(str(exc.__cause__ or exc)) from None
        return Reply(
            response.status_code, response.reason_phrase, response.headers, response.content
        )

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def served_models(self) -> list[ServedModel] | None:
        """The models the endpoint serves (``GET {base_url}/models``), one request, no retry;
        None when it has no model list (404, 405 or 501: some proxies and servers). Any
        other failure is a ModelListError saying what happened, the key never in it."""
        try:
            reply = self._request("get", "/models")
        except TransportRefused as exc:
            raise ModelListError(f"The endpoint's address is refused: {exc}") from None
        except ReplyTooLarge:
            raise ModelListError(
                f"The endpoint's model list is larger than {MAX_REPLY_BYTES // 1024} KiB"
            ) from None
        except TransportTimeout:
            raise ModelListError(
                f"The endpoint did not answer within {self.policy.timeout_seconds:g} s",
                unreachable=True,
            ) from None
        except TransportError as exc:
            raise ModelListError(f"Could not reach the endpoint: {exc}", unreachable=True) from None
        if reply.status in (404, 405, 501):
            return None
        if 300 <= reply.status < 400:
            raise ModelListError(
                f"HTTP {reply.status}: the endpoint redirects, and requests never follow a "
                "redirect; give the final URL as the base URL"
            )
        if reply.status != 200:
            text = self._without_key(error_text(reply, detail=self.target.error_detail))
            raise ModelListError(f"The endpoint refused to list its models: {text}")
        try:
            return parse_model_list(reply.content)
        except ValueError as exc:
            raise ModelListError(f"{exc} at {self.target.base_url}/models") from None

    def _without_key(self, text: str) -> str:
        key = self.target.api_key
        if len(key) >= 4:
            for form in {key, repr(key)[1:-1], json.dumps(key)[1:-1]}:
                text = text.replace(form, "***")
        return text

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
        error = self._without_key(result.error)
        if error != result.error:
            result = replace(result, error=error)
        return result

    def _fatal(self, request: ChatRequest, error: str, attempt: int) -> ChatResult:
        return ChatResult(key=request.key, outcome="fatal", error=error, attempts=attempt)

    def _send(self, request: ChatRequest) -> ChatResult | None:
        policy = self.policy
        error = ""
        for attempt in range(1, policy.max_attempts + 1):
            if self.stopped.is_set() or self._halt.is_set():
                return None
            retry_after: float | None = None
            started = time.perf_counter()
            try:
                response = self._post(request.messages)
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
                        f"Could not reach it {counted(self.unreachable_limit, 'time')} in a "
                        f"row ({reason})",
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
                                error="The answer is "
                                f"{counted(len(content), 'character')} long, over "
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
                        # The request itself was refused: final. A prompt over the model's
                        # context is told apart: the run scores it as unanswered.
                        refused: Outcome = (
                            "too_long" if over_context(response.content) else "rejected"
                        )
                        return ChatResult(
                            key=request.key, outcome=refused, error=message, attempts=attempt
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
