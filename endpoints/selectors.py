"""Reads of the endpoint registry: who may use which endpoint, and where a run's requests
go with which key. The one place that decides which key is sent where."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Q, QuerySet

from accounts.roles import RESEARCHER
from endpoints.addresses import literal, machine
from endpoints.client import ChatClient, ChatTarget, ModelListError, RetryPolicy
from endpoints.keys import api_key_unseal, credential_digest
from endpoints.models import Endpoint
from endpoints.services import API_KEY, key_variable_allowed
from plumbing.errors import ApplicationError

logger = logging.getLogger(__name__)


def can_use_any_endpoint(*, user: Any) -> bool:
    return user.is_authenticated and user.has_perm("endpoints.use_any_endpoint")


def endpoints_usable_by(*, user: Any) -> QuerySet[Endpoint]:
    """The active endpoints ``user`` may run on: all for admins; otherwise those open to
    researchers (if they are one), or naming them or one of their groups."""
    active = Endpoint.objects.filter(is_active=True).order_by("name")
    if not user.is_authenticated:
        return active.none()
    if can_use_any_endpoint(user=user):
        return active
    groups = list(user.groups.values_list("pk", flat=True))
    allowed = Q(users=user) | Q(groups__in=groups)
    if user.groups.filter(name=RESEARCHER).exists():
        allowed |= Q(open_to_researchers=True)
    return active.filter(pk__in=Endpoint.objects.filter(allowed).values("pk"))


def endpoint_choices(*, user: Any) -> list[tuple[str, str]]:
    """(name, label) of the endpoints ``user`` may use, for a form's select."""
    choices = []
    for endpoint in endpoints_usable_by(user=user):
        label = endpoint.name
        if endpoint.description:
            label += f": {endpoint.description}"
        if endpoint.model_names:
            label += f" ({', '.join(endpoint.model_names[:5])}"
            label += ", …)" if len(endpoint.model_names) > 5 else ")"
        choices.append((endpoint.name, label))
    return choices


def endpoint_for_run(*, user: Any, name: str, model_name: str | None) -> Endpoint:
    """The endpoint ``user`` chose by name, if they may use it for ``model_name`` (None: a
    model not known yet, checked later)."""
    endpoint = endpoints_usable_by(user=user).filter(name=name.strip()).first()
    if endpoint is None:
        raise ApplicationError(
            f"There is no endpoint {name.strip()!r} that you may use (an admin registers "
            "endpoints and says who may use them)",
            field="endpoint",
        )
    if model_name is not None and not endpoint.serves(model_name):
        raise ApplicationError(
            f"Endpoint {endpoint.name} serves {', '.join(endpoint.model_names)}, not {model_name}",
            field="model_name",
        )
    return endpoint


def _host_and_port(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return (parts.hostname or "").rstrip(".").lower(), port


def _machines(host: str, port: int) -> set[str]:
    """The machines ``host`` reaches, as ``machine`` spells them (none if it does not resolve
    here)."""
    address = literal(host)
    if address is not None:
        return {machine(address)}
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    return {machine(ipaddress.ip_address(str(info[4][0]).split("%")[0])) for info in infos}


def keyless_servers() -> frozenset[tuple[str, int]]:
    """(machine, port) of every registered endpoint, active or not, that answers without a
    key: its URL is all that keeps it to its people, so nobody's own endpoint connects there."""
    servers = set()
    for base_url in Endpoint.objects.filter(api_key_env="").values_list("base_url", flat=True):
        host, port = _host_and_port(base_url)
        servers |= {(m, port) for m in _machines(host, port)}
    return frozenset(servers)


def own_endpoint_check(base_url: str) -> None:
    """Refuse an own endpoint that is a registered endpoint answering without a key.

    The same server: the same port, and the same host name (case and a final dot aside) or
    an address in common as both resolve here, IPv4 in IPv6 unwrapped and every loopback
    address one machine. The path does not count: a server answers on all of them. A
    registered endpoint with a key is no concern: its key is never sent to an own endpoint,
    whose cache is the person's own, so their own key decides what they get there.
    """
    host, port = _host_and_port(base_url)
    for endpoint in Endpoint.objects.filter(api_key_env=""):
        other, other_port = _host_and_port(endpoint.base_url)
        if other_port != port:
            continue
        if other == host or _machines(host, port) & _machines(other, port):
            raise ApplicationError(
                f"The base URL {base_url} is the registered endpoint {endpoint.name}, which "
                "answers without a key: choose it by name if you may use it (an admin says who "
                "may)",
                field="base_url",
            )


def chat_target(
    *,
    user: Any,
    endpoint: Endpoint | None,
    base_url: str,
    sealed_key: str,
    model: str,
    temperature: float,
    max_tokens: int,
) -> ChatTarget:
    """Where a run's requests go, with which key, read where the run executes.

    - A registered endpoint: its base URL and the key from its variable, checked again now
      (the endpoint may have been deactivated, the user's access or the allowed variables
      changed since the run started). Loopback and private addresses are allowed.
    - Anyone's own endpoint (``endpoint`` None): their base URL and their own sealed key,
      never a key the server holds, and never to a registered endpoint that answers without
      a key (checked again on every connection).

    The target's ``cache_scope`` names whose credential it is: the registered endpoint and
    its key, or the person and their key, keys as ``credential_digest``.
    """
    if endpoint is None:
        own_endpoint_check(base_url)
        key = api_key_unseal(sealed_key) if sealed_key else ""
        return ChatTarget(
            base_url=base_url,
            api_key=key,
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            allow_private=settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS,
            max_content_chars=settings.INFERENCE_MAX_ANSWER_CHARS or None,
            cache_scope=f"user {user.pk} key {credential_digest(key)}",
            off_limits=keyless_servers(),
        )
    endpoint_for_run(user=user, name=endpoint.name, model_name=model)
    key = ""
    if endpoint.api_key_env:
        variable = endpoint.api_key_env
        if not key_variable_allowed(variable):
            logger.warning("endpoint %s: %s is not in ENDPOINT_KEY_VARIABLES", endpoint, variable)
            raise ApplicationError(
                f"The key of endpoint {endpoint.name} is in a variable the platform no longer "
                "sends (ENDPOINT_KEY_VARIABLES); an admin needs to fix the endpoint"
            )
        key = os.environ.get(variable, "").strip()
        if key and not API_KEY.match(key):
            # It goes into a header: a newline would end up in an exception's message.
            raise ApplicationError(
                f"The key of endpoint {endpoint.name} is not a valid key (printable characters "
                "without spaces); an admin needs to fix it where the run executes"
            )
        if not key:
            # Named in the log for the operator; the run's error, which researchers read,
            # does not name it.
            logger.warning("endpoint %s: the variable %s is not set here", endpoint, variable)
            raise ApplicationError(
                f"The key of endpoint {endpoint.name} is not set where the run executes (the "
                "inference worker, or the shell of a command); an admin sets it, then the run "
                "can be resumed"
            )
    return ChatTarget(
        base_url=endpoint.base_url,
        api_key=key,
        model=model,
        temperature=temperature,
        max_tokens=max_tokens,
        allow_private=True,
        error_detail=True,
        max_content_chars=settings.INFERENCE_MAX_ANSWER_CHARS or None,
        cache_scope=f"endpoint {endpoint.pk} key {credential_digest(key)}",
    )


@dataclass(frozen=True)
class ServedModelCheck:
    """What the endpoint's model list says of a run's model. ``listed``: the list names it
    (False: the endpoint has no model list, or did not answer from here, so the model could
    not be checked)."""

    listed: bool
    context_length: int | None = None


# Model names a refusal lists, of those the endpoint serves.
_NAMES_SHOWN = 10


def served_model_check(target: ChatTarget) -> ServedModelCheck:
    """Whether the endpoint at ``target`` serves ``target.model``, by its model list (``GET
    {base_url}/models``, one request of at most INFERENCE_CHECK_TIMEOUT seconds), and the
    context length it reports for it. ApplicationError when the endpoint answers that it
    does not serve the model, or with anything but a model list (a wrong key, a redirect):
    a run would fail on its first question. An endpoint that does not answer from here is
    not checked: it may answer where the run executes, and a run stops by itself after a
    few requests that reach nothing."""
    policy = RetryPolicy(max_attempts=1, timeout_seconds=settings.INFERENCE_CHECK_TIMEOUT)
    with ChatClient(target, policy=policy) as client:
        try:
            models = client.served_models()
        except ModelListError as exc:
            if exc.unreachable:
                return ServedModelCheck(listed=False)
            raise ApplicationError(
                f"The endpoint's model list could not be read: {exc}", field="endpoint"
            ) from None
    if models is None:
        return ServedModelCheck(listed=False)
    for model in models:
        if model.name == target.model:
            return ServedModelCheck(listed=True, context_length=model.context_length)
    names = sorted(m.name for m in models)
    shown = ", ".join(names[:_NAMES_SHOWN]) + (", …" if len(names) > _NAMES_SHOWN else "")
    raise ApplicationError(
        f"The endpoint does not serve a model named {target.model!r}"
        + (f"; it serves {shown}" if names else "; it lists no model"),
        field="model_name",
    )
