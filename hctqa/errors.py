"""The one exception type services raise for a problem the user can act on."""

from __future__ import annotations


class ApplicationError(Exception):
    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class ConflictError(ApplicationError):
    """The thing being saved changed elsewhere since the client loaded it (HTTP 409).
    ``current`` describes what is saved now, so the client can show it."""

    def __init__(self, message: str, *, current: dict[str, object]) -> None:
        super().__init__(message)
        self.current = current
