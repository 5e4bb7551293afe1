"""Issue 10, item 7: endpoint URLs must not reach internal services.

Every address a host resolves to is judged after unwrapping the IPv6 forms that carry an IPv4
address; the client connects to the very address it checked (DNS rebinding cannot switch
it), and HTTPS still verifies the host name."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from endpoints.addresses import classify
from endpoints.client import ChatClient, ChatRequest, ChatTarget, RetryPolicy
from endpoints.services import base_url_checked, own_base_url_checked
from plumbing.errors import ApplicationError
from tests.fake_openai import FakeOpenAI, Reply

QUESTION = ChatRequest("q", [{"role": "user", "content": "?"}])
METADATA = "169.254.169.254"


@pytest.mark.parametrize(
    "address",
    [
        METADATA,
        # The forms the review found getting through, and their relatives.
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "64:ff9b::169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1",  # 6to4 carrying 169.254.169.254
        "2001:0:4136:e378:8000:63bf:5601:5601",  # Teredo, client 169.254.169.254
        "fe80::1",
        "fd00:ec2::254",  # AWS metadata over IPv6
        "100.100.100.200",  # Alibaba Cloud metadata
        "0.0.0.0",  # noqa: S104 - Linux connects it to the machine itself
        "0.1.2.3",
        "::",
        "::7f00:1",  # deprecated IPv4-compatible 127.0.0.1
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
    ],
)
def test_link_local_metadata_and_non_host_addresses_are_forbidden(address: str) -> None:
    assert classify(ipaddress.ip_address(address))[0] == "forbidden"


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.1.2.3",
        "::1",
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "64:ff9b::127.0.0.1",
        "64:ff9b::10.0.0.1",
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:0a00:0001::1",  # 6to4 carrying 10.0.0.1
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "100.64.0.1",  # shared address space
        "fc00::1",
        "fd12:3456::1",
        "fec0::1",  # site-local
    ],
)
def test_loopback_and_private_addresses_are_private(address: str) -> None:
    assert classify(ipaddress.ip_address(address))[0] == "private"


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8"]
)
def test_public_addresses_are_public(address: str) -> None:
    assert classify(ipaddress.ip_address(address))[0] == "public"


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:169.254.169.254]/v1",
        "http://[::ffff:a9fe:a9fe]/v1",
        "http://[64:ff9b::169.254.169.254]/v1",
        "http://[2002:a9fe:a9fe::1]/v1",
        "http://0.0.0.0:8000/v1",
        "http://0/v1",  # resolves to 0.0.0.0
        "http://2852039166/v1",  # 169.254.169.254 as one number
    ],
)
def test_no_endpoint_may_point_at_link_local_or_metadata_addresses(url: str, settings) -> None:
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    for check in (own_base_url_checked, lambda u: base_url_checked(u, allow_private=True)):
        with pytest.raises(ApplicationError, match="is never a model endpoint") as caught:
            check(url)
        assert caught.value.field == "base_url"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8766/api/auth/token",
        "http://[::ffff:127.0.0.1]:18080/v1",  # the review's attack
        "http://[::1]:8000/v1",
        "http://localhost:8000/v1",
        "http://2130706433:8000/v1",  # 127.0.0.1 as one number
        "http://0x7f.1/v1",
        "http://10.1.2.3/v1",
        "http://[64:ff9b::10.0.0.1]/v1",
    ],
)
def test_own_endpoints_stay_off_loopback_and_private_addresses(url: str, settings) -> None:
    with pytest.raises(ApplicationError, match="only endpoints an admin registered"):
        own_base_url_checked(url)
    # Registered by an admin (a GPU host on the lab's network), or allowed for everyone.
    assert base_url_checked(url, allow_private=True)
    settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS = True
    assert own_base_url_checked(url)


class Resolver:
    """socket.getaddrinfo with some names answered from a script: each call takes the next
    answer (the last one repeats), as a DNS server under an attacker's control would."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, **answers: list[str]) -> None:
        self.answers = {name.replace("_", "."): list(ips) for name, ips in answers.items()}
        self.calls: list[str] = []
        self._real = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self)

    def __call__(self, host, port, *args, **kwargs):
        if host not in self.answers:
            return self._real(host, port, *args, **kwargs)
        self.calls.append(host)
        ips = self.answers[host]
        ip = ips.pop(0) if len(ips) > 1 else ips[0]
        family = socket.AF_INET6 if ":" in ip else socket.AF_INET
        sockaddr = (ip, int(port), 0, 0) if family == socket.AF_INET6 else (ip, int(port))
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]


def target(base_url: str, **fields) -> ChatTarget:
    return ChatTarget(
        **{"base_url": base_url, "api_key": "sk-x", "model": "m", "temperature": 0, "max_tokens": 8}
        | fields
    )


def test_a_name_that_rebinds_to_loopback_after_the_check_is_refused_at_connect(
    monkeypatch,
) -> None:
    with FakeOpenAI(lambda body: Reply("42")) as server:
        # Public when the run is started, the platform's own machine when it executes.
        Resolver(monkeypatch, rebind_example=["93.184.216.34", "127.0.0.1"])
        url = f"http://rebind.example:{server.port}/v1"
        assert own_base_url_checked(url) == url
        with ChatClient(target(url), policy=RetryPolicy(max_attempts=1)) as client:
            result = client.complete(QUESTION)
    assert result.outcome == "fatal" and not server.requests
    assert "rebind.example (127.0.0.1) is a loopback address" in result.error


def test_the_client_connects_to_the_address_it_checked(monkeypatch) -> None:
    with FakeOpenAI(lambda body: Reply("42")) as server:
        # The first answer passes; a second look-up would give the metadata service. There
        # is none: the connection goes to the address that was checked.
        resolver = Resolver(monkeypatch, pinned_example=["127.0.0.1", METADATA])
        url = f"http://pinned.example:{server.port}/v1"
        with ChatClient(target(url, allow_private=True), policy=RetryPolicy()) as client:
            result = client.complete(QUESTION)
    assert result.outcome == "answered" and result.content == "42"
    assert resolver.calls == ["pinned.example"]
    assert server.headers[0]["host"] == f"pinned.example:{server.port}"


def test_one_refused_address_refuses_the_host(monkeypatch) -> None:
    # A public address beside the metadata service, hoping the client falls back to it.
    real = socket.getaddrinfo

    def both(host, port, *args, **kwargs):
        if host == "twoface.example":
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (METADATA, port)),
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", both)
    with pytest.raises(ApplicationError, match=r"twoface.example \(169.254.169.254\)"):
        base_url_checked("http://twoface.example/v1", allow_private=True)


def test_a_registered_endpoint_whose_name_moves_to_the_metadata_service_sends_nothing(
    monkeypatch,
) -> None:
    with FakeOpenAI(lambda body: Reply("42")) as server:
        Resolver(monkeypatch, gpu_example=[METADATA])
        url = f"http://gpu.example:{server.port}/v1"
        with ChatClient(target(url, allow_private=True), policy=RetryPolicy()) as client:
            result = client.complete(QUESTION)
    assert result.outcome == "fatal" and "is never a model endpoint" in result.error


# --- HTTPS: connecting to the checked address keeps the name for SNI and verification -----


def _certificate(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    """A throwaway CA, and a server certificate it signed for ``name``: (ca, cert, key)."""
    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, issuer: str, key, signer, *, ca: bool):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = build("test CA", "test CA", ca_key, ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = build(name, "test CA", key, ca_key, ca=False)
    paths = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.mark.parametrize(("certified", "ok"), [("model.example", True), ("other.example", False)])
def test_https_verifies_the_host_name_and_sends_it_as_sni(
    tmp_path, monkeypatch, certified: str, ok: bool
) -> None:
    ca, cert, key = _certificate(tmp_path, certified)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    lock = threading.Lock()

    def remember(sock, server_name, ctx) -> None:
        with lock:
            names.append(server_name)

    context.sni_callback = remember
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # the client trusts the test CA
    with FakeOpenAI(lambda body: Reply("42"), tls=context) as server:
        Resolver(monkeypatch, model_example=["127.0.0.1"])
        url = f"https://model.example:{server.port}/v1"
        policy = RetryPolicy(max_attempts=1, timeout_seconds=5)
        with ChatClient(target(url, allow_private=True), policy=policy) as client:
            result = client.complete(QUESTION)
    assert names and set(names) == {"model.example"}
    if ok:
        assert result.outcome == "answered" and result.content == "42"
    else:
        assert result.outcome == "failed" and "certificate" in result.error.lower()
        assert not server.requests
