"""REST API of the tracks: what each track is, its items by split and source, and where
its board and items are."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tracks import selectors
from tracks.registry import TRACKS, TrackInfo


class FigureOutput(serializers.Serializer):
    name = serializers.CharField(help_text="As score_track prints it and boards sort by it.")
    label = serializers.CharField()
    description = serializers.CharField()
    higher_is_better = serializers.BooleanField()


class ModeOutput(serializers.Serializer):
    mode = serializers.CharField()
    label = serializers.CharField()
    figures = FigureOutput(many=True)


class TrackOutput(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    measures = serializers.CharField()
    data = serializers.CharField()
    submission = serializers.CharField(help_text="The submission file's format.")
    primary = serializers.CharField(help_text="The figure a board ranks by first.")
    figures = FigureOutput(many=True)
    modes = ModeOutput(many=True, help_text="Extraction: region given, or the whole page.")
    items = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="Items by mode ('' for none) and split (QA: by data scope and split).",
    )
    sources = serializers.DictField(
        child=serializers.CharField(), help_text="Where each item source's gold comes from."
    )
    board = serializers.URLField(help_text="The board's API.")
    board_page = serializers.URLField()


def _track(info: TrackInfo, counts: Any, request: Request) -> dict[str, Any]:
    if info.is_qa:
        items = selectors.qa_counts()
        board, page = reverse("api-leaderboard"), reverse("leaderboard:board")
    else:
        items = counts.by_split if counts else {}
        board = reverse("api-track-board", args=[info.slug])
        page = reverse("leaderboard:track_board", args=[info.slug])
    return {
        "slug": info.slug,
        "name": info.name,
        "measures": info.measures,
        "data": info.data,
        "submission": info.submission,
        "primary": info.primary,
        "figures": list(info.figures(info.default_mode)),
        "modes": [
            {"mode": m, "label": label, "figures": list(info.figures(m))} for m, label in info.modes
        ],
        "items": items,
        "sources": {} if info.is_qa else selectors.gold_origins(info),
        "board": request.build_absolute_uri(board),
        "board_page": request.build_absolute_uri(page),
    }


class TrackListApi(APIView):
    """The four tracks: QA and the three beside it."""

    permission_classes = [AllowAny]

    @extend_schema(responses=TrackOutput(many=True))
    def get(self, request: Request) -> Response:
        counts = {c.info.slug: c for c in selectors.track_counts()}
        data = [_track(info, counts.get(slug), request) for slug, info in TRACKS.items()]
        return Response(TrackOutput(data, many=True).data)
