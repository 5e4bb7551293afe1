"""Who may open a page, call an API view or do a thing: one pattern, declared on the view.

A ``Rule`` says who may (holders of any of its permissions, or those its check lets through)
and what everyone else is told. A page declares it under ``@login_required`` with
``@requires(RULE)``; an API view lists ``api_rule(RULE)`` in its ``permission_classes``
(optionally for some HTTP methods only); a service checks it with ``RULE.check(user)``, so
a command or a task calling the service meets the same rule. The refusal is ``Forbidden``:
a 403 page with the message (and the rule's hint), or a 403 ``{"detail": message}`` from
the API, before the view reads anything.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

from plumbing.errors import Forbidden

View = TypeVar("View", bound=Callable[..., HttpResponse])


@dataclass(frozen=True)
class Rule:
    """Who may: holders of any of ``permissions`` (``app_label.codename``), and those
    ``allows_also(user, target)`` lets through (``target``: the object acted on, for rules
    such as "its owner or an admin"). ``message`` and ``hint`` tell everyone else why not
    and what to do."""

    message: str
    permissions: tuple[str, ...] = ()
    allows_also: Callable[[Any, Any], bool] | None = None
    hint: str = ""

    def allows(self, user: Any, target: Any = None) -> bool:
        if any(user.has_perm(p) for p in self.permissions):
            return True
        return self.allows_also is not None and bool(self.allows_also(user, target))

    def check(self, user: Any, target: Any = None) -> None:
        """Raise ``Forbidden`` unless ``user`` may (on ``target``)."""
        if not self.allows(user, target):
            raise Forbidden(self.message, hint=self.hint)


def requires(rule: Rule) -> Callable[[View], View]:
    """A page's rule, checked before the view's own code runs. Put it under
    ``@login_required`` (and ``@require_POST``), so anyone signed out goes to the log-in
    page first."""

    def decorate(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            rule.check(request.user)
            return view(request, *args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate


def api_rule(rule: Rule, *, methods: Collection[str] = ()) -> type[BasePermission]:
    """An API view's rule, for its ``permission_classes`` after ``IsAuthenticated``: DRF
    checks it before the handler. ``methods`` limits it to those HTTP methods; the others
    are left to the view's other permission classes."""
    limited = frozenset(m.upper() for m in methods)

    class RulePermission(BasePermission):
        message = rule.message

        def has_permission(self, request: Any, view: Any) -> bool:
            if limited and request.method not in limited:
                return True
            return rule.allows(request.user)

    return RulePermission
