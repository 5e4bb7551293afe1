"""Reads of the endpoint registry: who may use which endpoint, and where a run's requests
go with which key. The one place that decides which key is sent where."""

from __future__ import annotations

import logging
import os
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from endpoints.client import ChatTarget
from endpoints.keys import api_key_unseal
from endpoints.models import Endpoint
from endpoints.services import API_KEY, key_variable_allowed
from hctqa.accounts.roles import RESEARCHER
from hctqa.errors import ApplicationError

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
      never a key the server holds.
    """
    if endpoint is None:
        return ChatTarget(
            base_url=base_url,
            api_key=api_key_unseal(sealed_key) if sealed_key else "",
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            allow_private=settings.INFERENCE_ALLOW_PRIVATE_ENDPOINTS,
            max_content_chars=settings.INFERENCE_MAX_ANSWER_CHARS or None,
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
    )
