"""Issue 10, item 7: what comes back from an endpoint, and how much of it is kept.

The review pointed a run at ``http://127.0.0.1:8766/api/auth/token`` and read 607 characters
of a platform page in the run's error. A researcher's own endpoint now gets the status and
at most a short, printable excerpt of an OpenAI-style error message; every reply is limited
in size and in time."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from endpoints.client import MAX_REPLY_BYTES, ChatClient, ChatRequest, ChatTarget, RetryPolicy
from leaderboard.models import InferenceResponse, RunStatus
from leaderboard.services import inference_run_execute
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import make_questions, start

QUESTION = ChatRequest("q", [{"role": "user", "content": "?"}])
PAGE_SECRET = "csrfmiddlewaretoken-and-other-internal-things"


class _InternalService(BaseHTTPRequestHandler):
    """An internal web service: HTML pages, 404 for the token path, 400 for the rest."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status = 404 if "/auth/token/" in self.path else 400
        page = f"<html><body><h1>Platform</h1><p>{PAGE_SECRET}</p>{'x' * 600}</body></html>"
        data = page.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def internal_service():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _InternalService)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "status"), [("/api/auth/token", 404), ("/v1", 400)])
def test_an_own_endpoint_gets_no_internal_page_back(
    internal_service, settings, path: str, status: int
) -> None:
    # Even where researchers may reach private addresses, nothing of the page comes back.
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    make_questions(2)
    run = start(UserFactory(role="researcher"), internal_service + path, own=True)
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    errors = [run.error, *InferenceResponse.objects.values_list("error", flat=True)]
    assert any(f"HTTP {status}" in e for e in errors)
    for error in errors:
        assert PAGE_SECRET not in error and "<html" not in error and "Platform" not in error


def target(base_url: str, **fields) -> ChatTarget:
    return ChatTarget(
        **{
            "base_url": base_url,
            "api_key": "sk-x",
            "model": "m",
            "temperature": 0,
            "max_tokens": 8,
            "allow_private": True,
        }
        | fields
    )


def test_an_own_endpoints_error_message_is_cut_short_and_printable() -> None:
    noisy = "bad\x1b[31m request\r\n" + "y" * 500
    with FakeOpenAI(lambda body: Reply(status=400, error=noisy)) as server:
        with ChatClient(target(server.base_url), policy=RetryPolicy(max_attempts=1)) as client:
            own = client.complete(QUESTION)
        detailed = target(server.base_url, error_detail=True)
        with ChatClient(detailed, policy=RetryPolicy(max_attempts=1)) as client:
            registered = client.complete(QUESTION)
    assert own.error.startswith("HTTP 400 Bad Request: bad [31m request yyy")
    assert len(own.error) <= 200 and own.error.endswith("…") and "\x1b" not in own.error
    # An admin-registered endpoint's message is kept whole enough to debug it.
    assert registered.error.startswith("HTTP 400: bad") and len(registered.error) > 500


HIDDEN = [
    "\u202e",  # right-to-left override: the probe's replay (issue 23, item 6)
    "\u2066",  # left-to-right isolate
    "\u200b",  # zero-width space
    "\u200d",  # zero-width joiner
    "\u00ad",  # soft hyphen
    "\ufeff",  # byte-order mark
    "\u0085",  # next line (C1 control)
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\ufff9",  # interlinear annotation anchor
    "\ue000",  # private use
    "\U000e0041",  # tag latin capital letter A
    "\U000f0000",  # supplementary private use
    "\u0378",  # unassigned
]


@pytest.mark.parametrize("detail", [False, True])
def test_an_error_message_keeps_no_invisible_or_reordering_characters(detail: bool) -> None:
    message = "key " + "".join(f"{c}x" for c in HIDDEN) + " invalid: 𝟙 ☃ café"
    with FakeOpenAI(lambda body: Reply(status=400, error=message)) as server:
        chosen = target(server.base_url, error_detail=detail)
        with ChatClient(chosen, policy=RetryPolicy(max_attempts=1)) as client:
            result = client.complete(QUESTION)
    assert not [c for c in result.error if c in HIDDEN], ascii(result.error)
    assert "key x" in result.error and "invalid: 𝟙 ☃ café" in result.error


def test_a_reply_larger_than_the_limit_is_refused_not_read() -> None:
    huge = "x" * (MAX_REPLY_BYTES + 10)
    policy = RetryPolicy(max_attempts=3)
    with (
        FakeOpenAI(lambda body: Reply(huge)) as server,
        ChatClient(target(server.base_url), policy=policy) as client,
    ):
        result = client.complete(QUESTION)
    assert result.outcome == "rejected" and "larger than 1024 KiB" in result.error
    assert len(server.requests) == 1


def test_a_reply_dripped_byte_by_byte_ends_at_the_timeout() -> None:
    # Headers at once, then a byte every 0.1 s: every read is quick, the reply never ends.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def drip() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        conn.sendall(b"Content-Length: 100000\r\n\r\n")
        with conn:
            while not stop.is_set():
                try:
                    conn.sendall(b" ")
                except OSError:
                    return
                time.sleep(0.1)

    threading.Thread(target=drip, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    policy = RetryPolicy(max_attempts=1, timeout_seconds=0.6)
    began = time.monotonic()
    with ChatClient(target(url), policy=policy) as client:
        result = client.complete(QUESTION)
    took = time.monotonic() - began
    stop.set()
    listener.close()
    assert result.outcome == "failed" and "No reply within 0.6 s" in result.error
    assert took < 2
