"""REST API of the endpoint registry. Admins list, register, change and remove endpoints;
everyone else lists the endpoints they may use, by name, without URL or key variable."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from endpoints import selectors, services
from endpoints.models import Endpoint
from endpoints.permissions import MANAGING_ENDPOINTS
from plumbing.api import ConflictOutput, ErrorOutput, StrictInput
from plumbing.permissions import api_rule


class EndpointOutput(serializers.ModelSerializer):
    users = serializers.SlugRelatedField(many=True, slug_field="username", read_only=True)
    groups = serializers.SlugRelatedField(many=True, slug_field="name", read_only=True)

    class Meta:
        model = Endpoint
        fields = [
            "name",
            "base_url",
            "api_key_env",
            "model_names",
            "description",
            "open_to_researchers",
            "users",
            "groups",
            "is_active",
            "created_at",
            "updated_at",
        ]


class UsableEndpointOutput(serializers.ModelSerializer):
    """What a researcher sees: enough to choose, nothing about where or which key."""

    class Meta:
        model = Endpoint
        fields = ["name", "description", "model_names"]


class EndpointListOutput(serializers.Serializer):
    results = PolymorphicProxySerializer(
        component_name="EndpointListItem",
        serializers=[EndpointOutput, UsableEndpointOutput],
        resource_type_field_name=None,
        many=True,
        help_text="Admins: every endpoint, all of it; anyone else: those they may use.",
    )


class EndpointInput(StrictInput):
    name = serializers.CharField(max_length=64)
    base_url = serializers.CharField(max_length=500)
    api_key_env = serializers.CharField(max_length=100, default="", allow_blank=True)
    model_names = serializers.ListField(
        child=serializers.CharField(max_length=200), default=list, max_length=100
    )
    description = serializers.CharField(max_length=300, default="", allow_blank=True)
    open_to_researchers = serializers.BooleanField(default=False)
    users = serializers.ListField(child=serializers.CharField(max_length=150), default=list)
    groups = serializers.ListField(child=serializers.CharField(max_length=150), default=list)
    is_active = serializers.BooleanField(default=True)

    def to_input(self, *, partial: bool = False) -> services.EndpointInput:
        data: dict[str, Any] = dict(self.validated_data)
        renamed = {"users": "usernames", "groups": "group_names"}
        given = {renamed.get(k, k): v for k, v in data.items()}
        every = set(services.EndpointInput.__dataclass_fields__) - {"keep"}
        keep = frozenset(every - set(given)) if partial else frozenset()
        defaults = {"name": "", "base_url": ""}
        return services.EndpointInput(**{**defaults, **given, "keep": keep})


def _endpoint(name: str) -> Endpoint:
    endpoint = Endpoint.objects.prefetch_related("users", "groups").filter(name=name).first()
    if endpoint is None:
        raise NotFound(f"No endpoint {name}")
    return endpoint


class EndpointListApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(MANAGING_ENDPOINTS, methods={"POST"})]

    @extend_schema(responses=EndpointListOutput)
    def get(self, request: Request) -> Response:
        if MANAGING_ENDPOINTS.allows(request.user):
            every = Endpoint.objects.prefetch_related("users", "groups").order_by("name")
            return Response({"results": EndpointOutput(every, many=True).data})
        usable = selectors.endpoints_usable_by(user=request.user)
        return Response({"results": UsableEndpointOutput(usable, many=True).data})

    @extend_schema(request=EndpointInput, responses={201: EndpointOutput, 400: ErrorOutput})
    def post(self, request: Request) -> Response:
        data = EndpointInput(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = services.endpoint_create(user=request.user, data=data.to_input())
        return Response(EndpointOutput(_endpoint(endpoint.name)).data, status=201)


class EndpointDetailApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(MANAGING_ENDPOINTS)]

    @extend_schema(responses=EndpointOutput)
    def get(self, request: Request, name: str) -> Response:
        return Response(EndpointOutput(_endpoint(name)).data)

    @extend_schema(request=EndpointInput, responses={200: EndpointOutput, 400: ErrorOutput})
    def patch(self, request: Request, name: str) -> Response:
        _endpoint(name)
        data = EndpointInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        endpoint = services.endpoint_update(
            user=request.user, name=name, data=data.to_input(partial=True)
        )
        return Response(EndpointOutput(_endpoint(endpoint.name)).data)

    @extend_schema(request=None, responses={204: None, 409: ConflictOutput})
    def delete(self, request: Request, name: str) -> Response:
        _endpoint(name)
        services.endpoint_delete(user=request.user, name=name)
        return Response(status=204)
