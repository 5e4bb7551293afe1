"""A local OpenAI-compatible chat server for tests and benchmarks.

It speaks just enough of ``POST /v1/chat/completions``: a test gives it a *responder*
(request body → reply) and can queue failures (429, 5xx, slow replies, redirects) ahead of
the normal replies. Every request's body and headers are recorded, so tests can check what
was sent, and which key came with it.

    with FakeOpenAI(lambda body: Reply("Paris")) as server:
        ...  # an endpoint at server.base_url

Run as a separate process (for benchmarks, so the server does not share the client's GIL):

    python -m tests.fake_openai --port 8765 --latency 0.1 --answer 42
"""

from __future__ import annotations

import argparse
import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    finish_reason: str = "stop"
    delay: float = 0.0
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[dict[str, Any]], Reply]


def _echo_last_user(body: dict[str, Any]) -> Reply:
    content = body["messages"][-1]["content"]
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content)
    return Reply(str(content)[-40:])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


class FakeOpenAI:
    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ):
        self.responder = responder or _echo_last_user
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queued: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self._handler())
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self.port}/v1"

    def authorizations(self) -> list[str]:
        """The Authorization header of every request ("" where there was none)."""
        return [h.get("authorization", "") for h in self.headers]

    def queue(self, *replies: Reply) -> None:
        """Replies served before the responder is asked, one per request, in order."""
        with self._lock:
            self._queued.extend(replies)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._queued:
                return self._queued.popleft()
        return self.responder(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY, as real servers set it: headers and body go out in two writes, and
            # Nagle's algorithm with the client's delayed ACK would hold the body ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client hung up mid-request: nothing was asked
                    self.close_connection = True
                    return
                body = json.loads(raw or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = fake._next(body, headers)
                if fake.latency or reply.delay:
                    time.sleep(fake.latency + reply.delay)
                if reply.status != 200:
                    message = reply.error or f"fake failure {reply.status}"
                    payload = {"error": {"message": message, "type": "fake"}}
                    self._send(reply.status, payload, reply.headers)
                    return
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(fake.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": reply.finish_reason,
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

        return Handler

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per reply")
    parser.add_argument("--answer", default="42")
    args = parser.parse_args()
    server = FakeOpenAI(lambda body: Reply(args.answer), latency=args.latency, port=args.port)
    print(f"fake OpenAI server on {server.base_url}", flush=True)
    server._server.serve_forever()


if __name__ == "__main__":
    main()
