"""Read-only REST API for tables and questions. Test-split gold answers are withheld here
exactly as on the pages: through ``selectors.gold_answer_visible``."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dataset import selectors
from dataset.forms import QuestionFilterForm, TableFilterForm
from dataset.models import Question, Table
from hctqa.core.render import FORMATS
from plumbing.pagination import CountedPagination, page_serializer


def _parse(form_class: type, request: Request) -> Any:
    form = form_class(request.query_params)
    if not form.is_valid():
        raise ValidationError({k: [str(e) for e in v] for k, v in form.errors.items()})
    return form


def _paginated(
    request: Request, queryset: QuerySet[Any], output: type[serializers.BaseSerializer]
) -> Response:
    paginator = CountedPagination()
    page = paginator.paginate_queryset(queryset, request)
    return paginator.get_paginated_response(
        output(page, many=True, context={"request": request}).data
    )


@extend_schema_field({"type": "string", "nullable": True})
class GoldAnswerField(serializers.Field):
    """The gold answer (or ``attribute``, something that gives it away, such as a synthetic
    question's SQL), or null when the requester may not see it (test split)."""

    def __init__(self, attribute: str = "gold_answer", **kwargs: Any) -> None:
        self.attribute = attribute
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("source", "*")
        super().__init__(**kwargs)

    def to_representation(self, question: Question) -> str | None:
        request = self.context["request"]
        if selectors.gold_answer_visible(user=request.user, split=question.table.split):
            return getattr(question, self.attribute)
        return None


class QuestionOutput(serializers.ModelSerializer):
    split = serializers.CharField(source="table.split", read_only=True)
    gold_answer = GoldAnswerField(
        help_text="Null for test-split questions unless you are an admin."
    )
    # A synthetic question's SQL, run on its relational table, computes the gold answer.
    sql = GoldAnswerField(
        attribute="sql", help_text="Null for test-split questions unless you are an admin."
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = Question
        fields = [
            "id",
            "table",
            "split",
            "text",
            "gold_answer",
            "origin",
            "template_number",
            "sql",
            "status",
            "query_properties",
            "url",
        ]

    def get_url(self, question: Question) -> str:
        return self.context["request"].build_absolute_uri(question.table.get_absolute_url())


table_filter_parameters = [
    OpenApiParameter("q", str, description="Text in the table id, its cells or its questions"),
    OpenApiParameter(
        "source", str, description="A collection's code (psa, pak, census, arxiv, …) or synthetic"
    ),
    OpenApiParameter("split", str, enum=["train", "validation", "test"]),
    OpenApiParameter("table_property", str, description="A table-property code"),
    OpenApiParameter("has_human_question", str, enum=["yes", "no"]),
    OpenApiParameter("page", int),
]


class TableListOutput(serializers.ModelSerializer):
    question_count = serializers.IntegerField()
    human_question_count = serializers.IntegerField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Table
        fields = [
            "id",
            "source",
            "split",
            "table_properties",
            "question_count",
            "human_question_count",
            "url",
        ]

    def get_url(self, table: Table) -> str:
        return self.context["request"].build_absolute_uri(table.get_absolute_url())


class TableListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=table_filter_parameters,
        responses=page_serializer("TableListPage", TableListOutput),
    )
    def get(self, request: Request) -> Response:
        form = _parse(TableFilterForm, request)
        return _paginated(
            request,
            selectors.table_list(filters=form.filters(), viewer=request.user),
            TableListOutput,
        )


class TableDetailOutput(serializers.ModelSerializer):
    questions = serializers.SerializerMethodField()
    image = serializers.ImageField(read_only=True)

    class Meta:
        model = Table
        fields = [
            "id",
            "source",
            "split",
            "canonical_csv",
            "title",
            "notes",
            "image",
            "image_url",
            "table_properties",
            "questions",
        ]

    def get_questions(self, table: Table) -> list[dict[str, Any]]:
        questions = selectors.question_list_for_table(
            table=table, viewer=self.context["request"].user
        )
        return QuestionOutput(questions, many=True, context=self.context).data


class TableDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=TableDetailOutput)
    def get(self, request: Request, table_id: str) -> Response:
        table = selectors.table_get(table_id=table_id)
        return Response(TableDetailOutput(table, context={"request": request}).data)


class TableRenderingOutput(serializers.Serializer):
    table = serializers.CharField()
    format = serializers.ChoiceField(choices=FORMATS)
    content = serializers.CharField()


class TableRenderingApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("fmt", OpenApiTypes.STR, OpenApiParameter.PATH, enum=FORMATS)],
        responses=TableRenderingOutput,
    )
    def get(self, request: Request, table_id: str, fmt: str) -> Response:
        if fmt not in FORMATS:
            raise ValidationError(
                {"format": [f"Unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"]}
            )
        table = selectors.table_get(table_id=table_id)
        content = selectors.table_rendering(table=table, fmt=fmt)
        return Response({"table": table.id, "format": fmt, "content": content})


class QuestionListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("table", str),
            OpenApiParameter("source", str),
            OpenApiParameter("split", str, enum=["train", "validation", "test"]),
            OpenApiParameter("origin", str, enum=["human", "model", "synthetic"]),
            OpenApiParameter("status", str),
            OpenApiParameter("q", str, description="Text in the question"),
            OpenApiParameter("page", int),
        ],
        responses=page_serializer("QuestionPage", QuestionOutput),
    )
    def get(self, request: Request) -> Response:
        form = _parse(QuestionFilterForm, request)
        return _paginated(
            request,
            selectors.question_list(filters=form.filters(), viewer=request.user),
            QuestionOutput,
        )


class QuestionDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=QuestionOutput)
    def get(self, request: Request, question_id: str) -> Response:
        question = selectors.question_get(question_id=question_id, viewer=request.user)
        return Response(QuestionOutput(question, context={"request": request}).data)
