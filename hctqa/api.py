"""API wiring shared by the apps: application errors become HTTP 400 in one place."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from hctqa.core.safe_json import MAX_DEPTH, NestingError
from hctqa.errors import ApplicationError, ConflictError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ConflictError):
        return Response({"detail": exc.message, "current": exc.current}, status=409)
    if isinstance(exc, ApplicationError):
        body: dict[str, Any] = {"detail": exc.message}
        if exc.field:
            body["field"] = exc.field
        if exc.details:
            body["problems"] = exc.details
        return Response(body, status=400)
    if isinstance(exc, RecursionError):
        # A view with parsers of its own (the token endpoint) reading deeply nested JSON; the
        # default parser (hctqa.parsers) refuses it before it recurses.
        return Response({"detail": f"JSON parse error - {NestingError(MAX_DEPTH)}"}, status=400)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "message_dict") else exc.messages
        )
    return drf_exception_handler(exc, context)


class StrictInput(serializers.Serializer):
    """An input serializer that refuses fields it does not know, instead of ignoring them: a
    client still sending a field that was removed learns so, rather than getting a request
    done without it. ``retired`` says what to send instead of such a field."""

    retired: dict[str, str] = {}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            raise exceptions.ValidationError(
                {name: [self.retired.get(name, "Not a field of this request")] for name in unknown}
            )
        return attrs
