"""The upgrade of runs made before endpoints were registered, shared by the annotation and
leaderboard migrations (which pass their historical models).

Those runs named a base URL and a key variable themselves, which is how a researcher could
send the worker's keys to their own server. Each distinct (base URL, key variable) becomes a
registered endpoint that is **inactive**, open to the people whose runs used it: nothing
sends a server-held key anywhere until an admin has checked the URL and the variable and
activated it. Until then the runs' history stays readable, and resuming them says why not.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

DESCRIPTION = (
    "Made by the upgrade from runs that named this URL and key variable themselves. Check "
    "both, and who may use it, before activating it."
)


def _name_for(base_url: str, taken: set[str]) -> str:
    host = (urlsplit(base_url).hostname or "endpoint").lower()
    stem = "imported-" + (re.sub(r"[^a-z0-9]+", "-", host).strip("-") or "endpoint")[:40]
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}"
    taken.add(name)
    return name


def endpoints_for_old_runs(
    endpoint_model: Any, configurations: dict[tuple[str, str], set[int]]
) -> dict[tuple[str, str], Any]:
    """For each (base URL, key variable) and the ids of the users whose runs used it, the
    endpoint standing for it: one an admin registered with that very URL and variable (the
    upgrade undone and done again; its users stay as the admin set them), or an inactive
    one made here, open to those users."""
    taken = set(endpoint_model.objects.values_list("name", flat=True))
    out = {}
    for (base_url, api_key_env), user_ids in sorted(configurations.items()):
        same = endpoint_model.objects.filter(base_url=base_url, api_key_env=api_key_env)
        endpoint = same.exclude(description=DESCRIPTION).first() or same.first()
        if endpoint is None:
            endpoint = endpoint_model.objects.create(
                name=_name_for(base_url, taken),
                base_url=base_url,
                api_key_env=api_key_env,
                model_names=[],
                description=DESCRIPTION,
                open_to_researchers=False,
                is_active=False,
            )
        if endpoint.description == DESCRIPTION:
            endpoint.users.add(*sorted(user_ids))
        out[(base_url, api_key_env)] = endpoint
    return out
