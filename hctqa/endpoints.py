"""The settings of an OpenAI-compatible endpoint, as question generation and inference runs
both take them: a base URL, and the NAME of the environment variable holding the key (the key
itself is read on the worker and never stored).

The worker sends that variable's value to a URL the requester chose, so only variables an
admin allows (ENDPOINT_KEY_VARIABLES) may be named: never SECRET_KEY or DATABASE_URL.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from fnmatch import fnmatchcase
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

from hctqa.errors import ApplicationError

# Upper case, as environment variables are by convention; a pasted key (sk-…, hf_…) is not.
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,99}$")
BASE_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$", re.IGNORECASE)


def key_variable_allowed(name: str) -> bool:
    return bool(ENV_NAME.match(name)) and any(
        fnmatchcase(name, pattern) for pattern in settings.ENDPOINT_KEY_VARIABLES
    )


def endpoint_checked(*, base_url: str, api_key_env: str) -> tuple[str, str]:
    """The base URL (no trailing slash) and the variable name, or ApplicationError."""
    base_url = base_url.strip().rstrip("/")
    bad_url = ApplicationError(
        "the base URL should be http(s)://host[:port]/path, e.g. http://gpu-host:8000/v1",
        field="base_url",
    )
    if len(base_url) > 500 or not BASE_URL.match(base_url):
        raise bad_url
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - raises on a port out of range or not a number
    except ValueError:
        raise bad_url from None
    if not parts.hostname:
        raise bad_url
    if _link_local(parts.hostname):
        # Cloud metadata services live there (169.254.169.254): never a model endpoint, and
        # the worker would hand them its key and show their reply in the run's error.
        raise ApplicationError(
            "the base URL points at a link-local address (169.254.x.x, fe80::), which is no "
            "model endpoint",
            field="base_url",
        )
    # One spelling per endpoint (scheme and host in lower case, no default port): the
    # response cache is keyed on it.
    netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    default_port = {"http": 80, "https": 443}[parts.scheme.lower()]
    if parts.port and parts.port != default_port:
        netloc += f":{parts.port}"
    if parts.username or parts.password:
        raise ApplicationError(
            "put no user name or password in the base URL; the key goes in the variable",
            field="base_url",
        )
    base_url = urlunsplit((parts.scheme.lower(), netloc, parts.path, "", ""))
    api_key_env = api_key_env.strip()
    if not ENV_NAME.match(api_key_env):
        raise ApplicationError(
            "give the NAME of the environment variable that holds the key (capital letters, "
            "digits and _, e.g. OPENAI_API_KEY), never the key itself",
            field="api_key_env",
        )
    if not key_variable_allowed(api_key_env):
        raise ApplicationError(
            f"{api_key_env} is not a variable the platform sends as a key; allowed: "
            f"{', '.join(settings.ENDPOINT_KEY_VARIABLES)} (an admin sets "
            "ENDPOINT_KEY_VARIABLES)",
            field="api_key_env",
        )
    return base_url, api_key_env


def _link_local(host: str) -> bool:
    try:
        addresses = {ipaddress.ip_address(host.strip("[]"))}
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except OSError:
            return False  # may resolve only where the run executes
        addresses = {ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos}
    return any(address.is_link_local for address in addresses)


def api_key_read(name: str) -> str:
    """The key, read where the run executes. Checked again here: the allowed variables may
    have changed since the run was started."""
    if not key_variable_allowed(name):
        raise ApplicationError(
            f"{name} is not a variable the platform sends as a key (ENDPOINT_KEY_VARIABLES)"
        )
    return os.environ.get(name, "")
