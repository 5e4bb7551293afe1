"""The one exception type services raise for a problem the user can act on."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied


class ApplicationError(Exception):
    """``details``: the individual problems behind the message, when there are several (the
    lines of an uploaded file that are wrong, say), for the page or the API to list."""

    def __init__(
        self, message: str, *, field: str | None = None, details: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or []


class ConflictError(ApplicationError):
    """The thing being saved changed elsewhere since the client loaded it (HTTP 409).
    ``current`` describes what is saved now, so the client can show it."""

    def __init__(self, message: str, *, current: dict[str, object]) -> None:
        super().__init__(message)
        self.current = current


class Forbidden(PermissionDenied):
    """A refusal that tells the person what to do about it: ``hint`` is shown on the 403
    page under the reason (who can give them access, where to go instead)."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint
