"""A local stand-in for the Hugging Face Hub, for tests: just enough of its HTTP API for
``huggingface_hub``'s ``create_repo``, ``dataset_info``, ``list_repo_refs``,
``list_repo_files``, ``create_commit`` and ``create_tag`` on dataset repositories.

Every file is offered as a "regular" upload, so the library sends it base64-encoded inside the
commit (no LFS or Xet storage). Commits and tags are recorded, each repository's files are
kept, and every request's method, path and headers (names in lower case) are logged, so tests
can check what arrived. A test can make one route fail (a status and message) or stall (to
time it out).

    with HubStub(token="hf_test") as hub:
        ...  # HF_ENDPOINT = hub.url
        hub.repos["org/name"].files  # path -> bytes
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class Commit:
    oid: str
    summary: str
    description: str
    added: dict[str, bytes]
    deleted: list[str]


@dataclass
class Repo:
    private: bool
    files: dict[str, bytes] = field(default_factory=lambda: {".gitattributes": b"*.parquet lfs\n"})
    commits: list[Commit] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)  # name -> commit id

    @property
    def head(self) -> str:
        return self.commits[-1].oid if self.commits else "0" * 40


@dataclass
class Failure:
    route: str  # "create", "info", "refs", "tree", "preupload", "commit", "tag"
    status: int = 500
    message: str = "Internal Error"
    stall: float = 0.0  # seconds to wait before answering


class _Server(ThreadingHTTPServer):
    daemon_threads = True


_REPO = r"(?P<repo>[^/]+/[^/]+)"
_ROUTES = [
    ("POST", re.compile(r"/api/repos/create"), "create"),
    ("POST", re.compile(r"/api/validate-yaml"), "yaml"),
    ("GET", re.compile(rf"/api/datasets/{_REPO}/refs"), "refs"),
    ("GET", re.compile(rf"/api/datasets/{_REPO}/tree/(?P<rev>[^/]+)"), "tree"),
    ("POST", re.compile(rf"/api/datasets/{_REPO}/preupload/(?P<rev>[^/]+)"), "preupload"),
    ("POST", re.compile(rf"/api/datasets/{_REPO}/commit/(?P<rev>[^/]+)"), "commit"),
    ("POST", re.compile(rf"/api/datasets/{_REPO}/tag/(?P<rev>[^/]+)"), "tag"),
    ("GET", re.compile(rf"/api/datasets/{_REPO}"), "info"),
]


def _oid(data: bytes) -> str:
    """An id shaped like git's (40 hex digits); nothing here needs it to be git's own."""
    return hashlib.sha256(data).hexdigest()[:40]


class HubStub:
    def __init__(self, *, token: str) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.log: list[dict[str, Any]] = []
        self.failures: list[Failure] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HubStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail(self, route: str, status: int = 500, message: str = "", stall: float = 0.0) -> None:
        self.failures.append(Failure(route, status, message or "Internal Error", stall))

    # --- Routes ------------------------------------------------------------------------------

    def _route(self, name: str, match: re.Match, query: str, body: bytes) -> tuple[int, Any]:
        if name == "create":
            data = json.loads(body)
            repo_id = f"{data['organization']}/{data['name']}"
            if repo_id in self.repos:
                url = f"{self.url}/datasets/{repo_id}"  # the Hub names it in a conflict too
                return 409, {"error": "You already created this dataset repo", "url": url}
            self.repos[repo_id] = Repo(private=data.get("visibility") == "private")
            return 200, {"url": f"{self.url}/datasets/{repo_id}"}
        if name == "yaml":
            return 200, {"errors": [], "warnings": []}
        repo_id = unquote(match.group("repo"))
        repo = self.repos.get(repo_id)
        if repo is None:
            return 404, {"error": "Repository not found"}
        if name == "info":
            return 200, {"id": repo_id, "private": repo.private, "sha": repo.head, "tags": []}
        if name == "refs":
            tags = [
                {"name": t, "ref": f"refs/tags/{t}", "targetCommit": oid}
                for t, oid in repo.tags.items()
            ]
            main = [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.head}]
            return 200, {"branches": main, "converts": [], "tags": tags}
        if name == "tree":
            return 200, [
                {"type": "file", "path": p, "size": len(d), "oid": _oid(d)}
                for p, d in sorted(repo.files.items())
            ]
        if name == "preupload":
            files = json.loads(body)["files"]
            return 200, {
                "files": [
                    {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                    for f in files
                ]
            }
        if name == "commit":
            return self._commit(repo_id, repo, body)
        if name == "tag":
            tag = json.loads(body)["tag"]
            if tag in repo.tags:
                return 409, {"error": f"Tag {tag} already exists"}
            oid = unquote(match.group("rev"))
            if oid not in {c.oid for c in repo.commits}:
                return 404, {"error": "Revision not found"}
            repo.tags[tag] = oid
            return 200, {}
        return 404, {"error": "not found"}

    def _commit(self, repo_id: str, repo: Repo, body: bytes) -> tuple[int, Any]:
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = lines[0]["value"]
        added: dict[str, bytes] = {}
        deleted: list[str] = []
        for line in lines[1:]:
            value = line["value"]
            if line["key"] == "file":
                assert value["encoding"] == "base64"
                added[value["path"]] = base64.b64decode(value["content"])
            elif line["key"] == "deletedFile":
                deleted.append(value["path"])
            else:
                return 400, {"error": f"This stub takes regular files only, not {line['key']}"}
        for path in deleted:
            repo.files.pop(path, None)
        repo.files.update(added)
        oid = _oid(f"{repo_id}{len(repo.commits)}{sorted(added)}".encode())
        repo.commits.append(Commit(oid, header["summary"], header["description"], added, deleted))
        return 200, {"commitUrl": f"{self.url}/datasets/{repo_id}/commit/{oid}", "commitOid": oid}

    # --- HTTP --------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                stub.log.append({"method": self.command, "path": url.path, "headers": headers})
                routes = (
                    (name, pattern.fullmatch(url.path))
                    for method, pattern, name in _ROUTES
                    if method == self.command
                )
                name, match = next(((n, m) for n, m in routes if m), ("", None))
                if match is None:
                    return self._reply(404, {"error": f"No route {self.command} {url.path}"})
                failure = next((f for f in stub.failures if f.route == name), None)
                if failure is not None:
                    stub.failures.remove(failure)
                    time.sleep(failure.stall)
                    return self._reply(failure.status, {"error": failure.message})
                if self.headers.get("Authorization") != f"Bearer {stub.token}":
                    return self._reply(
                        401, {"error": "Invalid credentials in Authorization header"}
                    )
                with stub._lock:
                    status, data = stub._route(name, match, url.query, body)
                self._reply(status, data)

            do_GET = do_POST = _serve

            def _reply(self, status: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)  # unless the client gave up waiting

        return Handler
