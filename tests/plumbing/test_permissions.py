"""The one permission pattern (plumbing.permissions): a rule declared on a page, on an API view
(for some methods or all), and checked by a service, refuses with its message and hint
before the view's own code runs."""

from __future__ import annotations

import pytest
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import RequestFactory
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework.views import APIView

from plumbing.errors import Forbidden
from plumbing.permissions import Rule, api_rule, requires
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CURATING = Rule(
    "Only curators do this",
    ("dataset.change_table", "ingest.ingest_document"),
    hint="Ask an admin.",
)
OWNING = Rule("Only its owner", allows_also=lambda user, thing: thing == user.get_username())


def test_a_rule_allows_holders_of_any_permission_or_its_own_check() -> None:
    admin, adjudicator = UserFactory(role="admin"), UserFactory(role="adjudicator")
    annotator = UserFactory(role="annotator", username="ann")
    assert CURATING.allows(admin) and CURATING.allows(adjudicator)  # the second permission
    assert not CURATING.allows(annotator) and not CURATING.allows(AnonymousUser())
    with pytest.raises(Forbidden, match="Only curators do this") as refused:
        CURATING.check(annotator)
    assert refused.value.hint == "Ask an admin."
    OWNING.check(annotator, "ann")
    with pytest.raises(Forbidden, match="Only its owner"):
        OWNING.check(annotator, "someone else")


def test_a_page_declares_its_rule_and_is_refused_before_its_code_runs() -> None:
    ran = []

    @login_required
    @requires(CURATING)
    def page(request):  # type: ignore[no-untyped-def]
        ran.append(request.user)
        return HttpResponse("ok")

    rf = RequestFactory()
    request = rf.get("/p/")
    request.user = UserFactory(role="annotator")
    with pytest.raises(Forbidden, match="Only curators"):
        page(request)
    assert ran == []
    request.user = AnonymousUser()
    assert page(request).status_code == 302  # to the log-in page first
    request.user = UserFactory(role="adjudicator")
    assert page(request).content == b"ok" and ran == [request.user]
    assert page.__name__ == "page"


class _Things(APIView):
    permission_classes = [IsAuthenticated, api_rule(CURATING, methods={"POST"})]

    def get(self, request):  # type: ignore[no-untyped-def]
        return Response({"read": True})

    def post(self, request):  # type: ignore[no-untyped-def]
        return Response({"written": True})


def test_an_api_view_declares_its_rule_for_some_methods() -> None:
    factory = APIRequestFactory()
    annotator = UserFactory(role="annotator")

    def call(method: str, user: object) -> Response:
        request = getattr(factory, method)("/things/")
        if user is not None:
            force_authenticate(request, user=user)
        return _Things.as_view()(request)

    assert call("get", annotator).status_code == 200
    refused = call("post", annotator)
    assert refused.status_code == 403
    assert refused.data == {"detail": "Only curators do this"}
    assert call("post", UserFactory(role="admin")).status_code == 200
    assert call("post", None).status_code in (401, 403)
