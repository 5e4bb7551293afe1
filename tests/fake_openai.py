"""A local OpenAI-compatible chat server for tests and benchmarks.

It speaks just enough of ``POST /v1/chat/completions`` for the openai client: a test gives
it a *responder* (request body → reply) and can queue failures (429, 5xx, slow replies) ahead
of the normal replies. Every request body is recorded, so tests can check what was sent.

    with FakeOpenAI(lambda body: Reply("Paris")) as server:
        client = OpenAI(base_url=server.base_url, api_key="test")

Run as a separate process (for benchmarks, so the server does not share the client's GIL):

    python -m tests.fake_openai --port 8765 --latency 0.1 --answer 42
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    finish_reason: str = "stop"
    delay: float = 0.0
    error: str = ""


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
    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0, port: int = 0):
        self.responder = responder or _echo_last_user
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self._queued: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def queue(self, *replies: Reply) -> None:
        """Replies served before the responder is asked, one per request, in order."""
        with self._lock:
            self._queued.extend(replies)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
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

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = fake._next(body)
                if fake.latency or reply.delay:
                    time.sleep(fake.latency + reply.delay)
                if reply.status != 200:
                    message = reply.error or f"fake failure {reply.status}"
                    self._send(reply.status, {"error": {"message": message, "type": "fake"}})
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
