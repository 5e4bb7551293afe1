"""Writes to the endpoint registry, and the checks of what people give as an endpoint: a base
URL, a key variable (admins), a key (researchers, for their own endpoint)."""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import ProtectedError

from endpoints.addresses import AddressRefused, address_check, literal, resolve_checked
from endpoints.models import Endpoint
from endpoints.permissions import MANAGING_ENDPOINTS
from plumbing.errors import ApplicationError, ConflictError

# Upper case, as environment variables are by convention; a pasted key (sk-…, hf_…) is not.
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,99}$")
BASE_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$", re.IGNORECASE)
ENDPOINT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Printable ASCII without spaces: a key goes into an HTTP header, where CR/LF would inject.
API_KEY = re.compile(r"^[\x21-\x7e]{1,500}$")
MAX_MODEL_NAMES = 100


def key_variable_allowed(name: str) -> bool:
    return bool(ENV_NAME.match(name)) and any(
        fnmatchcase(name, pattern) for pattern in settings.ENDPOINT_KEY_VARIABLES
    )


def base_url_checked(base_url: str, *, allow_private: bool) -> str:
    """The base URL in its one spelling (no trailing slash, scheme and host in lower case, no
    default port: the response cache is keyed on it), or ApplicationError.

    A host written as an address, or one that resolves here, must pass the address checks.
    A name that does not resolve here may still resolve where the run executes: the client
    checks again on every connection, and that check is the one that counts."""
    base_url = base_url.strip().rstrip("/")
    bad_url = ApplicationError(
        "The base URL should be http(s)://host[:port]/path, e.g. http://gpu-host:8000/v1",
        field="base_url",
    )
    if len(base_url) > 500 or not BASE_URL.match(base_url):
        raise bad_url
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:  # a port out of range or not a number, a broken [IPv6] host
        raise bad_url from None
    if not parts.hostname:
        raise bad_url
    if parts.username or parts.password:
        raise ApplicationError("Put no user name or password in the base URL", field="base_url")
    scheme = parts.scheme.lower()
    default_port = {"http": 80, "https": 443}[scheme]
    address = literal(parts.hostname)
    try:
        if address is not None:
            address_check(address, allow_private=allow_private, host=parts.hostname)
        else:
            resolve_checked(parts.hostname, port or default_port, allow_private=allow_private)
    except AddressRefused as exc:
        raise ApplicationError(
            f"The base URL is refused: {exc.message}", field="base_url"
        ) from None
    except (OSError, UnicodeError, socket.gaierror):
        pass  # may resolve only where the run executes
    netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if port and port != default_port:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path, "", ""))


def own_base_url_checked(base_url: str) -> str:
    """A researcher's own endpoint: public addresses only, unless the deployment allows
    private ones (INFERENCE_ALLOW_PRIVATE_ENDPOINTS)."""
    return base_url_checked(base_url, allow_private=settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS)


def key_variable_checked(name: str) -> str:
    """The name of the variable holding a registered endpoint's key ("" for none)."""
    name = name.strip()
    if not name:
        return ""
    if not ENV_NAME.match(name):
        raise ApplicationError(
            "Give the NAME of the environment variable that holds the key (capital letters, "
            "digits and _, e.g. OPENAI_API_KEY), never the key itself",
            field="api_key_env",
        )
    if not key_variable_allowed(name):
        raise ApplicationError(
            f"The variable {name} is not one the platform sends as a key; allowed: "
            f"{', '.join(settings.ENDPOINT_KEY_VARIABLES)} (ENDPOINT_KEY_VARIABLES)",
            field="api_key_env",
        )
    return name


def api_key_checked(key: str) -> str:
    """A researcher's key for their own endpoint."""
    key = key.strip()
    if not API_KEY.match(key):
        raise ApplicationError(
            "The API key should be 1 to 500 printable characters without spaces",
            field="api_key",
        )
    return key


# --- The registry --------------------------------------------------------------------------


@dataclass(frozen=True)
class EndpointInput:
    name: str
    base_url: str
    api_key_env: str = ""
    model_names: Sequence[str] = ()
    description: str = ""
    open_to_researchers: bool = False
    usernames: Sequence[str] = ()
    group_names: Sequence[str] = ()
    is_active: bool = True
    # Fields to leave as they are (an update that names only some).
    keep: frozenset[str] = field(default_factory=frozenset)


def model_names_checked(names: Sequence[str]) -> list[str]:
    cleaned = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    if len(cleaned) > MAX_MODEL_NAMES or any(len(n) > 200 for n in cleaned):
        raise ApplicationError(
            f"At most {MAX_MODEL_NAMES} model names of at most 200 characters",
            field="model_names",
        )
    return cleaned


def endpoint_fields_checked(
    *, name: str, base_url: str, api_key_env: str, model_names: Sequence[str], description: str
) -> dict[str, Any]:
    """The registry's rules, shared by the API and the Django admin's form."""
    name = name.strip()
    if not ENDPOINT_NAME.match(name):
        raise ApplicationError(
            "The name should be 1 to 64 lower-case letters, digits, - and _, e.g. vllm-gpu1",
            field="name",
        )
    if len(description) > 300:
        raise ApplicationError("At most 300 characters", field="description")
    return {
        "name": name,
        # Loopback and private addresses are fine for an admin's endpoint; link-local is not.
        "base_url": base_url_checked(base_url, allow_private=True),
        "api_key_env": key_variable_checked(api_key_env),
        "model_names": model_names_checked(model_names),
        "description": description.strip(),
    }


def _people(data: EndpointInput) -> tuple[list[Any], list[Group]]:
    users = list(get_user_model().objects.filter(username__in=data.usernames))
    missing = sorted(set(data.usernames) - {u.get_username() for u in users})
    if missing:
        raise ApplicationError(f"No such user: {', '.join(missing)}", field="usernames")
    groups = list(Group.objects.filter(name__in=data.group_names))
    missing = sorted(set(data.group_names) - {g.name for g in groups})
    if missing:
        raise ApplicationError(f"No such group: {', '.join(missing)}", field="group_names")
    return users, groups


def _save(endpoint: Endpoint, data: EndpointInput) -> Endpoint:
    keep = data.keep
    current = {
        "name": endpoint.name,
        "base_url": endpoint.base_url,
        "api_key_env": endpoint.api_key_env,
        "model_names": endpoint.model_names,
        "description": endpoint.description,
    }
    given = {k: getattr(data, k) for k in current if k not in keep}
    for key, value in endpoint_fields_checked(**{**current, **given}).items():
        setattr(endpoint, key, value)
    if "open_to_researchers" not in keep:
        endpoint.open_to_researchers = data.open_to_researchers
    if "is_active" not in keep:
        endpoint.is_active = data.is_active
    taken = Endpoint.objects.filter(name=endpoint.name).exclude(pk=endpoint.pk)
    if taken.exists():
        raise ApplicationError(f"There is an endpoint {endpoint.name} already", field="name")
    users, groups = _people(data)
    endpoint.save()
    if "usernames" not in keep:
        endpoint.users.set(users)
    if "group_names" not in keep:
        endpoint.groups.set(groups)
    return endpoint


@transaction.atomic
def endpoint_create(*, user: Any, data: EndpointInput) -> Endpoint:
    MANAGING_ENDPOINTS.check(user)
    return _save(Endpoint(), data)


@transaction.atomic
def endpoint_update(*, user: Any, name: str, data: EndpointInput) -> Endpoint:
    """Change an endpoint; fields named in ``data.keep`` stay as they are. Runs already on it
    use the new URL and key variable from their next request batch on."""
    MANAGING_ENDPOINTS.check(user)
    endpoint = Endpoint.objects.select_for_update().filter(name=name).first()
    if endpoint is None:
        raise ApplicationError(f"No endpoint {name}", field="name")
    return _save(endpoint, data)


@transaction.atomic
def endpoint_delete(*, user: Any, name: str) -> None:
    """Remove an endpoint that no run used; one that runs used is deactivated instead, so
    their history keeps saying where they ran."""
    MANAGING_ENDPOINTS.check(user)
    endpoint = Endpoint.objects.filter(name=name).first()
    if endpoint is None:
        raise ApplicationError(f"No endpoint {name}", field="name")
    try:
        endpoint.delete()
    except ProtectedError:
        raise ConflictError(
            f"Runs used {name}, so it stays on record; deactivate it instead",
            current={"name": name, "is_active": endpoint.is_active},
        ) from None
