"""REST API for researchers' submissions: create, read, rescore, show or hide, delete, results."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard import selectors, services
from leaderboard.forms import SubmissionForm, TrackSubmissionForm, form_problems
from leaderboard.models import (
    QA_TRACK,
    SCORE_FIGURES,
    TRACK_CHOICES,
    DataScope,
    EvalSplit,
    Modality,
    PromptStyle,
    Submission,
    TableFormat,
    Visibility,
    Weights,
)
from plumbing.api import ErrorOutput
from tracks.registry import track as track_info


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
