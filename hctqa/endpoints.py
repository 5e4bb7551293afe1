"""The settings of an OpenAI-compatible endpoint, as question generation and inference runs
both take them: a base URL, and the NAME of the environment variable holding the key (the key
itself is read on the worker and never stored)."""

from __future__ import annotations

import re

from hctqa.errors import ApplicationError

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
BASE_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$")


def endpoint_checked(*, base_url: str, api_key_env: str) -> tuple[str, str]:
    """The base URL (no trailing slash) and the variable name, or ApplicationError."""
    base_url = base_url.strip().rstrip("/")
    if len(base_url) > 500 or not BASE_URL.match(base_url):
        raise ApplicationError(
            "the base URL should be http(s)://host[:port]/path, e.g. http://gpu-host:8000/v1",
            field="base_url",
        )
    api_key_env = api_key_env.strip()
    if not ENV_NAME.match(api_key_env):
        raise ApplicationError(
            "give the NAME of the environment variable that holds the key (letters, digits "
            "and _, e.g. OPENAI_API_KEY), never the key itself",
            field="api_key_env",
        )
    return base_url, api_key_env
