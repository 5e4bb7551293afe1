"""REST API of the annotation tools. The tools' own pages use it too (session + CSRF), so
everything an annotator does in the browser can be done with a token as well."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions as rules
from annotation import selectors, services
from annotation.models import AnnotationTool
from dataset.models import Question, Split, Table
from dataset.selectors import table_get, table_rendering
from hctqa.core import taxonomy
from hctqa.core.answers import AnswerFormatError, canonical_answer
from hctqa.core.query_templates import TARGET_MIX, TEMPLATES
from plumbing.api import ConflictOutput, ErrorOutput
from plumbing.errors import ApplicationError
from plumbing.permissions import api_rule

# Client clocks and counters arrive as JavaScript numbers: beyond 2**53 they are not
# whole numbers any more, and the database columns refuse them.
_MAX_INT = 2**53


# --- What the API answers ----------------------------------------------------------------

_PROPERTIES_HELP = "Property code → value (true/false, a count, or null when not set)."


class TableOutput(serializers.Serializer):
    id = serializers.CharField()
    source = serializers.CharField()
    split = serializers.ChoiceField(choices=Split.choices)
    image = serializers.CharField(allow_null=True)
    html = serializers.CharField(help_text="The table as the tools show it.")
    url = serializers.CharField()


class NextTableOutput(serializers.Serializer):
    table = serializers.CharField()
    url = serializers.CharField()


class _Violation(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class _TaxonomyProperty(serializers.Serializer):
    code = serializers.CharField()
    label = serializers.CharField()
    definition = serializers.CharField()
    parent = serializers.CharField(allow_null=True)
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)


class _TaxonomyGroup(serializers.Serializer):
    parent = serializers.CharField(allow_null=True)
    members = serializers.ListField(child=serializers.CharField())
    rule = serializers.CharField()
    label = serializers.CharField()


class _Taxonomy(serializers.Serializer):
    name = serializers.CharField()
    properties = _TaxonomyProperty(many=True)
    groups = _TaxonomyGroup(many=True)
    exclusive = serializers.ListField(child=serializers.CharField())


class _Template(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    example = serializers.CharField()
    properties = serializers.DictField(help_text=_PROPERTIES_HELP)


class TaxonomiesOutput(serializers.Serializer):
    table_properties = _Taxonomy()
    query_properties = _Taxonomy()
    templates = _Template(many=True)
    target_mix = serializers.DictField(
        child=serializers.FloatField(), help_text="The paper's share of each query property."
    )
    reserved_keys = serializers.ListField(child=serializers.CharField())


class _PropertyProgress(serializers.Serializer):
    done_today = serializers.IntegerField()
    done_total = serializers.IntegerField()
    remaining = serializers.IntegerField()


class PropertyWorkOutput(serializers.Serializer):
    table = TableOutput()
    properties = serializers.DictField(help_text=_PROPERTIES_HELP)
    saved = serializers.DictField(
        allow_null=True, help_text="The properties last saved; null before the first save."
    )
    version = serializers.IntegerField()
    has_draft = serializers.BooleanField()
    seconds_spent = serializers.IntegerField()
    violations = _Violation(many=True)
    progress = _PropertyProgress()


class PropertyDraftOutput(serializers.Serializer):
    accepted = serializers.BooleanField()
    version = serializers.IntegerField()
    violations = _Violation(many=True)


class PropertySavedOutput(serializers.Serializer):
    version = serializers.IntegerField()
    saved_at = serializers.DateTimeField()
    properties = serializers.DictField(help_text=_PROPERTIES_HELP)


class SkippedOutput(serializers.Serializer):
    next = NextTableOutput(allow_null=True, help_text="The next table in the queue, if any.")


class AnswerCheckedOutput(serializers.Serializer):
    canonical = serializers.CharField(help_text="The answer in the gold-answer format.")


class _QuestionDraft(serializers.Serializer):
    client_key = serializers.UUIDField()
    text = serializers.CharField()
    gold_answer = serializers.CharField()
    query_properties = serializers.DictField(help_text=_PROPERTIES_HELP)
    template = serializers.CharField()
    client_ms = serializers.IntegerField()


class _ExistingQuestion(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()


class _QuestionProgress(serializers.Serializer):
    written_today = serializers.IntegerField()
    written_total = serializers.IntegerField()
    tables_covered = serializers.IntegerField()
    tables_total = serializers.IntegerField()


class _MixRow(serializers.Serializer):
    code = serializers.CharField()
    label = serializers.CharField()
    mine = serializers.FloatField()
    target = serializers.FloatField()
    count = serializers.IntegerField()


class _Mix(serializers.Serializer):
    questions = serializers.IntegerField()
    rows = _MixRow(many=True)


class QuestionWorkOutput(serializers.Serializer):
    table = TableOutput()
    draft = _QuestionDraft(allow_null=True)
    questions = _ExistingQuestion(many=True)
    progress = _QuestionProgress()
    mix = _Mix(help_text="Your questions' query properties beside the paper's mix.")


class QuestionDraftOutput(serializers.Serializer):
    accepted = serializers.BooleanField()


class _SavedQuestion(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()
    gold_answer = serializers.CharField()


class QuestionSavedOutput(serializers.Serializer):
    question = _SavedQuestion()


class _PropertyAgreement(serializers.Serializer):
    code = serializers.CharField()
    alpha = serializers.FloatField(allow_null=True)
    tables = serializers.IntegerField()
    disagreements = serializers.IntegerField()


class _PairAgreement(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    tables = serializers.IntegerField()
    mean_kappa = serializers.FloatField(allow_null=True)
    kappa = serializers.DictField(child=serializers.FloatField(allow_null=True))


class _OpenDisagreement(serializers.Serializer):
    table = serializers.CharField()
    properties = serializers.ListField(child=serializers.CharField())


class _TimeSpent(serializers.Serializer):
    annotator = serializers.CharField()
    tables = serializers.IntegerField()
    median_seconds_per_table = serializers.FloatField(allow_null=True)
    questions = serializers.IntegerField()
    median_seconds_per_question = serializers.FloatField(allow_null=True)


class AgreementOutput(serializers.Serializer):
    annotators = serializers.IntegerField()
    properties = _PropertyAgreement(many=True)
    pairs = _PairAgreement(many=True)
    open_disagreements = _OpenDisagreement(many=True)
    resolved = serializers.IntegerField()
    time_spent = _TimeSpent(many=True)


class _Resolution(serializers.Serializer):
    properties = serializers.DictField(help_text=_PROPERTIES_HELP)
    version = serializers.IntegerField()
    saved_at = serializers.DateTimeField()


class ResolutionWorkOutput(serializers.Serializer):
    table = serializers.CharField()
    by_coder = serializers.DictField(
        child=serializers.DictField(), help_text="Each coder's saved properties."
    )
    majority = serializers.DictField(help_text=_PROPERTIES_HELP)
    resolution = _Resolution(allow_null=True)


class ResolvedOutput(serializers.Serializer):
    table = serializers.CharField()
    properties = serializers.DictField(help_text=_PROPERTIES_HELP)
    version = serializers.IntegerField()


def table_payload(table: Table) -> dict[str, Any]:
    return {
        "id": table.id,
        "source": table.source,
        "split": table.split,
        "image": table.image.url if table.image else None,
        "html": table_rendering(table=table, fmt="html"),
        "url": table.get_absolute_url(),
    }


def _next(table: Table | None, tool: str) -> dict[str, Any] | None:
    if table is None:
        return None
    return {"table": table.id, "url": reverse(f"annotate:{tool}", args=[table.id])}


def _progress(progress: selectors.Progress) -> dict[str, int]:
    return {
        "done_today": progress.done_today,
        "done_total": progress.done_total,
        "remaining": progress.remaining,
    }


def _violations(tax: taxonomy.Taxonomy, values: dict[str, Any]) -> list[dict[str, str]]:
    return [{"code": v.code, "message": v.message} for v in taxonomy.check(tax, values)]


class TaxonomiesApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=TaxonomiesOutput)
    def get(self, request: Request) -> Response:
        return Response(
            {
                "table_properties": taxonomy.as_json(taxonomy.TABLE_PROPERTIES),
                "query_properties": taxonomy.as_json(taxonomy.QUERY_PROPERTIES),
                "templates": [
                    {"code": t.code, "name": t.name, "example": t.example, "properties": t.filled()}
                    for t in TEMPLATES
                ],
                "target_mix": TARGET_MIX,
                "reserved_keys": list(taxonomy.RESERVED_KEYS),
            }
        )


# --- Table properties ----------------------------------------------------------------------


class PropertyNextApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.PROPERTY_TOOL)]

    @extend_schema(
        parameters=[OpenApiParameter("after", str, description="The table just done.")],
        responses={200: NextTableOutput, 204: OpenApiResponse(description="None left.")},
    )
    def get(self, request: Request) -> Response:
        table = selectors.property_queue_next(
            annotator=request.user, after=request.query_params.get("after")
        )
        return Response(_next(table, "properties")) if table else Response(status=204)


class PropertyWorkApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.PROPERTY_TOOL)]

    @extend_schema(responses=PropertyWorkOutput)
    def get(self, request: Request, table_id: str) -> Response:
        table = table_get(table_id=table_id)
        work = selectors.property_work(annotator=request.user, table=table)
        return Response(
            {
                "table": table_payload(table),
                "properties": work.properties,
                "saved": work.saved,
                "version": work.version,
                "has_draft": work.has_draft,
                "seconds_spent": work.seconds_spent,
                "violations": _violations(taxonomy.TABLE_PROPERTIES, work.properties),
                "progress": _progress(selectors.property_progress(annotator=request.user)),
            }
        )


class PropertyDraftApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.PROPERTY_TOOL)]

    class Input(serializers.Serializer):
        properties = serializers.DictField()
        base_version = serializers.IntegerField(min_value=0, max_value=_MAX_INT)
        client_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT)
        elapsed_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT, default=0)

    @extend_schema(request=Input, responses={200: PropertyDraftOutput, 409: ConflictOutput})
    def put(self, request: Request, table_id: str) -> Response:
        data = self._input(request)
        result = services.property_draft_save(
            annotator=request.user, table=table_get(table_id=table_id), **data
        )
        values = taxonomy.normalize(taxonomy.TABLE_PROPERTIES, data["properties"])
        return Response(
            {
                "accepted": result.accepted,
                "version": result.version,
                "violations": _violations(taxonomy.TABLE_PROPERTIES, values),
            }
        )

    def _input(self, request: Request) -> dict[str, Any]:
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)


class PropertySaveApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.PROPERTY_TOOL)]

    class Input(serializers.Serializer):
        properties = serializers.DictField()
        base_version = serializers.IntegerField(min_value=0, max_value=_MAX_INT)
        elapsed_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT, default=0)

    @extend_schema(
        request=Input,
        responses={200: PropertySavedOutput, 400: ErrorOutput, 409: ConflictOutput},
    )
    def post(self, request: Request, table_id: str) -> Response:
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        table = table_get(table_id=table_id)
        row = services.property_annotation_save(
            annotator=request.user, table=table, **serializer.validated_data
        )
        # The next table is asked for separately (the page prefetches it): saves stay quick.
        return Response(
            {
                "version": row.version,
                "saved_at": row.saved_at.isoformat(),
                "properties": row.properties,
            }
        )


class SkipApi(APIView):
    permission_classes = [IsAuthenticated]
    tool = AnnotationTool.PROPERTIES

    @extend_schema(request=None, responses=SkippedOutput)
    def post(self, request: Request, table_id: str) -> Response:
        table = table_get(table_id=table_id)
        services.annotation_skip(annotator=request.user, table=table, tool=self.tool)
        if self.tool == AnnotationTool.PROPERTIES:
            following = selectors.property_queue_next(annotator=request.user, after=table.id)
        else:
            following = selectors.question_queue_next(annotator=request.user, after=table.id)
        # Progress and the nudge mix are left to the next page: saves must be quick.
        return Response({"next": _next(following, self.tool)})


class PropertySkipApi(SkipApi):
    tool = AnnotationTool.PROPERTIES


class QuestionSkipApi(SkipApi):
    tool = AnnotationTool.QUESTIONS


# --- Questions -----------------------------------------------------------------------------


class AnswerCheckApi(APIView):
    permission_classes = [IsAuthenticated]

    class Input(serializers.Serializer):
        answer = serializers.CharField(allow_blank=True, trim_whitespace=False)

    @extend_schema(request=Input, responses={200: AnswerCheckedOutput, 400: ErrorOutput})
    def post(self, request: Request) -> Response:
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            canonical = canonical_answer(serializer.validated_data["answer"])
        except AnswerFormatError as exc:
            raise ApplicationError(str(exc), field="gold_answer") from None
        return Response({"canonical": canonical})


def _mix(user: Any) -> dict[str, Any]:
    total, rows = selectors.query_mix(annotator=user)
    return {
        "questions": total,
        "rows": [
            {"code": r.code, "label": r.label, "mine": r.mine, "target": r.target, "count": r.count}
            for r in rows
        ],
    }


def _question_progress(user: Any) -> dict[str, int]:
    p = selectors.question_progress(annotator=user)
    return {
        "written_today": p.written_today,
        "written_total": p.written_total,
        "tables_covered": p.tables_covered,
        "tables_total": p.tables_total,
    }


class QuestionNextApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.QUESTION_TOOL)]

    @extend_schema(
        parameters=[OpenApiParameter("after", str, description="The table just done.")],
        responses={200: NextTableOutput, 204: OpenApiResponse(description="None left.")},
    )
    def get(self, request: Request) -> Response:
        table = selectors.question_queue_next(
            annotator=request.user, after=request.query_params.get("after")
        )
        return Response(_next(table, "questions")) if table else Response(status=204)


class QuestionWorkApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.QUESTION_TOOL)]

    @extend_schema(responses=QuestionWorkOutput)
    def get(self, request: Request, table_id: str) -> Response:
        table = table_get(table_id=table_id)
        work = selectors.question_work(annotator=request.user, table=table)
        draft = work.draft
        return Response(
            {
                "table": table_payload(table),
                "draft": None
                if draft is None
                else {
                    "client_key": str(draft.client_key),
                    "text": draft.text,
                    "gold_answer": draft.gold_answer,
                    "query_properties": draft.query_properties,
                    "template": draft.template,
                    "client_ms": draft.client_ms,
                },
                "questions": [{"id": q.id, "text": q.text} for q in work.existing_questions],
                "progress": _question_progress(request.user),
                "mix": _mix(request.user),
            }
        )


class _QuestionInput(serializers.Serializer):
    client_key = serializers.UUIDField()
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=5000)
    gold_answer = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=5000)
    query_properties = serializers.DictField()
    template = serializers.CharField(allow_blank=True, default="", max_length=40)
    elapsed_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT, default=0)


class QuestionDraftApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.QUESTION_TOOL)]

    class Input(_QuestionInput):
        client_ms = serializers.IntegerField(min_value=0, max_value=_MAX_INT)

    @extend_schema(request=Input, responses={200: QuestionDraftOutput, 409: ConflictOutput})
    def put(self, request: Request, table_id: str) -> Response:
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = services.question_draft_save(
            annotator=request.user,
            table=table_get(table_id=table_id),
            **serializer.validated_data,
        )
        return Response({"accepted": result.accepted})


class QuestionSaveApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.QUESTION_TOOL)]

    class Input(_QuestionInput):
        confirm_near_duplicate = serializers.BooleanField(default=False)

    @extend_schema(request=Input, responses={201: QuestionSavedOutput, 400: ErrorOutput})
    def post(self, request: Request, table_id: str) -> Response:
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        table = table_get(table_id=table_id)
        question: Question = services.question_write(
            annotator=request.user, table=table, **serializer.validated_data
        )
        # The next table is asked for separately (the page prefetches it): saves stay quick.
        return Response(
            {
                "question": {
                    "id": question.id,
                    "text": question.text,
                    "gold_answer": question.gold_answer,
                }
            },
            status=201,
        )


# --- Agreement and resolution --------------------------------------------------------------


class AgreementApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.ADJUDICATION_TOOL)]

    @extend_schema(responses=AgreementOutput)
    def get(self, request: Request) -> Response:
        view = selectors.agreement_overview()
        return Response(
            {
                "annotators": view.annotators,
                "properties": [p.__dict__ for p in view.report.properties],
                "pairs": [
                    {
                        "a": p.a,
                        "b": p.b,
                        "tables": p.tables,
                        "mean_kappa": p.mean_kappa,
                        "kappa": p.kappa,
                    }
                    for p in view.report.pairs
                ],
                "open_disagreements": [
                    {"table": d.table_id, "properties": list(d.properties)}
                    for d in view.open_disagreements
                ],
                "resolved": view.resolved,
                "time_spent": [t.__dict__ for t in selectors.time_spent()],
            }
        )


class ResolveApi(APIView):
    """GET: each coder's saved table properties for the table, the majority and the
    resolution if there is one. POST: resolve (adjudicators)."""

    permission_classes = [IsAuthenticated, api_rule(rules.ADJUDICATION_TOOL)]

    class Input(serializers.Serializer):
        properties = serializers.DictField()

    @extend_schema(responses=ResolutionWorkOutput)
    def get(self, request: Request, table_id: str) -> Response:
        work = selectors.resolution_work(table_id=table_id)
        resolution = work.resolution
        return Response(
            {
                "table": table_id,
                "by_coder": work.by_coder,
                "majority": work.majority,
                "resolution": None
                if resolution is None
                else {
                    "properties": resolution.properties,
                    "version": resolution.version,
                    "saved_at": resolution.saved_at,
                },
            }
        )

    @extend_schema(request=Input, responses={200: ResolvedOutput, 400: ErrorOutput})
    def post(self, request: Request, table_id: str) -> Response:
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        row = services.table_properties_resolve(
            adjudicator=request.user,
            table=table_get(table_id=table_id),
            properties=serializer.validated_data["properties"],
        )
        return Response({"table": table_id, "properties": row.properties, "version": row.version})
