"""REST API for the public boards: QA's and the tracks'."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard import exports, selectors
from leaderboard.forms import BoardFilterForm, TrackBoardForm
from leaderboard.models import (
    BOARD_SPLITS,
    DataScope,
    EvalSplit,
    Modality,
    Rules,
    TableFormat,
    Weights,
)
from plumbing.api import ErrorOutput
from tracks import selectors as track_selectors


def _form_errors(form: Any) -> ValidationError:
    return ValidationError({k: [str(e) for e in v] for k, v in form.errors.items()})


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
