"""The one exception type services raise for a problem the user can act on."""

from __future__ import annotations


class ApplicationError(Exception):
    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
