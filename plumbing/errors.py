"""The one exception type services raise for a problem the user can act on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied


class ApplicationError(Exception):
    """``details``: the individual problems behind the message, when there are several (the
    lines of an uploaded file that are wrong, say), for the page or the API to list.
    ``code`` sorts problems a caller treats apart (``"file"``: the uploaded file itself is
    broken). ``problems``: every problem found when a request was checked in one pass (see
    ``Problems``); this error is the first of them."""

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        details: list[str] | None = None,
        code: str = "",
        problems: list[ApplicationError] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or []
        self.code = code
        self.problems = problems or [self]

    @property
    def by_field(self) -> dict[str, list[str]]:
        """Every problem's message, and the details behind it, by field ("non_field_errors"
        for the rest), as a form or DRF lists them."""
        out: dict[str, list[str]] = {}
        for problem in self.problems:
            field = out.setdefault(problem.field or "non_field_errors", [])
            field += [problem.message, *problem.details]
        return out


class Problems:
    """What is wrong with a request, gathered in one pass so that all of it is reported at
    once instead of one error per try. Checks that raise ``ApplicationError`` run inside
    ``check()``; ``raise_if_any`` raises the first with all of them attached."""

    def __init__(self) -> None:
        self.items: list[ApplicationError] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, message: str, *, field: str | None = None, code: str = "") -> None:
        self.items.append(ApplicationError(message, field=field, code=code))

    def add_error(self, error: ApplicationError) -> None:
        self.items.extend(error.problems)

    def add_form_errors(self, errors: Mapping[str, list[str]]) -> None:
        """A form's or serializer's field errors (``__all__`` and ``non_field_errors`` become
        problems with no field)."""
        for field, messages in errors.items():
            named = None if field in ("__all__", "non_field_errors") else field
            for message in messages:
                self.add(str(message), field=named)

    @contextmanager
    def check(self) -> Iterator[None]:
        """Run one check: an ``ApplicationError`` it raises is kept and the caller goes on."""
        try:
            yield
        except ApplicationError as exc:
            self.add_error(exc)

    def on(self, field: str) -> bool:
        """Whether a problem names this field already (its value is not checked further)."""
        return any(p.field == field for p in self.items)

    def raise_if_any(self) -> None:
        if self.items:
            first = self.items[0]
            raise ApplicationError(
                first.message,
                field=first.field,
                details=first.details,
                code=first.code,
                problems=list(self.items),
            )


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


def add_problems(form: forms.Form, error: ApplicationError) -> None:
    """Show every problem of a request checked in one pass on its form: by field where the
    form has it, at the top otherwise; a file's problems with their details."""
    for problem in error.problems:
        field = problem.field if problem.field in form.fields else None
        messages = [problem.message, *problem.details]
        if messages[0] not in form.errors.get(field or NON_FIELD_ERRORS, []):
            form.add_error(field, messages)
