"""REST API for the leaderboard and for researchers' submissions (session or token auth)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard import exports, selectors, services
from leaderboard.forms import BoardFilterForm, SubmissionForm
from leaderboard.models import Modality, Submission


def _form_errors(form: Any) -> ValidationError:
    return ValidationError({k: [str(e) for e in v] for k, v in form.errors.items()})


class SubmissionOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "kind",
            "model_name",
            "organisation",
            "parameters_billions",
            "weights",
            "size_class",
            "modality",
            "table_format",
            "prompt_style",
            "paper_url",
            "code_url",
            "description",
            "split",
            "data_scope",
            "visibility",
            "status",
            "progress",
            "error",
            "created_at",
            "scored_at",
            "n_questions",
            "coverage",
            "precision",
            "precision_low",
            "precision_high",
            "recall",
            "recall_low",
            "recall_high",
            "f1",
            "cc",
            "cc_low",
            "cc_high",
            "by_source",
            "breakdowns",
            "url",
        ]

    def get_url(self, submission: Submission) -> str:
        return self.context["request"].build_absolute_uri(submission.get_absolute_url())


class LeaderboardApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("modality", str, enum=Modality.values),
            OpenApiParameter("size_class", str),
            OpenApiParameter("weights", str),
            OpenApiParameter("data_scope", str),
            OpenApiParameter("table_format", str),
            OpenApiParameter("q", str),
            OpenApiParameter("sort", str, description="A column, '-' first for descending"),
        ],
        responses={200: dict},
    )
    def get(self, request: Request) -> Response:
        modality = request.query_params.get("modality", Modality.TEXT)
        if modality not in Modality.values:
            raise ValidationError({"modality": ["modality should be text or vision"]})
        form = BoardFilterForm(request.query_params)
        if not form.is_valid():
            raise _form_errors(form)
        rows = exports.board_rows(selectors.board(filters=form.filters(modality=modality)))
        return Response({"modality": modality, "count": len(rows), "results": rows})


class SubmissionCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": dict}, responses={201: SubmissionOutput})
    def post(self, request: Request) -> Response:
        form = SubmissionForm(request.data, request.FILES)
        if not form.is_valid():
            raise _form_errors(form)
        submission = services.submission_create(
            owner=request.user, data=form.to_input(), predictions=form.cleaned_data["predictions"]
        )
        return Response(SubmissionOutput(submission, context={"request": request}).data, status=201)


class SubmissionListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=SubmissionOutput(many=True))
    def get(self, request: Request) -> Response:
        submissions = selectors.submissions_of(user=request.user)
        return Response(SubmissionOutput(submissions, many=True, context={"request": request}).data)


class SubmissionDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=SubmissionOutput)
    def get(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        return Response(SubmissionOutput(submission, context={"request": request}).data)


class SubmissionRescoreApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=SubmissionOutput)
    def post(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        submission = services.submission_rescore(submission=submission, user=request.user)
        return Response(SubmissionOutput(submission, context={"request": request}).data, status=202)


class SubmissionDeleteApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        services.submission_delete(submission=submission, user=request.user)
        return Response(status=204)


class SubmissionResultsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: dict})
    def get(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        if not selectors.can_manage(user=request.user, submission=submission):
            raise Http404("only the owner can read per-question results")
        rows = selectors.results_export(submission=submission, user=request.user)
        return Response({"submission": submission.pk, "count": len(rows), "results": rows})
