"""Through a real worker and a real SMTP conversation: the mail server is chosen by environment
variables, the request that queued the email returns before anything is sent, and the default
worker delivers it after the change is committed."""

from __future__ import annotations

import socketserver
import threading
import time
from collections.abc import Iterator

import pytest
from django.test import Client

from accounts.models import OutgoingEmail
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


class _Smtp(socketserver.StreamRequestHandler):
    """Just enough of SMTP (RFC 5321) for smtplib to hand over one message per connection."""

    def reply(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self) -> None:
        self.reply("220 test SMTP")
        while line := self.rfile.readline():
            verb = line.decode(errors="replace").strip().split(" ")[0].upper()
            if verb == "DATA":
                self.reply("354 go on")
                lines = []
                while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(chunk.decode(errors="replace"))
                self.server.messages.append("".join(lines))  # type: ignore[attr-defined]
                self.reply("250 queued")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:  # EHLO, HELO, MAIL, RCPT, RSET, NOOP
                self.reply("250 ok")


@pytest.fixture
def smtp_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A local mail server, named to the worker (started next) by its environment."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Smtp)
    server.daemon_threads = True
    server.messages = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("EMAIL_HOST", "127.0.0.1")
    monkeypatch.setenv("EMAIL_PORT", str(server.server_address[1]))
    monkeypatch.setenv("EMAIL_USE_TLS", "false")
    monkeypatch.setenv("DEFAULT_FROM_EMAIL", "HCT-QA <hctqa@example.org>")
    try:
        yield server.messages  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def test_the_default_worker_sends_the_email_over_smtp(
    client: Client, smtp_server: list[str], celery_worker_process
) -> None:
    UserFactory(username="boss", role="admin", email="boss@example.org")
    client.force_login(UserFactory(username="eve", role="researcher", test_split_approved=False))
    response = client.post("/accounts/approval/", {"note": "Eve, Example Lab; model X"})
    assert response.status_code == 302
    deadline = time.monotonic() + 60
    while not smtp_server and time.monotonic() < deadline:
        time.sleep(0.2)
    [message] = smtp_server
    assert "To: boss@example.org" in message and "From: HCT-QA <hctqa@example.org>" in message
    assert "Subject: [HCT-QA] 1 approval request waiting" in message
    assert "Eve, Example Lab; model X" in message
    deadline = time.monotonic() + 10
    while OutgoingEmail.objects.get().status != "sent" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert OutgoingEmail.objects.get().status == "sent"
