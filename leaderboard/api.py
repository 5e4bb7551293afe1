"""REST API for the leaderboard and for researchers' submissions (session or token auth)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard import exports, selectors, services
from leaderboard.forms import (
    BoardFilterForm,
    SubmissionForm,
    TrackBoardForm,
    TrackSubmissionForm,
    form_problems,
    input_from,
)
from leaderboard.models import (
    BOARD_SPLITS,
    INFERENCE_FORMATS,
    INFERENCE_STYLES,
    QA_TRACK,
    SCORE_FIGURES,
    TRACK_CHOICES,
    DataScope,
    EvalSplit,
    InferenceRun,
    Modality,
    PromptStyle,
    Rules,
    Submission,
    TableFormat,
    Visibility,
    Weights,
)
from plumbing.api import ErrorOutput, StrictInput, read_what_is_valid
from plumbing.pagination import CountedPagination, page_serializer
from tracks import selectors as track_selectors
from tracks.registry import track as track_info


def _form_errors(form: Any) -> ValidationError:
    return ValidationError({k: [str(e) for e in v] for k, v in form.errors.items()})


class FigureGroupOutput(serializers.Serializer):
    key = serializers.CharField(help_text="The item source's code, or the property's.")
    label = serializers.CharField()
    n = serializers.IntegerField(help_text="Items in the group.")
    figures = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="Figure name → value; null when withheld.",
    )
    withheld = serializers.BooleanField()


class TrackBreakdownsOutput(serializers.Serializer):
    table_properties = FigureGroupOutput(many=True)
    margin = serializers.IntegerField(
        help_text="Hidden items a shown figure rests on or differs by at the least (0: none "
        "hidden)."
    )


class TrackScoreOutput(serializers.Serializer):
    """A submission's figures on a track beside QA."""

    n = serializers.IntegerField(help_text="Items scored.")
    figures = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="Under the names score_track prints; null when withheld (1 to 10 hidden "
        "items, or giving such a few away beside another figure).",
    )
    intervals = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2),
        help_text="Each figure's 95% bootstrap interval [low, high] (items resampled).",
    )
    by_source = FigureGroupOutput(many=True)
    breakdowns = TrackBreakdownsOutput()
    reasons = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Items that scored 0 for a reason other than a wrong prediction (missing, "
        "invalid, a limit the SQL broke), by reason.",
    )
    withheld = serializers.BooleanField()


class SubmissionOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    gold_claims = serializers.SerializerMethodField(
        help_text="For the owner: how the file's own gt compared with the platform's gold "
        "answers (never on test-split questions); null for anyone else."
    )
    release = serializers.SlugRelatedField(
        slug_field="version",
        read_only=True,
        allow_null=True,
        help_text="The release whose questions and gold answers it was scored on; null when "
        "it was scored on questions no release holds.",
    )
    scores = serializers.SerializerMethodField(
        help_text="Its figures by rules version (2025-05, and 2025-10 for text; the paper's "
        "rows 2025-05 only): n_questions counted, excluded, coverage, the macro-averages with "
        "95% intervals, by_source and the breakdowns. A figure that would reveal fewer than 11 "
        "test questions (some combination of it with the figures shown rests on 1 to 10 "
        "test-split answers) is withheld, for everyone: null, with withheld true (overall, "
        "and in by_source), and the breakdown groups left out (counted in withheld)."
    )
    rescore = serializers.SerializerMethodField(
        help_text="While stale: why it is being scored again."
    )
    track_score = serializers.SerializerMethodField(
        help_text="A submission to a track beside QA: its figures (null for QA, and until scored)."
    )

    class Meta:
        model = Submission
        fields = [
            "id",
            "kind",
            "track",
            "mode",
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
            "too_long_prompts",
            "status",
            "progress",
            "error",
            "created_at",
            "scored_at",
            "stale",
            "rescore",
            "question_set_sha256",
            "scores",
            "track_score",
            "gold_claims",
            "release",
            "url",
        ]

    def get_url(self, submission: Submission) -> str:
        return self.context["request"].build_absolute_uri(submission.get_absolute_url())

    def get_gold_claims(self, submission: Submission) -> dict[str, Any] | None:
        user = self.context["request"].user
        return (
            submission.gold_claims
            if selectors.can_manage(user=user, submission=submission)
            else None
        )

    def get_rescore(self, submission: Submission) -> str | None:
        return submission.rescore.reason if submission.stale and submission.rescore else None

    @extend_schema_field(TrackScoreOutput(allow_null=True))
    def get_track_score(self, submission: Submission) -> dict[str, Any] | None:
        if submission.is_qa:
            return None
        score = selectors.track_score_for_viewer(submission=submission)
        return None if score is None else TrackScoreOutput(score).data

    def get_scores(self, submission: Submission) -> dict[str, Any]:
        return {
            rules: {
                **{f: getattr(score, f) for f in SCORE_FIGURES},
                "breakdowns": selectors.breakdowns_for_viewer(score=score),
            }
            for rules, score in selectors.scores_of(submission=submission).items()
        }


class BoardRowOutput(serializers.Serializer):
    """One ranked row, as the board's CSV and JSON exports give it."""

    rank = serializers.IntegerField()
    rules = serializers.ChoiceField(choices=Rules.choices)
    model = serializers.CharField()
    organisation = serializers.CharField()
    reported_in_paper = serializers.BooleanField()
    parameters_billions = serializers.FloatField(allow_null=True)
    size_class = serializers.CharField()
    weights = serializers.ChoiceField(choices=Weights.choices)
    modality = serializers.ChoiceField(choices=Modality.choices)
    table_format = serializers.ChoiceField(choices=TableFormat.choices)
    prompt_style = serializers.CharField()
    split = serializers.ChoiceField(choices=EvalSplit.choices)
    data_scope = serializers.ChoiceField(choices=DataScope.choices)
    n_questions = serializers.IntegerField(allow_null=True)
    excluded = serializers.IntegerField(allow_null=True)
    too_long_prompts = serializers.IntegerField(
        help_text="Answers left empty because the prompt was over the model's context "
        "(inference runs); scored as unanswered."
    )
    tables = serializers.IntegerField(allow_null=True, help_text="Of its question set.")
    release = serializers.CharField(allow_null=True, help_text="The release scored on.")
    precision = serializers.FloatField(allow_null=True)
    precision_ci_low = serializers.FloatField(allow_null=True)
    precision_ci_high = serializers.FloatField(allow_null=True)
    recall = serializers.FloatField(allow_null=True)
    recall_ci_low = serializers.FloatField(allow_null=True)
    recall_ci_high = serializers.FloatField(allow_null=True)
    f1 = serializers.FloatField(allow_null=True)
    cc = serializers.FloatField(allow_null=True)
    cc_ci_low = serializers.FloatField(allow_null=True)
    cc_ci_high = serializers.FloatField(allow_null=True)
    recall_psa = serializers.FloatField(allow_null=True)
    recall_pak = serializers.FloatField(allow_null=True)
    recall_census = serializers.FloatField(allow_null=True)
    recall_arxiv = serializers.FloatField(allow_null=True)
    coverage = serializers.FloatField(allow_null=True)
    submission_id = serializers.IntegerField()
    scored_at = serializers.DateTimeField(allow_null=True)


class BeingRescoredOutput(serializers.Serializer):
    submission_id = serializers.IntegerField()
    model = serializers.CharField()
    organisation = serializers.CharField()
    status = serializers.CharField()
    progress = serializers.IntegerField()


class BoardOutput(serializers.Serializer):
    modality = serializers.ChoiceField(choices=Modality.choices)
    split = serializers.ChoiceField(choices=EvalSplit.choices)
    rules = serializers.ChoiceField(choices=Rules.choices)
    count = serializers.IntegerField()
    results = BoardRowOutput(many=True)
    being_rescored = BeingRescoredOutput(
        many=True, help_text="Its rows being scored again: not ranked until they are."
    )


class SubmissionCreateInput(serializers.Serializer):
    """The upload form's fields (leaderboard.forms.SubmissionForm), sent as multipart. A
    track beside QA (``track``) takes its ``mode`` (extraction) and no table format, prompt
    style or data scope (leaderboard.forms.TrackSubmissionForm)."""

    track = serializers.ChoiceField(choices=TRACK_CHOICES, default=QA_TRACK)
    mode = serializers.ChoiceField(
        choices=["region", "page"], required=False, help_text="Extraction: the item set."
    )
    model_name = serializers.CharField(max_length=200)
    organisation = serializers.CharField(max_length=200, required=False)
    parameters_billions = serializers.DecimalField(
        max_digits=8,
        decimal_places=2,
        required=False,
        help_text="In billions; needed for open weights.",
    )
    weights = serializers.ChoiceField(choices=Weights.choices)
    modality = serializers.ChoiceField(choices=Modality.choices)
    table_format = serializers.ChoiceField(
        choices=TableFormat.choices, required=False, help_text="QA (required there)."
    )
    prompt_style = serializers.ChoiceField(choices=PromptStyle.choices, required=False)
    split = serializers.ChoiceField(choices=EvalSplit.choices)
    data_scope = serializers.ChoiceField(choices=DataScope.choices, required=False)
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    paper_url = serializers.URLField(required=False)
    code_url = serializers.URLField(required=False)
    description = serializers.CharField(required=False)
    predictions = serializers.FileField(
        help_text="JSONL or a JSON array, optionally gzipped: one object per question with "
        "question_id and response (null for no answer); a track's, JSON lines of id and "
        "prediction (see /api/tracks/)."
    )
    kept_upload = serializers.CharField(
        required=False, help_text="The page's own: a file kept from its last try."
    )


class ResultRowOutput(serializers.Serializer):
    question_id = serializers.CharField()
    split = serializers.CharField()
    prediction = serializers.CharField(allow_null=True)
    answered = serializers.BooleanField()
    gold_answer = serializers.CharField(allow_null=True, help_text="Null on test questions.")
    precision_2025_05 = serializers.FloatField(allow_null=True)
    recall_2025_05 = serializers.FloatField(allow_null=True)
    f1_2025_05 = serializers.FloatField(allow_null=True)
    cc_2025_05 = serializers.BooleanField(allow_null=True)
    counted_2025_10 = serializers.BooleanField(allow_null=True)
    precision_2025_10 = serializers.FloatField(allow_null=True)
    recall_2025_10 = serializers.FloatField(allow_null=True)
    f1_2025_10 = serializers.FloatField(allow_null=True)
    cc_2025_10 = serializers.BooleanField(allow_null=True)


class ResultsOutput(serializers.Serializer):
    submission = serializers.IntegerField()
    count = serializers.IntegerField()
    results = ResultRowOutput(many=True)


class ItemResultRowOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The item's id.")
    split = serializers.CharField()
    reason = serializers.CharField(
        help_text="Why it scored 0 other than by being wrong (missing, invalid, a limit its "
        "SQL broke), or empty."
    )
    message = serializers.CharField()
    figures = serializers.DictField(
        child=serializers.FloatField(),
        allow_null=True,
        help_text="The item's figures; null on test items (their gold is hidden).",
    )
    detail = serializers.DictField(
        allow_null=True,
        help_text="What the scorer kept (relation counts, an executed result); null on test items.",
    )


class ItemResultsOutput(serializers.Serializer):
    submission = serializers.IntegerField()
    count = serializers.IntegerField()
    results = ItemResultRowOutput(many=True)


class LeaderboardApi(APIView):
    """A public board's ranked rows, and apart from them (unranked) its submissions being
    scored again after their questions or gold answers changed."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("modality", str, enum=Modality.values),
            OpenApiParameter(
                "split",
                str,
                enum=[s.value for s in BOARD_SPLITS],
                description="all (default; the paper's Table 1 protocol and rows) or test",
            ),
            OpenApiParameter(
                "rules",
                str,
                enum=Rules.values,
                description="2025-05 (default; the paper's) or 2025-10 (text only)",
            ),
            OpenApiParameter("size_class", str),
            OpenApiParameter("weights", str),
            OpenApiParameter("data_scope", str),
            OpenApiParameter("table_format", str),
            OpenApiParameter("q", str),
            OpenApiParameter("sort", str, description="A column, '-' first for descending"),
        ],
        responses={200: BoardOutput, 400: ErrorOutput},
    )
    def get(self, request: Request) -> Response:
        modality = request.query_params.get("modality", Modality.TEXT)
        if modality not in Modality.values:
            raise ValidationError({"modality": ["Modality should be text or vision"]})
        form = BoardFilterForm(request.query_params, modality=modality)
        if not form.is_valid():
            raise _form_errors(form)
        filters = form.filters()
        rows = exports.board_rows(selectors.board(filters=filters))
        waiting = exports.being_rescored_rows(selectors.board_being_rescored(filters=filters))
        return Response(
            {
                "modality": modality,
                "split": filters.split,
                "rules": filters.rules,
                "count": len(rows),
                "results": rows,
                "being_rescored": waiting,
            }
        )


class SubmissionCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    # Each upload is parsed and scored: a rate of its own (API_THROTTLE_UPLOADS).
    throttle_scope = "uploads"

    @extend_schema(
        request={"multipart/form-data": SubmissionCreateInput},
        responses={201: SubmissionOutput, 400: ErrorOutput},
    )
    def post(self, request: Request) -> Response:
        track_slug = request.data.get("track") or QA_TRACK
        try:
            info = track_info(track_slug)
        except KeyError:
            raise ValidationError({"track": [f"There is no track {track_slug!r}"]}) from None
        if info.is_qa:
            form: SubmissionForm = SubmissionForm(request.data, request.FILES)
        else:
            form = TrackSubmissionForm(request.data, request.FILES, info=info)
        form.is_valid()
        # Every problem at once: the form's, the metadata's and the file's.
        submission = services.submission_create(
            owner=request.user,
            data=form.to_input(),
            predictions=form.cleaned_data.get("predictions"),
            problems=form_problems(form),
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
    # Each re-scoring takes the scoring worker as long as an upload: the same rate.
    throttle_scope = "uploads"

    @extend_schema(request=None, responses={202: SubmissionOutput, 400: ErrorOutput})
    def post(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        submission = services.submission_rescore(submission=submission, user=request.user)
        return Response(SubmissionOutput(submission, context={"request": request}).data, status=202)


class SubmissionVisibilityApi(APIView):
    """Put a submission on the board (public) or take it off (private); owners and admins."""

    permission_classes = [IsAuthenticated]

    class Input(serializers.Serializer):
        visibility = serializers.ChoiceField(choices=Visibility.choices)

    @extend_schema(request=Input, responses=SubmissionOutput)
    def post(self, request: Request, pk: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        services.submission_visibility_set(
            submission=submission, user=request.user, visibility=data.validated_data["visibility"]
        )
        submission.refresh_from_db()
        return Response(SubmissionOutput(submission, context={"request": request}).data)


class SubmissionDeleteApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        services.submission_delete(submission=submission, user=request.user)
        return Response(status=204)


class SubmissionResultsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ResultsOutput)
    def get(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        if not selectors.can_manage(user=request.user, submission=submission):
            raise Http404("Only the owner can read per-question results")
        if not submission.is_qa:
            raise Http404(
                f"A {submission.track} submission's results are per item: "
                + reverse("api-submission-item-results", args=[submission.pk])
            )
        rows = selectors.results_export(submission=submission, user=request.user)
        return Response({"submission": submission.pk, "count": len(rows), "results": rows})


class SubmissionItemResultsApi(APIView):
    """A track submission's per-item results, for its owner: each item's reason and message;
    its figures and detail only where the item's gold is public to the reader."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ItemResultsOutput)
    def get(self, request: Request, pk: int) -> Response:
        submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
        if not selectors.can_manage(user=request.user, submission=submission):
            raise Http404("Only the owner can read per-item results")
        if submission.is_qa:
            raise Http404(
                "A QA submission's results are per question: "
                + reverse("api-submission-results", args=[pk])
            )
        rows = selectors.item_results_export(submission=submission, user=request.user)
        return Response(
            ItemResultsOutput(
                {"submission": submission.pk, "count": len(rows), "results": rows}
            ).data
        )


# --- Inference runs ------------------------------------------------------------------------


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


# --- The tracks' boards --------------------------------------------------------------------


class TrackBoardRowOutput(serializers.Serializer):
    rank = serializers.IntegerField()
    submission = serializers.IntegerField(source="submission.pk")
    url = serializers.SerializerMethodField()
    model_name = serializers.CharField(source="submission.model_name")
    organisation = serializers.CharField(source="submission.organisation")
    baseline = serializers.BooleanField(source="submission.is_baseline")
    weights = serializers.CharField(source="submission.weights")
    parameters_billions = serializers.DecimalField(
        source="submission.parameters_billions", max_digits=8, decimal_places=2, allow_null=True
    )
    n = serializers.IntegerField(help_text="Items the figures rest on.")
    figures = serializers.DictField(child=serializers.FloatField(allow_null=True))
    intervals = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="On all items only: each figure's 95% bootstrap interval.",
    )
    by_source = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="The track's main figure on each item source.",
    )
    withheld = serializers.BooleanField()

    def get_url(self, row: Any) -> str:
        return self.context["request"].build_absolute_uri(row.submission.get_absolute_url())


class TrackBoardOutput(serializers.Serializer):
    track = serializers.CharField()
    mode = serializers.CharField()
    split = serializers.CharField()
    group = serializers.CharField(help_text="'' (all items), source:<code> or property:<code>")
    count = serializers.IntegerField()
    results = TrackBoardRowOutput(many=True)


class TrackBoardApi(APIView):
    """A track's public board: the test split's ranked rows (public submissions and the
    platform's baselines), on all items or one item source or table property."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("mode", str, enum=["region", "page"], description="Extraction"),
            OpenApiParameter("group", str, description="source:<code> or property:<code>"),
            OpenApiParameter("q", str),
            OpenApiParameter("weights", str, enum=Weights.values),
            OpenApiParameter(
                "sort",
                str,
                description="A figure's name, model or submitted; '-' first for descending",
            ),
        ],
        responses=TrackBoardOutput,
    )
    def get(self, request: Request, track: str) -> Response:
        info = track_selectors.track_or_404(track)
        if info.is_qa:
            raise Http404("QA's board is /api/leaderboard/")
        form = TrackBoardForm(
            request.query_params, info=info, sources=track_selectors.source_labels()
        )
        if not form.is_valid():
            raise _form_errors(form)
        filters = form.filters()
        rows = selectors.track_board(filters=filters)
        data = {
            "track": info.slug,
            "mode": filters.mode,
            "split": selectors.TRACK_BOARD_SPLIT,
            "group": filters.group,
            "count": len(rows),
            "results": rows,
        }
        return Response(TrackBoardOutput(data, context={"request": request}).data)
