"""API wiring shared by the apps: application errors become HTTP 400 in one place, with the
shapes of those answers (``ErrorOutput``, ``ConflictOutput``) for the schema, and the schema's
naming of the input serializers views declare inside themselves (``AutoSchema``)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import exceptions, serializers
from rest_framework.fields import SkipField
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from hctqa.core.safe_json import MAX_DEPTH, NestingError
from plumbing.errors import ApplicationError, ConflictError, Problems


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ConflictError):
        return Response({"detail": exc.message, "current": exc.current}, status=409)
    if isinstance(exc, ApplicationError):
        body: dict[str, Any] = {"detail": exc.message}
        if exc.field:
            body["field"] = exc.field
        if exc.details:
            body["problems"] = exc.details
        if len(exc.problems) > 1:
            # Checked in one pass: every problem, by field.
            body["errors"] = exc.by_field
        return Response(body, status=400)
    if isinstance(exc, RecursionError):
        # A view with parsers of its own (the token endpoint) reading deeply nested JSON; the
        # default parser (plumbing.parsers) refuses it before it recurses.
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

    def unknown_fields(self) -> dict[str, list[str]]:
        unknown = sorted(set(self.initial_data) - set(self.fields))
        return {name: [self.retired.get(name, "Not a field of this request")] for name in unknown}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if unknown := self.unknown_fields():
            raise exceptions.ValidationError(unknown)
        return attrs


def read_what_is_valid(serializer: serializers.Serializer) -> tuple[dict[str, Any], Problems]:
    """The fields of a flat input serializer that are valid, and the problems of the others,
    so that a service can check the rest and report everything at once."""
    problems = Problems()
    if serializer.is_valid():
        return dict(serializer.validated_data), problems
    problems.add_form_errors({k: [str(e) for e in v] for k, v in serializer.errors.items()})
    if isinstance(serializer, StrictInput):
        # validate() did not run: the fields it refuses are not among the errors yet.
        unknown = serializer.unknown_fields()
        problems.add_form_errors({k: v for k, v in unknown.items() if k not in serializer.errors})
    values: dict[str, Any] = {}
    for name, field in serializer.fields.items():
        if name in serializer.errors:
            continue
        try:
            values[name] = field.run_validation(field.get_value(serializer.initial_data))
        except (exceptions.ValidationError, SkipField):
            continue
    return values, problems


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's schema, naming a serializer declared inside a view after the view:
    ``CandidateDraftApi.Input`` is the component ``CandidateDraftInput`` (every view's
    ``Input`` was one component ``Input`` before, whose fields were the last view's)."""

    def get_serializer_name(self, serializer: serializers.Serializer, direction: Any) -> str:
        cls = serializer.__class__
        outer, _, inner = cls.__qualname__.rpartition(".")
        if not outer:
            return cls.__name__.lstrip("_")
        return outer.rpartition(".")[2].removesuffix("Api") + inner.removesuffix("Serializer")

    def get_operation_id(self) -> str:
        """A GET answering a page of items is a list (``tables_list``), apart from the GET
        of one item (``tables_retrieve``): an APIView is always a retrieve otherwise."""
        operation_id = super().get_operation_id()
        if self.method == "GET" and operation_id.endswith("_retrieve") and self._answers_a_page():
            return operation_id.removesuffix("_retrieve") + "_list"
        return operation_id

    def _answers_a_page(self) -> bool:
        response = self.get_response_serializers()
        if isinstance(response, dict):
            response = response.get(200)
        cls = response if isinstance(response, type) else type(response)
        return "results" in getattr(cls, "_declared_fields", {})


class ErrorOutput(serializers.Serializer):
    """A request refused (400): what is wrong, and where when it is one field. A field that
    fails its own checks is answered as ``{"field": ["why"]}`` instead."""

    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="The field at fault.")
    problems = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="The details behind it."
    )
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Every problem, by field, when there are several.",
    )


class ConflictOutput(serializers.Serializer):
    """A request that conflicts with the current state (409), and that state."""

    detail = serializers.CharField()
    current = serializers.DictField(allow_null=True)
