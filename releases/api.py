"""Release API: the releases and their files for everyone; cutting one and following its
build for admins. The full edition's files are listed only to those who may download them."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from plumbing.pagination import CountedPagination, page_serializer
from plumbing.permissions import api_rule
from releases import selectors, services
from releases.models import Release, ReleaseBuild
from releases.permissions import FOLLOWING_BUILDS


def _download_url(request: Request, release: Release, edition: str, path: str) -> str:
    return request.build_absolute_uri(
        reverse("releases:download", args=[release.version, edition, path])
    )


class ReleaseListOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    previous = serializers.SlugRelatedField(slug_field="version", read_only=True, allow_null=True)
    changes = serializers.SerializerMethodField(help_text="Counts of each kind of change.")
    archives = serializers.SerializerMethodField(
        help_text="Per edition you may download, its one download (the Hugging Face folder as "
        ".tar.gz): path, size in bytes, SHA-256, URL, and the URL of its .sha256 file for "
        "sha256sum -c."
    )

    class Meta:
        model = Release
        fields = [
            "version",
            "title",
            "created_at",
            "commit",
            "previous",
            "counts",
            "changes",
            "archives",
            "url",
            "page",
        ]

    def get_url(self, release: Release) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("api-release-detail", args=[release.version])
        )

    def get_page(self, release: Release) -> str:
        return self.context["request"].build_absolute_uri(release.get_absolute_url())

    def get_changes(self, release: Release) -> dict[str, int]:
        return services.changelog_counts(release)

    def get_archives(self, release: Release) -> dict[str, dict[str, Any]]:
        request = self.context["request"]
        archives = selectors.release_archives(release=release, user=request.user)
        return {
            edition: {
                "path": a.path,
                "size": a.size,
                "sha256": a.sha256,
                "url": _download_url(request, release, edition, a.path),
                "sha256_url": _download_url(request, release, edition, a.checksum_path),
            }
            for edition, a in archives.items()
        }


class ReleaseDetailOutput(ReleaseListOutput):
    files = serializers.SerializerMethodField(
        help_text="Per edition you may download: path, size in bytes, SHA-256 and URL."
    )

    class Meta(ReleaseListOutput.Meta):
        fields = [*ReleaseListOutput.Meta.fields, "notes", "changelog", "files"]

    def get_files(self, release: Release) -> dict[str, list[dict[str, Any]]]:
        request = self.context["request"]
        editions = selectors.editions_for(request.user)
        return {
            edition: [
                {
                    "path": f["path"],
                    "size": f["size"],
                    "sha256": f["sha256"],
                    "url": _download_url(request, release, edition, f["path"]),
                }
                for f in release.files
                if f["edition"] == edition
            ]
            for edition in editions
        }


class ReleaseBuildOutput(serializers.ModelSerializer):
    release = serializers.SlugRelatedField(slug_field="version", read_only=True, allow_null=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = ReleaseBuild
        fields = [
            "id",
            "version",
            "title",
            "status",
            "progress",
            "stage",
            "error",
            "release",
            "created_at",
            "started_at",
            "finished_at",
            "url",
        ]

    def get_url(self, build: ReleaseBuild) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("api-release-build", args=[build.pk])
        )


class ReleaseListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=page_serializer("ReleasePage", ReleaseListOutput))
    def get(self, request: Request) -> Response:
        paginator = CountedPagination()
        page = paginator.paginate_queryset(selectors.release_list(), request)
        data = ReleaseListOutput(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)


class ReleaseDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses={200: ReleaseDetailOutput})
    def get(self, request: Request, version: str) -> Response:
        release = selectors.release_get(version=version)
        return Response(ReleaseDetailOutput(release, context={"request": request}).data)


class ReleaseCreateApi(APIView):
    """Cut a release (admins). The build runs on a worker; follow it at the returned URL."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        version = serializers.CharField(max_length=100, help_text="e.g. 2026.11 or 1.0.0")
        title = serializers.CharField(max_length=500)
        notes = serializers.CharField(default="", allow_blank=True, max_length=50_000)

    @extend_schema(request=InputSerializer, responses={202: ReleaseBuildOutput})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        build = services.release_build_start(user=request.user, **data.validated_data)
        return Response(ReleaseBuildOutput(build, context={"request": request}).data, status=202)


class ReleaseBuildApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(FOLLOWING_BUILDS)]

    @extend_schema(responses={200: ReleaseBuildOutput})
    def get(self, request: Request, pk: int) -> Response:
        build = selectors.build_get(build_id=pk)
        return Response(ReleaseBuildOutput(build, context={"request": request}).data)
