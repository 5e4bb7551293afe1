"""What generation runs share: an identical run is refused while one is queued or running.

A run's ``fingerprint`` is the SHA-256 of what it was asked to do; a unique index over the
fingerprints of queued and running runs (``one_active_*_run_per_request``) refuses a second,
so two admins pressing Start at the same moment cannot both queue it. Five identical runs
queued in 0.2 s once held the worker for minutes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import IntegrityError, models

from plumbing.errors import ConflictError


def fingerprint(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


@contextmanager
def refusing_duplicates(model: type[models.Model], fingerprint: str, what: str) -> Iterator[None]:
    """Turn the unique index's refusal into a message naming the run already under way."""
    try:
        yield
    except IntegrityError:
        twin = (
            model._default_manager.filter(fingerprint=fingerprint, status__in=["queued", "running"])
            .values_list("pk", "status")
            .first()
        )
        if twin is None:
            raise
        pk, status = twin
        raise ConflictError(
            f"An identical {what} (run {pk}) is already {status}: it is not queued twice. Wait "
            "for it to finish, or cancel it first",
            current={"run": pk, "status": status},
        ) from None
