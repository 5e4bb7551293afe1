"""``/api/``: the API's index. It names where the docs and the schema are, how to sign in
with a token, and the main collections, so that a client (or a person) starting at the root
finds the rest."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

# The collections a client starts from, by URL name; the rest are linked from the docs.
RESOURCES = {
    "tables": "api-table-list",
    "questions": "api-question-list",
    "leaderboard": "api-leaderboard",
    "releases": "api-release-list",
    "submissions": "api-submission-list",
    "inference_runs": "api-inference-run-list",
    "endpoints": "api-endpoint-list",
    "annotation_taxonomies": "api-annotate-taxonomies",
    "ingest_collections": "api-ingest-collections",
}


class ApiIndexOutput(serializers.Serializer):
    title = serializers.CharField()
    docs = serializers.URLField(help_text="Swagger UI: every operation, to read and try.")
    schema = serializers.URLField(help_text="The OpenAPI 3 schema (YAML; ?format=json).")
    site = serializers.URLField(help_text="The platform's web pages.")
    token = serializers.URLField(
        help_text="POST username and password for a token; send it as 'Authorization: Token "
        "<key>'. Pages' session cookies work too."
    )
    resources = serializers.DictField(
        child=serializers.URLField(), help_text="The main collections, by name."
    )


class ApiIndex(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=ApiIndexOutput, summary="The API's index")
    def get(self, request: Request) -> Response:
        return Response(
            {
                "title": "HCT-QA platform API",
                "docs": reverse("api-docs", request=request),
                "schema": reverse("api-schema", request=request),
                "site": reverse("home", request=request),
                "token": reverse("api-token", request=request),
                "resources": {
                    name: reverse(url, request=request) for name, url in RESOURCES.items()
                },
            }
        )
