"""Authorization on every private object: a researcher's private submission and its
results, their inference runs, their account and token, and the admins' pages are refused
to everyone else (anonymous, another researcher, an annotator), page and API alike, and
each changing action too. Every URL with an object id is listed here, so a new one must be
added."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import get_resolver
from rest_framework.authtoken.models import Token

from leaderboard.models import InferenceRun, RunStatus
from tests.factories import LOOKUP_PROPERTIES, InferenceRunFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "private-model-xq7"


@pytest.fixture
def owner():
    return UserFactory(username="owner", role="researcher")


@pytest.fixture
def private(owner) -> dict[str, int]:
    submission = SubmissionFactory(owner=owner, model_name=SECRET, visibility="private")
    run = InferenceRunFactory(created_by=owner, model_name=SECRET)
    Token.objects.create(user=owner, key="0" * 40)
    return {"submission": submission.pk, "run": run.pk}


def reads(ids: dict[str, int]) -> list[str]:
    s, r = ids["submission"], ids["run"]
    return [
        f"/leaderboard/submissions/{s}/",
        f"/leaderboard/submissions/{s}/results.csv",
        f"/leaderboard/submissions/{s}/results.json",
        f"/leaderboard/inference/{r}/",
        f"/api/submissions/{s}/",
        f"/api/submissions/{s}/results/",
        f"/api/inference-runs/{r}/",
        "/accounts/",
    ]


def writes(ids: dict[str, int]) -> list[tuple[str, dict]]:
    s, r = ids["submission"], ids["run"]
    return [
        (f"/leaderboard/submissions/{s}/rescore/", {}),
        (f"/leaderboard/submissions/{s}/visibility/", {"visibility": "public"}),
        (f"/leaderboard/submissions/{s}/delete/", {}),
        (f"/leaderboard/inference/{r}/cancel/", {}),
        (f"/leaderboard/inference/{r}/resume/", {}),
        (f"/api/submissions/{s}/rescore/", {}),
        (f"/api/submissions/{s}/visibility/", {"visibility": "public"}),
        (f"/api/submissions/{s}/delete/", {}),
        (f"/api/inference-runs/{r}/cancel/", {}),
        (f"/api/inference-runs/{r}/resume/", {}),
        ("/accounts/token/", {}),
    ]


def outsiders() -> list[Client | None]:
    clients: list[Client | None] = [None]
    for role in ("researcher", "annotator", "adjudicator"):
        client = Client()
        client.force_login(UserFactory(role=role))
        clients.append(client)
    return clients


def test_no_one_else_reads_a_private_object(private, owner) -> None:
    for client in outsiders():
        c = client or Client()
        for url in reads(private):
            response = c.get(url)
            if url == "/accounts/" and client is not None:
                assert response.status_code == 200  # their own account, not the owner's
            else:
                assert response.status_code in (302, 401, 403, 404), (url, response.status_code)
            assert SECRET not in response.content.decode(), url
            assert "0" * 40 not in response.content.decode(), url
    mine = Client()
    mine.force_login(owner)
    for url in reads(private):
        assert mine.get(url).status_code == 200, url


def test_no_one_else_changes_a_private_object(private, owner) -> None:
    from leaderboard.models import Submission

    for client in outsiders():
        c = client or Client()
        for url, data in writes(private):
            response = c.post(url, data)
            if url == "/accounts/token/":
                # Everyone logged in rotates their own token only; the owner's stays.
                assert Token.objects.get(user=owner).key == "0" * 40
                continue
            assert response.status_code in (302, 401, 403, 404), (url, response.status_code)
            if response.status_code == 302:
                assert "/accounts/login/" in response["Location"], url
    submission = Submission.objects.get(pk=private["submission"])
    assert submission.visibility == "private" and submission.status == "scored"
    assert InferenceRun.objects.get(pk=private["run"]).status == RunStatus.FAILED


def test_admins_pages_are_refused_to_everyone_else() -> None:
    pages = [
        "/annotate/gold/",
        "/annotate/generation/",
        "/annotate/synthetic/",
        "/admin/accounts/account/",
        "/admin/accounts/approvalrequest/",
        "/accounts/approval-requests/",
        "/releases/builds/1/",
        "/api/releases/builds/1/",
        "/api/verify/gold-pool/",
        "/api/verify/gold-verdicts/",
        "/api/verify/generation-runs/",
    ]
    for client in outsiders():
        c = client or Client()
        for url in pages:
            assert c.get(url).status_code in (302, 401, 403, 404), url


# --- Every route with an id, in every app ----------------------------------------------------
#
# Each URL pattern that takes a converter (<int:…>, <str:…>, <slug:…>, <uuid:…>, <path:…>) is
# either PUBLIC (listed with why) or GUARDED: a private object made in ``world`` is asked for by
# everyone who must not have it, page and API, read and write, and each is refused (or, for the
# annotation tools, given their own work only) and never shown the object's secret. A route
# added later fails ``test_every_route_with_an_id_is_decided`` until it is put in one of them.

# Who must be refused, by whose the object is.
NOT_THE_OWNER = ("anonymous", "researcher", "annotator", "adjudicator")  # a researcher's own
NOT_THE_AUTHOR = ("anonymous", "researcher", "annotator", "adjudicator")  # an annotator's own
NOT_ADJUDICATORS = ("anonymous", "researcher", "annotator")  # adjudicators' (and admins') pages
NOT_ADMINS = ("anonymous", "researcher", "annotator", "adjudicator")
# Ingest is one shared workspace of those with the ingest permission (adjudicators, admins).
NOT_INGESTERS = ("anonymous", "researcher", "annotator")
# Discussions are the dataset makers' (annotators, adjudicators, admins).
NOT_DISCUSSANTS = ("anonymous", "researcher")


PUBLIC = {
    # The dataset: tables and their files are public; which questions are shown is
    # questions_visible (tests/test_gold_never_leaks.py).
    "tables/<str:table_id>/",
    "tables/<str:table_id>/download/<str:fmt>/",
    "api/tables/<str:table_id>/",
    "api/tables/<str:table_id>/formats/<str:fmt>/",
    "api/questions/<str:question_id>/",
    # The public boards' exports (public submissions only: tests/leaderboard).
    "leaderboard/<str:modality>/export.<str:fmt>",
    # The tracks' public boards, their exports and API (public test-split submissions and the
    # platform's baselines only: tests/tracks), and their submit form (the researcher's own).
    "leaderboard/tracks/<slug:track>/",
    "leaderboard/tracks/<slug:track>/export.<str:fmt>",
    "leaderboard/tracks/<slug:track>/submit/",
    "api/tracks/<slug:track>/board/",
    # Releases: public editions for all, the full one for admins (tests/releases).
    "releases/<str:version>/",
    "releases/<str:version>/<str:edition>/<path:path>",
    "api/releases/<str:version>/",
    # Uploaded table images of dataset tables (ingest's files live elsewhere, never served).
    "media/<path:path>",
    # Django's admin site: staff only, as a whole (tests/test_admin.py).
    "admin/r/<path:content_type_id>/<path:object_id>/",
    "admin/auth/user/<id>/password/",
    # An address's confirmation link: the token is signed for one account and address, and
    # confirms only while that account is logged in (tests/accounts/test_email_confirmation.py).
    "accounts/emails/confirm/<str:token>/",
}


def _is_admin_site(route: str) -> bool:
    return route.startswith("admin/") and "<path:object_id>" in route


@pytest.fixture
def world(settings, tmp_path, owner, private) -> dict:
    """One private object of each kind, each carrying SECRET where it has text."""
    import uuid

    from accounts.models import ApprovalRequest, Notification
    from annotation import services as annotation
    from annotation.models import Flag, GenerationRun, SyntheticRun
    from annotation.services import Verdict
    from endpoints.models import Endpoint
    from hctqa.core.extraction.grid import grid_from_canonical
    from ingest import files
    from ingest.models import Candidate, CandidateDraft, Document, DocumentPage
    from releases.models import ReleaseBuild
    from tests.factories import (
        NESTED_CSV,
        CollectionFactory,
        ModelQuestionFactory,
        QuestionFactory,
        TableFactory,
    )

    settings.VERIFICATION_GOLD_PERCENT = 0
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    files.write("pages/1.jpg", SECRET.encode())
    files.write("crops/1.png", SECRET.encode())
    writer = UserFactory(username="writer", role="annotator")
    adjudicator = UserFactory(username="judge", role="adjudicator")
    admin = UserFactory(username="boss", role="admin")
    table = TableFactory()
    written = annotation.question_write(
        annotator=writer,
        table=table,
        client_key=uuid.uuid4(),
        text="Which region had the most women in 2020?",
        gold_answer="{South}",
        query_properties=LOOKUP_PROPERTIES,
    )
    annotation.question_draft_save(
        annotator=writer,
        table=table,
        client_key=uuid.uuid4(),
        text=f"What did {SECRET} count?",
        gold_answer="{1}",
        query_properties=LOOKUP_PROPERTIES,
        client_ms=1,
    )
    for _ in range(2):
        ModelQuestionFactory(table=TableFactory())
    given = annotation.verification_claim(annotator=writer)
    annotation.verification_submit(
        annotator=writer, slot_id=given.pk, verdict=Verdict("good", answer_correct=True)
    )
    held = annotation.verification_claim(annotator=writer)
    waiting = QuestionFactory(table=table, status="adjudication", origin="model")
    flag = Flag.objects.create(table=table, reason="other", note=SECRET, raised_by=writer)
    from discussion.services import comment_post

    comment_post(author=writer, table=table, question=None, body=f"About {SECRET}")
    comment_post(author=admin, table=table, question=waiting, body=f"Waiting: {SECRET}")
    asking = UserFactory(username="asking", role="researcher", test_split_approved=False)
    approval = ApprovalRequest.objects.create(user=asking, note=SECRET)
    notification = Notification.objects.create(
        recipient=owner, text=f"Your submission {SECRET} is scored", url="/accounts/"
    )
    endpoint = Endpoint.objects.create(
        name="lab-gpu", base_url=f"http://{SECRET}.internal/v1", api_key_env="LAB_API_KEY"
    )
    generation = GenerationRun.objects.create(
        created_by=admin, endpoint=endpoint, base_url=endpoint.base_url, model=SECRET
    )
    synthetic = SyntheticRun.objects.create(created_by=admin, error=SECRET)
    build = ReleaseBuild.objects.create(version="9.9", title=SECRET, created_by=admin)
    document = Document.objects.create(
        collection=CollectionFactory(),
        number=1,
        kind="pdf",
        file_name=f"{SECRET}.pdf",
        sha256="a" * 64,
        size_bytes=1,
        page_count=1,
        stored_path="none",
        uploaded_by=adjudicator,
        status="done",
        pages_done=1,
    )
    DocumentPage.objects.create(
        document=document,
        number=1,
        status="done",
        width=99,
        height=99,
        image_path="pages/1.jpg",
    )
    grid = grid_from_canonical(NESTED_CSV)
    candidate = Candidate.objects.create(
        document=document,
        number=1,
        page=1,
        strategy="lines",
        bbox=[1, 1, 50, 50],
        machine_grid=grid.as_json(),
        machine_csv=NESTED_CSV,
        crop_path="crops/1.png",
    )
    CandidateDraft.objects.create(
        candidate=candidate,
        editor=adjudicator,
        state={"note": SECRET},
        base_version=candidate.version,
        client_ms=1,
    )
    # A private submission to a track beside QA, its results per item.
    track_submission = SubmissionFactory(
        owner=owner,
        model_name=SECRET,
        visibility="private",
        track="sql",
        data_scope="",
        split="test",
        recall=None,
    )
    return {
        **private,
        "track_submission": track_submission.pk,
        "owner": owner,
        "writer": writer,
        "adjudicator": adjudicator,
        "admin": admin,
        "table": table.pk,
        "question": written.pk,
        "given": given.public_id,
        "held": held.public_id,
        "waiting": waiting.pk,
        "flag": flag.pk,
        "endpoint": endpoint.name,
        "generation": generation.pk,
        "synthetic": synthetic.pk,
        "build": build.pk,
        "document": document.pk,
        "candidate": candidate.pk,
        "user": writer.pk,
        "approval": approval.pk,
        "notification": notification.pk,
    }


def guarded(w: dict) -> dict[str, tuple[tuple[str, ...], str, list[tuple[str, str, dict]]]]:
    """Route → (who is refused, whose object: the insider who may, [(method, url, data)])."""
    s, r, t, q = w["submission"], w["run"], w["table"], w["question"]
    given, held, cand, doc = w["given"], w["held"], w["candidate"], w["document"]
    gen, syn, flag, waiting = w["generation"], w["synthetic"], w["flag"], w["waiting"]
    verdict = {"rating": "good", "answer_correct": "no", "corrected_answer": "{x}"}
    state = {"state": {"n_rows": 1, "n_cols": 1, "cells": []}, "base_version": 1}
    g, p, P = "get", "post", "post"
    own = (NOT_THE_OWNER, "owner")
    author = (NOT_THE_AUTHOR, "writer")
    judges = (NOT_ADJUDICATORS, "adjudicator")
    admins = (NOT_ADMINS, "admin")
    ingest = (NOT_INGESTERS, "adjudicator")
    return {
        # Leaderboard: a researcher's private submission and inference run.
        "leaderboard/submissions/<int:pk>/": (*own, [(g, f"/leaderboard/submissions/{s}/", {})]),
        "leaderboard/submissions/<int:pk>/results.<str:fmt>": (
            *own,
            [(g, f"/leaderboard/submissions/{s}/results.csv", {})],
        ),
        "leaderboard/submissions/<int:pk>/rescore/": (
            *own,
            [(p, f"/leaderboard/submissions/{s}/rescore/", {})],
        ),
        "leaderboard/submissions/<int:pk>/visibility/": (
            *own,
            [(p, f"/leaderboard/submissions/{s}/visibility/", {"visibility": "public"})],
        ),
        "leaderboard/submissions/<int:pk>/delete/": (
            *own,
            [(p, f"/leaderboard/submissions/{s}/delete/", {})],
        ),
        "leaderboard/inference/<int:pk>/": (*own, [(g, f"/leaderboard/inference/{r}/", {})]),
        "leaderboard/inference/<int:pk>/cancel/": (
            *own,
            [(p, f"/leaderboard/inference/{r}/cancel/", {})],
        ),
        "leaderboard/inference/<int:pk>/resume/": (
            *own,
            [(p, f"/leaderboard/inference/{r}/resume/", {})],
        ),
        "api/submissions/<int:pk>/": (*own, [(g, f"/api/submissions/{s}/", {})]),
        "api/submissions/<int:pk>/rescore/": (*own, [(p, f"/api/submissions/{s}/rescore/", {})]),
        "api/submissions/<int:pk>/visibility/": (
            *own,
            [(p, f"/api/submissions/{s}/visibility/", {"visibility": "public"})],
        ),
        "api/submissions/<int:pk>/delete/": (*own, [(p, f"/api/submissions/{s}/delete/", {})]),
        "api/submissions/<int:pk>/results/": (*own, [(g, f"/api/submissions/{s}/results/", {})]),
        "api/submissions/<int:pk>/item-results/": (
            *own,
            [(g, f"/api/submissions/{w['track_submission']}/item-results/", {})],
        ),
        "api/inference-runs/<int:pk>/": (*own, [(g, f"/api/inference-runs/{r}/", {})]),
        "api/inference-runs/<int:pk>/cancel/": (
            *own,
            [(p, f"/api/inference-runs/{r}/cancel/", {})],
        ),
        "api/inference-runs/<int:pk>/resume/": (
            *own,
            [(p, f"/api/inference-runs/{r}/resume/", {})],
        ),
        # Annotation tools: anyone annotating opens a table, and sees only their own work.
        "annotate/properties/<str:table_id>/": (*author, [(g, f"/annotate/properties/{t}/", {})]),
        "annotate/questions/<str:table_id>/": (*author, [(g, f"/annotate/questions/{t}/", {})]),
        "api/annotate/properties/<str:table_id>/": (
            *author,
            [(g, f"/api/annotate/properties/{t}/", {})],
        ),
        "api/annotate/properties/<str:table_id>/draft/": (
            *author,
            [
                (
                    "put",
                    f"/api/annotate/properties/{t}/draft/",
                    {"properties": {}, "base_version": 0, "client_ms": 5},
                )
            ],
        ),
        "api/annotate/properties/<str:table_id>/save/": (
            *author,
            [(p, f"/api/annotate/properties/{t}/save/", {})],
        ),
        "api/annotate/properties/<str:table_id>/skip/": (
            *author,
            [(p, f"/api/annotate/properties/{t}/skip/", {})],
        ),
        "api/annotate/questions/<str:table_id>/": (
            *author,
            [(g, f"/api/annotate/questions/{t}/", {})],
        ),
        "api/annotate/questions/<str:table_id>/draft/": (
            *author,
            [
                (
                    "put",
                    f"/api/annotate/questions/{t}/draft/",
                    {
                        "client_key": "00000000-0000-4000-8000-000000000001",
                        "text": "Mine?",
                        "gold_answer": "",
                        "query_properties": {},
                        "client_ms": 5,
                    },
                )
            ],
        ),
        "api/annotate/questions/<str:table_id>/save/": (
            *author,
            [(p, f"/api/annotate/questions/{t}/save/", {})],
        ),
        "api/annotate/questions/<str:table_id>/skip/": (
            *author,
            [(p, f"/api/annotate/questions/{t}/skip/", {})],
        ),
        # An annotator's own question, verdicts and held slot.
        "annotate/mine/questions/<str:question_id>/": (
            *author,
            [
                (g, f"/annotate/mine/questions/{q}/", {}),
                (P, f"/annotate/mine/questions/{q}/", {"text": "Hijacked?", "base_version": 1}),
            ],
        ),
        "annotate/mine/verdicts/<uuid:slot_id>/": (
            *author,
            [
                (g, f"/annotate/mine/verdicts/{given}/", {}),
                (P, f"/annotate/mine/verdicts/{given}/", verdict),
            ],
        ),
        "annotate/verify/<uuid:slot_id>/": (
            *author,
            [(g, f"/annotate/verify/{held}/", {}), (P, f"/annotate/verify/{held}/", verdict)],
        ),
        "annotate/verify/<uuid:slot_id>/skip/": (
            *author,
            [(p, f"/annotate/verify/{held}/skip/", {})],
        ),
        "api/verify/slots/<uuid:slot_id>/renew/": (
            *author,
            [(p, f"/api/verify/slots/{held}/renew/", {})],
        ),
        "api/verify/slots/<uuid:slot_id>/submit/": (
            *author,
            [(p, f"/api/verify/slots/{held}/submit/", verdict)],
        ),
        "api/verify/slots/<uuid:slot_id>/release/": (
            *author,
            [(p, f"/api/verify/slots/{held}/release/", {})],
        ),
        # Adjudicators' work: flags, agreement, adjudication.
        "annotate/flags/<int:flag_id>/resolve/": (
            *judges,
            [(p, f"/annotate/flags/{flag}/resolve/", {"resolution": "closed"})],
        ),
        "annotate/agreement/<str:table_id>/": (*judges, [(g, f"/annotate/agreement/{t}/", {})]),
        "api/annotate/agreement/<str:table_id>/resolve/": (
            *judges,
            [(p, f"/api/annotate/agreement/{t}/resolve/", {})],
        ),
        "annotate/adjudication/<str:question_id>/": (
            *judges,
            [
                (g, f"/annotate/adjudication/{waiting}/", {}),
                (P, f"/annotate/adjudication/{waiting}/", {"rating": "nonsensical"}),
            ],
        ),
        "api/verify/adjudication/<str:question_id>/decide/": (
            *judges,
            [(p, f"/api/verify/adjudication/{waiting}/decide/", {"rating": "nonsensical"})],
        ),
        # A researcher's notification: opening it marks it read and leads to its page.
        "accounts/notifications/<int:notification_id>/": (
            *own,
            [(g, f"/accounts/notifications/{w['notification']}/", {})],
        ),
        # Discussions: a table's thread is the dataset makers'; a private question's
        # thread is for those who may see the question (admins).
        "discussion/tables/<str:table_id>/": (
            NOT_DISCUSSANTS,
            "writer",
            [(g, f"/discussion/tables/{t}/", {}), (P, f"/discussion/tables/{t}/", {"body": "x"})],
        ),
        "discussion/questions/<str:question_id>/": (
            *admins,
            [
                (g, f"/discussion/questions/{waiting}/", {}),
                (P, f"/discussion/questions/{waiting}/", {"body": "x"}),
            ],
        ),
        # Admins' pages.
        "accounts/approval-requests/<int:request_id>/decide/": (
            *admins,
            [
                (
                    p,
                    f"/accounts/approval-requests/{w['approval']}/decide/",
                    {"decision": "approve"},
                )
            ],
        ),
        "annotate/verification/verifiers/<int:user_id>/reinstate/": (
            *admins,
            [(p, f"/annotate/verification/verifiers/{w['user']}/reinstate/", {})],
        ),
        "annotate/synthetic/<int:run_id>/": (*admins, [(g, f"/annotate/synthetic/{syn}/", {})]),
        "annotate/synthetic/<int:run_id>/cancel/": (
            *admins,
            [(p, f"/annotate/synthetic/{syn}/cancel/", {})],
        ),
        "annotate/generation/<int:run_id>/": (*admins, [(g, f"/annotate/generation/{gen}/", {})]),
        "annotate/generation/<int:run_id>/cancel/": (
            *admins,
            [(p, f"/annotate/generation/{gen}/cancel/", {})],
        ),
        "annotate/generation/<int:run_id>/resume/": (
            *admins,
            [(p, f"/annotate/generation/{gen}/resume/", {})],
        ),
        "api/verify/generation-runs/<int:run_id>/": (
            *admins,
            [(g, f"/api/verify/generation-runs/{gen}/", {})],
        ),
        "api/verify/generation-runs/<int:run_id>/cancel/": (
            *admins,
            [(p, f"/api/verify/generation-runs/{gen}/cancel/", {})],
        ),
        "releases/builds/<int:build_id>/": (*admins, [(g, f"/releases/builds/{w['build']}/", {})]),
        "api/releases/builds/<int:pk>/": (
            *admins,
            [(g, f"/api/releases/builds/{w['build']}/", {})],
        ),
        "api/endpoints/<slug:name>/": (
            *admins,
            [
                (g, f"/api/endpoints/{w['endpoint']}/", {}),
                (
                    "patch",
                    f"/api/endpoints/{w['endpoint']}/",
                    {"base_url": "http://evil.example/v1"},
                ),
                ("delete", f"/api/endpoints/{w['endpoint']}/", {}),
            ],
        ),
        # Ingest: documents, pages, candidates and their drafts.
        "ingest/documents/<int:document_id>/": (*ingest, [(g, f"/ingest/documents/{doc}/", {})]),
        "ingest/documents/<int:document_id>/pages/<int:number>.jpg": (
            *ingest,
            [(g, f"/ingest/documents/{doc}/pages/1.jpg", {})],
        ),
        "ingest/documents/<int:document_id>/pages/<int:number>/": (
            *ingest,
            [(g, f"/ingest/documents/{doc}/pages/1/", {})],
        ),
        "ingest/candidates/<int:candidate_id>/": (
            *ingest,
            [(g, f"/ingest/candidates/{cand}/", {})],
        ),
        "ingest/candidates/<int:candidate_id>/crop.png": (
            *ingest,
            [(g, f"/ingest/candidates/{cand}/crop.png", {})],
        ),
        "ingest/candidates/<int:candidate_id>/reject/": (
            *ingest,
            [(p, f"/ingest/candidates/{cand}/reject/", {"reason": "spam"})],
        ),
        "ingest/candidates/<int:candidate_id>/image/": (
            *ingest,
            [(p, f"/ingest/candidates/{cand}/image/", {})],
        ),
        "api/ingest/documents/<int:document_id>/": (
            *ingest,
            [(g, f"/api/ingest/documents/{doc}/", {})],
        ),
        "api/ingest/documents/<int:document_id>/draw/": (
            *ingest,
            [(p, f"/api/ingest/documents/{doc}/draw/", {"bbox": [1, 1, 9, 9]})],
        ),
        "api/ingest/candidates/<int:candidate_id>/": (
            *ingest,
            [(g, f"/api/ingest/candidates/{cand}/", {})],
        ),
        "api/ingest/candidates/<int:candidate_id>/draft/": (
            *ingest,
            [("put", f"/api/ingest/candidates/{cand}/draft/", {**state, "client_ms": 5})],
        ),
        "api/ingest/candidates/<int:candidate_id>/save/": (
            *ingest,
            [(p, f"/api/ingest/candidates/{cand}/save/", state)],
        ),
        "api/ingest/candidates/<int:candidate_id>/reject/": (
            *ingest,
            [(p, f"/api/ingest/candidates/{cand}/reject/", {"reason": "spam"})],
        ),
        "api/ingest/candidates/<int:candidate_id>/extract/": (
            *ingest,
            [(p, f"/api/ingest/candidates/{cand}/extract/", {"bbox": [1, 1, 9, 9]})],
        ),
    }


# Routes that answer their insider with a redirect to the page they lead to.
REDIRECTS = {"accounts/notifications/<int:notification_id>/"}

_CONVERTER = re.compile(r"<(?:(?:int|str|slug|uuid|path):)?\w+>")


def routes_with_an_id() -> set[str]:
    found: set[str] = set()

    def walk(resolver, prefix: str = "") -> None:
        for pattern in resolver.url_patterns:
            route = prefix + str(pattern.pattern)
            if hasattr(pattern, "url_patterns"):
                walk(pattern, route)
            elif _CONVERTER.search(route) or "(?P<" in route:
                found.add(route)

    walk(get_resolver())
    return found


def test_every_route_with_an_id_is_decided(world) -> None:
    undecided = {
        r
        for r in routes_with_an_id()
        if r not in PUBLIC
        and r not in guarded(world)
        and not _is_admin_site(r)
        # The admin site's own catch-alls (app index, unknown URL): staff only.
        and not r.startswith("admin/^")
        and not r.startswith("admin/(?P<url>")
    }
    assert not undecided, f"decide who may open these, in {__name__}: {sorted(undecided)}"
    assert not set(guarded(world)) - routes_with_an_id(), "a guarded route no longer exists"


def _client(role: str, world: dict) -> Client:
    client = Client()
    if role == "anonymous":
        return client
    user = world.get(role) if role in ("owner", "writer", "adjudicator", "admin") else None
    client.force_login(user or UserFactory(role=role))
    return client


def _send(client: Client, method: str, url: str, data: dict):
    if method in ("get", "post") and not url.startswith("/api/"):
        return getattr(client, method)(url, data)
    return getattr(client, method)(url, data, content_type="application/json")


_REFUSED = (401, 403, 404, 405)


def test_no_one_else_opens_or_changes_a_private_object_on_any_route(world) -> None:
    from annotation.models import Flag, GenerationRun, VerificationSlot
    from dataset.models import Question
    from endpoints.models import Endpoint
    from ingest.models import Candidate, CandidateDraft

    routes = guarded(world)
    # One outsider of each role (the others' own accounts), asked for every route.
    outsiders = {role: _client(role, world) for role in NOT_THE_OWNER}
    wrong = []
    for route, (refused, _, requests) in routes.items():
        for role in refused:
            for method, url, data in requests:
                response = _send(outsiders[role], method, url, data)
                body = response.content.decode(errors="replace")
                assert SECRET not in body, (role, method, url)
                shared_tool = route.startswith(("annotate/properties/", "annotate/questions/"))
                shared_tool = shared_tool or route.startswith("api/annotate/")
                if shared_tool and role in ("annotator", "adjudicator"):
                    continue  # their own work on the table, without the author's
                where = response.get("Location", "")
                if response.status_code == 302 and "/accounts/login/" in where:
                    continue
                if role in ("annotator", "adjudicator") and "<uuid:slot_id>" in route:
                    # A slot another verifier holds answers as a lease that ran out does:
                    # "no longer yours" (409), or your own queue; never theirs.
                    if response.status_code == 409 or where == "/annotate/verify/":
                        continue
                    if route.endswith("/release/") and response.status_code == 200:
                        continue  # nothing of yours to give back; your own next slot
                if response.status_code not in _REFUSED:
                    wrong.append((role, method, url, response.status_code, where))
    assert not wrong, "\n".join(map(str, wrong))

    # Nothing changed.
    from accounts.models import ApprovalRequest, Notification

    assert ApprovalRequest.objects.get(pk=world["approval"]).decided_at is None
    from discussion.models import Comment

    assert Comment.objects.count() == 2
    assert Notification.objects.get(pk=world["notification"]).read_at is None
    question = Question.objects.get(pk=world["question"])
    assert question.text == "Which region had the most women in 2020?"
    assert VerificationSlot.objects.get(public_id=world["given"]).rating == "good"
    assert VerificationSlot.objects.get(public_id=world["held"]).status == "leased"
    assert Question.objects.get(pk=world["waiting"]).status == "adjudication"
    assert Flag.objects.get(pk=world["flag"]).resolved_at is None
    assert GenerationRun.objects.get(pk=world["generation"]).status == "queued"
    assert Endpoint.objects.get(name=world["endpoint"]).base_url.startswith(f"http://{SECRET}")
    candidate = Candidate.objects.get(pk=world["candidate"])
    assert candidate.status == "pending" and candidate.version == 1
    assert CandidateDraft.objects.filter(candidate=candidate).count() == 1


def test_the_insider_reaches_every_guarded_route(world) -> None:
    """The ids above are real: each insider gets past the lookup (so a refusal above is a
    refusal, not a wrong URL)."""
    routes = guarded(world)
    for route, (_, insider, requests) in routes.items():
        client = _client(insider, world)
        method, url, data = requests[0]
        if method not in ("get", "put"):
            continue
        response = _send(client, method, url, data)
        if route in REDIRECTS:
            assert response.status_code == 302, (route, response.status_code)
            assert "/accounts/login/" not in response["Location"], route
            continue
        assert response.status_code == 200, (route, response.status_code)


def test_a_refused_user_cannot_tell_which_user_ids_exist(client: Client) -> None:
    """Routes that take a user id refuse by role before looking the user up: the answer is
    the same for an id that exists and one that does not."""
    client.force_login(UserFactory(role="annotator"))
    existing = UserFactory(role="annotator").pk
    answers = {
        client.post(f"/annotate/verification/verifiers/{user_id}/reinstate/").status_code
        for user_id in (existing, existing + 1000)
    }
    assert answers == {403}
