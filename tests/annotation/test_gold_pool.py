"""The private gold pool: which questions may join it, the admin page, API and action that
change it, and what admins (and only admins) see of gold control on the dashboard."""

from __future__ import annotations

import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from annotation.models import QuestionAuthoring, VerificationSlot
from annotation.services import (
    Verdict,
    gold_pool_add,
    gold_pool_remove,
    verification_claim,
    verification_submit,
)
from dataset.models import Question
from plumbing.errors import ApplicationError
from tests.factories import ModelQuestionFactory, QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db


def written_here(**fields) -> Question:
    """A human-written question saved in the query tool (not from the published release)."""
    question = QuestionFactory(**fields)
    QuestionAuthoring.objects.create(
        question=question, annotator=UserFactory(role="annotator"), client_key=uuid.uuid4()
    )
    return question


def verified_generated(**fields) -> Question:
    return ModelQuestionFactory(status="verified", **fields)


@pytest.fixture
def admin():
    return UserFactory(role="admin")


def in_pool() -> set[str]:
    return set(Question.objects.filter(in_gold_pool=True).values_list("pk", flat=True))


def test_questions_written_or_verified_here_join_the_pool(admin) -> None:
    a, b = written_here(gold_answer="{3}"), verified_generated(gold_answer="{North}")
    change = gold_pool_add(admin=admin, question_ids=[a.pk, b.pk, a.pk])
    assert (change.changed, change.unchanged) == ([a.pk, b.pk], [])
    assert gold_pool_add(admin=admin, question_ids=[a.pk]).unchanged == [a.pk]
    assert gold_pool_remove(admin=admin, question_ids=[a.pk]).changed == [a.pk]
    assert in_pool() == {b.pk}


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: QuestionFactory(), "published HCT-QA release"),
        (lambda: ModelQuestionFactory(), "not verified"),
        (lambda: written_here(table=TableFactory(split="test")), "test-split table"),
        (
            lambda: QuestionFactory(origin="synthetic", template_number=1),
            "template questions",
        ),
        (lambda: written_here(gold_answer="no braces"), "gold answer does not parse"),
    ],
    ids=["release", "unverified", "test-split", "synthetic", "unparsable"],
)
def test_questions_unfit_for_gold_are_refused_and_nothing_changes(admin, make, reason) -> None:
    fit, unfit = written_here(), make()
    with pytest.raises(ApplicationError, match=reason) as error:
        gold_pool_add(admin=admin, question_ids=[fit.pk, unfit.pk])
    assert unfit.pk in error.value.message and error.value.field == "question_ids"
    assert in_pool() == set()


def test_unknown_ids_and_non_admins_are_refused(admin) -> None:
    with pytest.raises(ApplicationError, match="psa--0--0--M9: no such question"):
        gold_pool_add(admin=admin, question_ids=["psa--0--0--M9"])
    with pytest.raises(ApplicationError, match="no such question"):
        gold_pool_remove(admin=admin, question_ids=["psa--0--0--M9"])
    with pytest.raises(ApplicationError, match="Name at least one"):
        gold_pool_add(admin=admin, question_ids=[" "])
    for role in ("annotator", "adjudicator", "researcher"):
        with pytest.raises(PermissionDenied):
            gold_pool_add(admin=UserFactory(role=role), question_ids=[written_here().pk])


def test_a_change_is_announced_in_its_transaction(admin) -> None:
    from dataset.signals import question_set_changed

    heard: list[tuple[str, list[str]]] = []

    def listener(sender, reason, question_ids, **kwargs) -> int:
        heard.append((reason, question_ids))
        return 0

    question_set_changed.connect(listener)
    try:
        question = written_here()
        gold_pool_add(admin=admin, question_ids=[question.pk])
        gold_pool_add(admin=admin, question_ids=[question.pk])  # nothing changed
        gold_pool_remove(admin=admin, question_ids=[question.pk])
    finally:
        question_set_changed.disconnect(listener)
    assert heard == [
        ("1 question joined the gold pool", [question.pk]),
        ("1 question left the gold pool", [question.pk]),
    ]


# --- The attack: looking a claimed item up -------------------------------------------------


def test_a_claimed_item_cannot_be_looked_up_whether_gold_or_real(client: Client, settings) -> None:
    # Issue 10, item 4: the claim payload gave table and text; an anonymous search then found
    # gold items as verified human-written questions, and real items as unverified ones.
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 0
    ModelQuestionFactory(text="How many women lived in the South?")
    written_here(text="How many men lived in the North?", in_gold_pool=True)
    verifier = UserFactory(role="annotator")
    served = []
    for percent in (0, 100):
        settings.VERIFICATION_GOLD_PERCENT = percent
        slot = verification_claim(annotator=verifier)
        served.append(slot)
        verification_submit(annotator=verifier, slot_id=slot.pk, verdict=Verdict("good", True))
    assert [slot.kind for slot in served] == ["regular", "gold"]
    for slot in served:
        words = slot.question.text.split(" lived")[0]
        for anyone in (Client(), verifier_client(verifier)):
            found = anyone.get(
                "/api/questions/", {"table": slot.question.table_id, "q": words}
            ).json()
            assert found["count"] == 0, slot.kind
            page = anyone.get(f"/tables/{slot.question.table_id}/").content.decode()
            assert slot.question.text not in page
            assert anyone.get(f"/api/questions/{slot.question_id}/").status_code == 404
    # Admins still find both, with their status.
    client.force_login(UserFactory(role="admin"))
    found = client.get("/api/questions/", {"q": "lived in the"}).json()["results"]
    assert {(q["origin"], q["status"]) for q in found} == {
        ("model", "unverified"),
        ("human", "verified"),
    }


def verifier_client(user) -> Client:
    logged_in = Client()
    logged_in.force_login(user)
    return logged_in


def test_verified_generated_questions_are_public_again(client: Client) -> None:
    question = verified_generated(text="Which region has more women?")
    found = client.get("/api/questions/", {"q": "more women"}).json()["results"]
    assert [q["id"] for q in found] == [question.pk]


# --- Pages, API, admin action ---------------------------------------------------------------


def test_the_gold_pool_page_adds_removes_and_explains_refusals(client: Client, admin) -> None:
    client.force_login(admin)
    fit, release = written_here(text="Which ward grew most?"), QuestionFactory()
    page = client.get("/annotate/gold/").content.decode()
    assert "The pool is empty: no gold items are served" in page
    refused = client.post("/annotate/gold/", {"action": "add", "question_ids": release.pk})
    assert refused.status_code == 400 and "published HCT-QA release" in refused.content.decode()
    added = client.post(
        "/annotate/gold/", {"action": "add", "question_ids": f"{fit.pk}\n"}, follow=True
    )
    body = added.content.decode()
    assert "1 question added to the gold pool" in body and "Which ward grew most?" in body
    client.post("/annotate/gold/", {"action": "remove", "question_ids": fit.pk})
    assert in_pool() == set()


def test_the_gold_pool_api(client: Client, admin) -> None:
    fit = written_here()
    client.force_login(admin)
    added = client.post(
        "/api/verify/gold-pool/add/", {"question_ids": [fit.pk]}, content_type="application/json"
    )
    assert added.json() == {"changed": [fit.pk], "unchanged": []}
    listing = client.get("/api/verify/gold-pool/").json()
    assert listing["count"] == 1 and listing["results"][0]["id"] == fit.pk
    assert listing["summary"]["pool"] == 1
    bad = client.post(
        "/api/verify/gold-pool/add/",
        {"question_ids": [QuestionFactory().pk]},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "release" in bad.json()["detail"]
    removed = client.post(
        "/api/verify/gold-pool/remove/", {"question_ids": [fit.pk]}, content_type="application/json"
    )
    assert removed.json()["changed"] == [fit.pk]


@pytest.mark.parametrize("role", ["annotator", "adjudicator", "researcher"])
def test_only_admins_reach_the_gold_pool(client: Client, role: str) -> None:
    fit = written_here(in_gold_pool=True)
    client.force_login(UserFactory(role=role))
    for url in ("/annotate/gold/", "/api/verify/gold-pool/", "/api/verify/gold-verdicts/"):
        response = client.get(url)
        assert response.status_code == 403 and fit.text not in response.content.decode()
    response = client.post(
        "/api/verify/gold-pool/remove/", {"question_ids": [fit.pk]}, content_type="application/json"
    )
    assert response.status_code == 403 and in_pool() == {fit.pk}


def test_the_admin_action_goes_through_the_same_checks(client: Client, admin) -> None:
    client.force_login(admin)
    fit, release = written_here(), QuestionFactory()
    url = "/admin/dataset/question/"
    refused = client.post(
        url, {"action": "add_to_gold_pool", "_selected_action": [fit.pk, release.pk]}, follow=True
    )
    assert "published HCT-QA release" in refused.content.decode() and in_pool() == set()
    client.post(url, {"action": "add_to_gold_pool", "_selected_action": [fit.pk]})
    assert in_pool() == {fit.pk}
    client.post(url, {"action": "remove_from_gold_pool", "_selected_action": [fit.pk]})
    assert in_pool() == set()


def test_the_dashboard_shows_gold_control_to_admins_only(client: Client, admin, settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 100
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 100
    client.force_login(admin)
    assert "The gold pool is empty: no gold items are served" in (
        client.get("/annotate/verification/").content.decode()
    )
    gold = written_here(gold_answer="{5}", in_gold_pool=True)
    lazy = UserFactory(role="annotator", username="lazy")
    slot = verification_claim(annotator=lazy)
    verification_submit(annotator=lazy, slot_id=slot.pk, verdict=Verdict("good", True))
    page = client.get("/annotate/verification/").content.decode()
    assert "1 question in the gold pool" in page and "Wrong accepted" in page
    api = client.get("/api/verify/dashboard/").json()
    assert api["gold_control"]["pool"] == 1 and api["gold_control"]["passed"] == 0
    row = next(v for v in api["verifiers"] if v["username"] == "lazy")
    assert row["gold_wrong_accepted"] == 1
    # The audit: the answer shown, that it was the wrong one, and why the verdict failed.
    audit = client.get("/annotate/gold/?verifier=lazy").content.decode()
    shown = VerificationSlot.objects.get(pk=slot.pk).gold_shown_answer
    assert shown in audit and "deliberately wrong" in audit
    assert "accepted the wrong answer as right" in audit
    verdicts = client.get("/api/verify/gold-verdicts/?verifier=lazy").json()["verdicts"]
    assert verdicts[0]["shown_answer"] == shown and verdicts[0]["gold_answer"] == "{5}"
    assert verdicts[0]["shown_answer_wrong"] and verdicts[0]["failure"]
    # An adjudicator verifies too: no gold figures, no pool, for them.
    client.force_login(UserFactory(role="adjudicator"))
    page = client.get("/annotate/verification/").content.decode()
    assert "Gold" not in page and gold.text not in page
    api = client.get("/api/verify/dashboard/").json()
    assert "gold_control" not in api and all("gold_seen" not in v for v in api["verifiers"])
