"""The chat client, without a database: keep-alive connections, stopping, what it never
sends and what it never keeps."""

from __future__ import annotations

import contextlib
import gzip
import re
import socket
import threading
import time

import pytest

from endpoints.client import ChatClient, ChatPool, ChatRequest, ChatTarget, RetryPolicy
from tests.fake_openai import FakeOpenAI, Reply

REPLY = (
    b'{"choices": [{"message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}]}'
)


def endpoint(base_url: str, **fields) -> ChatTarget:
    """A target on the tests' loopback server, as an admin-registered endpoint would be."""
    return ChatTarget(
        **{
            "base_url": base_url,
            "api_key": "k",
            "model": "m",
            "temperature": 0,
            "max_tokens": 8,
            "allow_private": True,
            **fields,
        }
    )


def collect(pool: ChatPool, n: int, timeout: float = 10) -> list:
    results, deadline = [], time.monotonic() + timeout
    while len(results) < n and time.monotonic() < deadline:
        result = pool.get(timeout=0.05)
        if result is not None:
            results.append(result)
    return results


def test_a_keep_alive_connection_the_server_closed_is_reopened_without_a_failure() -> None:
    # A server that answers one request per connection, then hangs up without saying so
    # (as servers do with idle keep-alive connections).
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted = []

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            accepted.append(conn)
            conn.recv(65536)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            conn.sendall(head + b"Content-Length: %d\r\n\r\n" % len(REPLY) + REPLY)
            time.sleep(0.1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    with ChatPool(endpoint(base_url), concurrency=1, policy=RetryPolicy(max_attempts=1)) as pool:
        pool.submit(ChatRequest("a", [{"role": "user", "content": "?"}]))
        first = collect(pool, 1)
        time.sleep(0.3)  # the server has hung up by now
        pool.submit(ChatRequest("b", [{"role": "user", "content": "?"}]))
        second = collect(pool, 1)
    listener.close()
    assert [r.outcome for r in first + second] == ["answered", "answered"]
    assert second[0].attempts == 1 and len(accepted) == 2


def test_stopping_abandons_requests_in_flight_without_sending_them_again() -> None:
    with FakeOpenAI(lambda body: Reply("late", delay=3)) as server:
        pool = ChatPool(endpoint(server.base_url), concurrency=2, policy=RetryPolicy())
        for key in ("a", "b", "c"):
            pool.submit(ChatRequest(key, [{"role": "user", "content": key}]))
        time.sleep(0.3)
        began = time.monotonic()
        pool.stop()
        assert time.monotonic() - began < 0.5
        time.sleep(0.5)
        assert pool.get(timeout=0) is None  # nothing reported after the stop
        assert len(server.requests) == 2  # the third was never sent, none was sent again


def test_the_key_never_appears_in_a_stored_error() -> None:
    # A proxy that echoes the request's headers back in its error page.
    def echo(body: dict) -> Reply:
        return Reply(status=400, error="bad request; you sent Authorization: Bearer sk-SECRET-99")

    with FakeOpenAI(echo) as server:
        secret = endpoint(server.base_url, api_key="sk-SECRET-99", error_detail=True)
        with ChatPool(secret, concurrency=1, policy=RetryPolicy(max_attempts=1)) as pool:
            pool.submit(ChatRequest("a", [{"role": "user", "content": "?"}]))
            [result] = collect(pool, 1)
    assert result.outcome == "rejected"
    assert "sk-SECRET-99" not in result.error and "Bearer ***" in result.error


def _raw_server(reply: bytes) -> tuple[socket.socket, str]:
    """A server that answers every connection's first request with ``reply``, as bytes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                head, _, body = request.partition(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(reply)
                conn.recv(1)  # until the client hangs up

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def one(target: ChatTarget, policy: RetryPolicy | None = None):
    with ChatClient(target, policy=policy or RetryPolicy(max_attempts=1)) as client:
        return client.complete(ChatRequest("a", [{"role": "user", "content": "?"}]))


@pytest.mark.parametrize("key", ["", "sk-own-1"])
def test_nothing_from_the_workers_environment_goes_with_a_request(monkeypatch, key) -> None:
    """The openai SDK reads OPENAI_* variables; none of them reaches an endpoint."""
    for name, value in {
        "OPENAI_API_KEY": "sk-platform-secret",
        "OPENAI_ADMIN_KEY": "sk-admin-secret",
        "OPENAI_ORG_ID": "org-platform",
        "OPENAI_PROJECT_ID": "proj-platform",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_CUSTOM_HEADERS": "Authorization: Bearer sk-custom-secret\nX-Internal: 1",
    }.items():
        monkeypatch.setenv(name, value)
    with FakeOpenAI(lambda body: Reply("42")) as server:
        result = one(endpoint(server.base_url, api_key=key))
    assert result.outcome == "answered" and result.content == "42"
    [headers] = server.headers
    assert headers.get("authorization", "") == (f"Bearer {key}" if key else "")
    sent = " ".join(f"{k}: {v}" for k, v in headers.items())
    for leak in ("secret", "platform", "x-internal", "stainless"):
        assert leak not in sent.lower()
    assert set(headers) <= {
        "host", "content-type", "content-length", "accept", "accept-encoding", "user-agent",
        "connection", "authorization",
    }  # fmt: skip
    # The body is the chat completion the endpoint expects.
    [body] = server.requests
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("m", 0, 8)
    assert body["messages"] == [{"role": "user", "content": "?"}]


def test_the_retry_policy_is_the_only_retry_loop() -> None:
    # The SDK would try a 500 three times on its own; the policy's attempts are all there are.
    with FakeOpenAI(lambda body: Reply(status=500)) as server:
        result = one(endpoint(server.base_url), RetryPolicy(max_attempts=2, base_seconds=0.01))
    assert result.outcome == "failed" and result.attempts == 2
    assert len(server.requests) == 2


def test_a_compressed_reply_is_not_inflated() -> None:
    # A chat completion and 64 MB of spaces in 64 kB of gzip: inflated, it would be read as
    # an answer; read as sent, it is not a chat completion.
    bomb = gzip.compress(REPLY + b" " * (64 * 1024 * 1024))
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
    listener, url = _raw_server(head + b"Content-Length: %d\r\n\r\n" % len(bomb) + bomb)
    result = one(endpoint(url))
    listener.close()
    assert result.outcome == "failed" and "not a chat completion" in result.error


def test_a_reply_without_a_length_is_cut_at_the_limit() -> None:
    chunk = b"x" * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(40)) + b"0\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
    listener, url = _raw_server(head + b"\r\n" + body)
    result = one(endpoint(url))
    listener.close()
    assert result.outcome == "rejected" and "larger than 1024 KiB" in result.error
