"""REST API for inference runs: start, list, read, cancel, resume."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard import selectors, services
from leaderboard.forms import input_from
from leaderboard.models import (
    INFERENCE_FORMATS,
    INFERENCE_STYLES,
    QA_TRACK,
    TRACK_CHOICES,
    DataScope,
    EvalSplit,
    InferenceRun,
    Modality,
    TableFormat,
    Visibility,
    Weights,
)
from plumbing.api import StrictInput, read_what_is_valid
from plumbing.pagination import CountedPagination, page_serializer


class InferenceRunOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    endpoint = serializers.SerializerMethodField(
        help_text="The registered endpoint's name; null for the researcher's own."
    )
    base_url = serializers.SerializerMethodField(
        help_text="The researcher's own endpoint (a registered one's only for admins)."
    )
    needs_api_key = serializers.BooleanField(
        read_only=True, help_text="Resuming needs the own endpoint's key again."
    )
    progress = serializers.IntegerField(read_only=True, help_text="Percent of questions settled.")
    state = serializers.CharField(
        read_only=True,
        help_text="Its state as pages show it: a run done with questions left without an "
        "answer is partly_failed, or failed when none has one; else its status.",
    )
    submission_url = serializers.SerializerMethodField()

    class Meta:
        model = InferenceRun
        fields = [
            "id",
            "url",
            "created_by",
            "status",
            "state",
            "model_name",
            "endpoint",
            "base_url",
            "api_key_given",
            "needs_api_key",
            "track",
            "mode",
            "modality",
            "table_format",
            "prompt_style",
            "system_role",
            "split",
            "data_scope",
            "temperature",
            "max_tokens",
            "concurrency",
            "use_cache",
            "organisation",
            "parameters_billions",
            "weights",
            "visibility",
            "description",
            "cancel_requested",
            "total",
            "answered",
            "cached",
            "failed",
            "too_long",
            "progress",
            "error",
            "created_at",
            "started_at",
            "heartbeat_at",
            "finished_at",
            "submission",
            "submission_url",
            "config",
        ]

    def get_url(self, run: InferenceRun) -> str:
        return self.context["request"].build_absolute_uri(run.get_absolute_url())

    def get_endpoint(self, run: InferenceRun) -> str | None:
        return run.endpoint.name if run.endpoint_id else None

    def get_base_url(self, run: InferenceRun) -> str | None:
        viewer = self.context["request"].user
        if run.own_endpoint or viewer.has_perm("endpoints.change_endpoint"):
            return run.base_url
        return None

    def get_submission_url(self, run: InferenceRun) -> str | None:
        if run.submission_id is None:
            return None
        return self.context["request"].build_absolute_uri(
            reverse("api-submission-detail", args=[run.submission_id])
        )


class InferenceRunCreateApi(APIView):
    """Start a run; the inference worker picks it up. Name a registered ``endpoint`` (its key
    stays on the server), or give your own ``base_url`` and, if it needs one, ``api_key``:
    kept encrypted while the run can send, erased when it ends, never returned."""

    permission_classes = [IsAuthenticated]
    throttle_scope = "uploads"

    class InputSerializer(StrictInput):
        retired = {
            "api_key_env": "No longer taken: registered endpoints hold their keys; choose one "
            "by `endpoint`, or give your own `base_url` (and `api_key`, if it needs one)"
        }
        track = serializers.ChoiceField(choices=TRACK_CHOICES, default=QA_TRACK)
        mode = serializers.ChoiceField(choices=["", "region"], default="", allow_blank=True)
        model_name = serializers.CharField(max_length=200)
        endpoint = serializers.CharField(max_length=64, default="", allow_blank=True)
        base_url = serializers.CharField(max_length=500, default="", allow_blank=True)
        api_key = serializers.CharField(
            max_length=500, default="", allow_blank=True, write_only=True
        )
        # The web form's defaults.
        modality = serializers.ChoiceField(choices=Modality.choices, default=Modality.TEXT)
        table_format = serializers.ChoiceField(choices=INFERENCE_FORMATS, default=TableFormat.PAPER)
        prompt_style = serializers.ChoiceField(choices=INFERENCE_STYLES, default="zero_shot")
        system_role = serializers.BooleanField(default=True)
        split = serializers.ChoiceField(choices=EvalSplit.choices)
        data_scope = serializers.ChoiceField(choices=DataScope.choices, default=DataScope.REAL)
        temperature = serializers.FloatField(default=0.0)
        max_tokens = serializers.IntegerField(default=128)
        concurrency = serializers.IntegerField(default=8)
        use_cache = serializers.BooleanField(default=True)
        organisation = serializers.CharField(max_length=200, default="", allow_blank=True)
        parameters_billions = serializers.DecimalField(
            max_digits=8, decimal_places=2, default=None, allow_null=True
        )
        weights = serializers.ChoiceField(choices=Weights.choices)
        visibility = serializers.ChoiceField(choices=Visibility.choices, default=Visibility.PUBLIC)
        description = serializers.CharField(default="", allow_blank=True)

    @extend_schema(request=InputSerializer, responses={201: InferenceRunOutput})
    def post(self, request: Request) -> Response:
        # Every problem at once: the fields' and the service's checks of what could be read.
        values, problems = read_what_is_valid(self.InputSerializer(data=request.data))
        run = services.inference_run_create(
            user=request.user,
            data=input_from(services.InferenceRunInput, values),
            problems=problems,
        )
        return Response(InferenceRunOutput(run, context={"request": request}).data, status=201)


class InferenceRunListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=page_serializer("InferenceRunPage", InferenceRunOutput))
    def get(self, request: Request) -> Response:
        runs = selectors.inference_runs_for(user=request.user).defer(None)
        paginator = CountedPagination()
        page = paginator.paginate_queryset(runs, request)
        return paginator.get_paginated_response(
            InferenceRunOutput(page, many=True, context={"request": request}).data
        )


class InferenceRunDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=InferenceRunOutput)
    def get(self, request: Request, pk: int) -> Response:
        run = selectors.inference_run_for_viewer(run_id=pk, user=request.user)
        return Response(InferenceRunOutput(run, context={"request": request}).data)


class InferenceRunCancelApi(APIView):
    """Stop a run (at once if queued, within a second if running); 409 if it has ended."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={202: InferenceRunOutput})
    def post(self, request: Request, pk: int) -> Response:
        run = selectors.inference_run_for_viewer(run_id=pk, user=request.user)
        run = services.inference_run_cancel(user=request.user, run_id=run.pk)
        return Response(InferenceRunOutput(run, context={"request": request}).data, status=202)


class InferenceRunResumeApi(APIView):
    """Queue a stopped run again, keeping its saved answers; 409 if it is running or done.
    A run on your own endpoint with a key needs ``api_key`` again once it has stopped."""

    permission_classes = [IsAuthenticated]
    throttle_scope = "uploads"

    class InputSerializer(StrictInput):
        api_key = serializers.CharField(
            max_length=500, default="", allow_blank=True, write_only=True
        )

    @extend_schema(request=InputSerializer, responses={202: InferenceRunOutput})
    def post(self, request: Request, pk: int) -> Response:
        run = selectors.inference_run_for_viewer(run_id=pk, user=request.user)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.inference_run_resume(
            user=request.user, run_id=run.pk, api_key=data.validated_data["api_key"]
        )
        return Response(InferenceRunOutput(run, context={"request": request}).data, status=202)
