"""The chat client, without a database: keep-alive connections, stopping, what it never
sends and what it never keeps."""

from __future__ import annotations

import socket
import threading
import time

from endpoints.client import ChatPool, ChatRequest, ChatTarget, RetryPolicy
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
