"""My recent work (reopen and change, with version checks) and flags for adjudicators."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import selectors, services
from annotation.models import Flag, QuestionAuthoring, VerificationSlot
from annotation.services import Verdict
from dataset.models import Question
from plumbing.errors import ApplicationError, ConflictError
from tests.factories import LOOKUP_PROPERTIES as LOOKUP
from tests.factories import ModelQuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

GOOD = Verdict("good", answer_correct=True)


@pytest.fixture(autouse=True)
def _no_gold(settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0


@pytest.fixture
def annotator():
    return UserFactory(username="ann", role="annotator")


def written(annotator, table, text="Which region had the most women in 2020?") -> Question:
    return services.question_write(
        annotator=annotator,
        table=table,
        client_key=uuid.uuid4(),
        text=text,
        gold_answer="{South}",
        query_properties=LOOKUP,
    )


def change(annotator, question, *, base_version, text):
    return services.question_change(
        annotator=annotator,
        question_id=question.pk,
        text=text,
        gold_answer="{South}",
        query_properties=LOOKUP,
        base_version=base_version,
    )


# --- Questions -----------------------------------------------------------------------------


def test_an_author_changes_a_question_and_a_stale_change_is_refused(annotator) -> None:
    question = written(annotator, TableFactory())
    change(annotator, question, base_version=1, text="Which region had the fewest men in 2019?")
    question.refresh_from_db()
    assert question.text == "Which region had the fewest men in 2019?"
    assert QuestionAuthoring.objects.get(question=question).version == 2
    # A second tab still on version 1: refused, told what is saved now.
    with pytest.raises(ConflictError) as stale:
        change(annotator, question, base_version=1, text="Something else in 2018?")
    assert stale.value.current["version"] == 2
    # The same change retried is harmless.
    change(annotator, question, base_version=1, text="Which region had the fewest men in 2019?")


def test_a_question_is_closed_after_the_change_window(annotator, settings) -> None:
    settings.ANNOTATION_CHANGE_WINDOW_HOURS = 24
    question = written(annotator, TableFactory())
    QuestionAuthoring.objects.filter(question=question).update(
        created_at=timezone.now() - timedelta(hours=25)
    )
    with pytest.raises(ApplicationError, match="can no longer be changed"):
        change(annotator, question, base_version=1, text="Which region had the fewest men?")


def test_only_the_author_changes_a_question(annotator) -> None:
    question = written(annotator, TableFactory())
    other = UserFactory(role="annotator")
    with pytest.raises(ApplicationError, match="You did not write this question"):
        change(other, question, base_version=1, text="Mine now?")


def test_the_change_page_saves_and_goes_back_to_recent_work(client: Client, annotator) -> None:
    question = written(annotator, TableFactory(id="psa--3--1"))
    client.force_login(annotator)
    page = client.get(f"/annotate/mine/questions/{question.pk}/").content.decode()
    assert 'name="base_version" value="1"' in page
    response = client.post(
        f"/annotate/mine/questions/{question.pk}/",
        {
            "base_version": "1",
            "text": "Which region had the most men in 2020?",
            "gold_answer": "{North}",
            "on": [k for k, v in LOOKUP.items() if v is True],
            "returned_columns_outputs": "1",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/annotate/mine/"
    question.refresh_from_db()
    assert (question.text, question.gold_answer) == (
        "Which region had the most men in 2020?",
        "{North}",
    )
    stale = client.post(
        f"/annotate/mine/questions/{question.pk}/",
        {"base_version": "1", "text": "Old tab?", "gold_answer": "{x}", "on": ["yes_no"]},
    )
    # Refused, with the saved version shown and the stale tab's change kept in the form, now
    # based on the saved version: saving it again is a knowing choice.
    page = stale.content.decode()
    assert stale.status_code == 409 and "changed in another tab or window" in page
    assert "Which region had the most men in 2020?" in page
    assert ">Old tab?</textarea>" in page and 'name="base_version" value="2"' in page


# --- Verdicts ------------------------------------------------------------------------------


def test_a_verdict_can_be_changed_until_the_question_is_decided(annotator) -> None:
    ModelQuestionFactory()
    slot = services.verification_claim(annotator=annotator)
    services.verification_submit(annotator=annotator, slot_id=slot.pk, verdict=GOOD)
    slot.refresh_from_db()
    base = slot.submitted_at.isoformat()
    changed = services.verification_change(
        annotator=annotator,
        slot_id=slot.pk,
        verdict=Verdict("nonsensical", answer_correct=True),
        base_submitted_at=base,
    )
    assert changed.rating == "nonsensical"
    with pytest.raises(ConflictError, match="another tab"):  # the old page's version
        services.verification_change(
            annotator=annotator, slot_id=slot.pk, verdict=GOOD, base_submitted_at=base
        )
    # The second verifier decides the question: the first verdict is closed now.
    second = UserFactory(role="annotator")
    other = services.verification_claim(annotator=second)
    services.verification_submit(
        annotator=second, slot_id=other.pk, verdict=Verdict("nonsensical", answer_correct=True)
    )
    with pytest.raises(ConflictError, match="has been decided"):
        services.verification_change(
            annotator=annotator,
            slot_id=slot.pk,
            verdict=GOOD,
            base_submitted_at=changed.submitted_at.isoformat(),
        )


# --- The list ------------------------------------------------------------------------------


def test_recent_work_lists_properties_questions_and_verdicts_with_what_is_still_open(
    client: Client, annotator
) -> None:
    table = TableFactory(id="psa--3--1")
    services.property_annotation_save(
        annotator=annotator,
        table=table,
        properties={"standard_relational_table": True},
        base_version=0,
    )
    question = written(annotator, table)
    ModelQuestionFactory(text="How many women lived in the South?")
    slot = services.verification_claim(annotator=annotator)
    services.verification_submit(annotator=annotator, slot_id=slot.pk, verdict=GOOD)
    with CaptureQueriesContext(connection) as queries:
        items = selectors.recent_work(annotator=annotator)
    assert len(queries) == 3
    assert {i.kind for i in items} == {"properties", "question", "verdict"}
    client.force_login(annotator)
    page = client.get("/annotate/mine/").content.decode()
    assert 'href="/annotate/properties/psa--3--1/"' in page
    assert f'href="/annotate/mine/questions/{question.pk}/"' in page
    assert f'href="/annotate/mine/verdicts/{slot.public_id}/"' in page
    assert "Good: How many women lived in the South?" in page


def test_a_verdict_says_it_waits_for_adjudication_and_shows_one_s_own_work(
    client: Client, annotator
) -> None:
    question = ModelQuestionFactory(text="How many women lived in the South?")
    other = UserFactory(role="annotator")
    mine = services.verification_claim(annotator=annotator)
    services.verification_submit(
        annotator=annotator,
        slot_id=mine.pk,
        verdict=Verdict(
            "ambiguous", True, rewritten_question="How many women lived in the South in 2020?"
        ),
    )
    theirs = services.verification_claim(annotator=other)
    services.verification_submit(annotator=other, slot_id=theirs.pk, verdict=GOOD)
    question.refresh_from_db()
    assert question.status == "adjudication"  # the two disagree
    client.force_login(annotator)

    def row() -> str:
        page = client.get("/annotate/mine/").content.decode()
        return " ".join(page.split("<td>Verdict</td>")[1].split("</tr>")[0].split())

    assert "Closed: waiting for an adjudicator&#x27;s decision" in row()
    services.adjudication_decide(
        adjudicator=UserFactory(role="adjudicator"),
        question_id=question.pk,
        rating="ambiguous",
        answer=question.gold_answer,
        text="In 2021, how many women lived in the South?",
    )
    decided = row()
    assert "Closed: the question has been decided" in decided
    # One's own verdict and rewrite, not the adjudicator's.
    assert (
        "Ambiguous: How many women lived in the South? Your rewrite: How many women lived in "
        "the South in 2020?" in decided
    )
    assert "2021" not in decided


def test_recent_work_is_for_annotators(client: Client) -> None:
    client.force_login(UserFactory(role="researcher"))
    assert client.get("/annotate/mine/").status_code == 403


# --- Flags ---------------------------------------------------------------------------------


def test_a_flag_lands_in_the_adjudicators_queue_and_is_resolved(client: Client, annotator) -> None:
    table = TableFactory(id="psa--3--1")
    client.force_login(annotator)
    back = client.post(
        "/annotate/flags/new/",
        {"table": table.pk, "reason": "broken_table", "note": "", "next": "/annotate/"},
    )
    assert back.status_code == 302 and back["Location"] == "/annotate/"
    # A double click raises one flag.
    client.post("/annotate/flags/new/", {"table": table.pk, "reason": "broken_table"})
    assert Flag.objects.count() == 1
    assert client.get("/annotate/flags/").status_code == 403  # annotators raise, not resolve

    judge = UserFactory(role="adjudicator")
    client.force_login(judge)
    queue = client.get("/annotate/flags/").content.decode()
    assert "Broken table" in queue and "psa--3--1" in queue and "by ann" in queue
    assert "1 open" in client.get("/annotate/").content.decode()
    flag = Flag.objects.get()
    client.post(f"/annotate/flags/{flag.pk}/resolve/", {"resolution": "Re-extracted the table."})
    flag.refresh_from_db()
    assert flag.resolved_by == judge and flag.resolution == "Re-extracted the table."
    assert "No open flags." in client.get("/annotate/flags/").content.decode()


def test_a_flag_for_other_needs_a_note_and_the_return_address_stays_on_the_site(
    client: Client, annotator
) -> None:
    table = TableFactory(id="psa--3--1")
    client.force_login(annotator)
    refused = client.post(
        "/annotate/flags/new/", {"table": table.pk, "reason": "other"}, follow=True
    )
    assert refused.redirect_chain[-1][0] == "/tables/psa--3--1/#flag-box"
    assert (
        '<p class="field-error" id="flag-note-error" role="alert">Say what is wrong in the note.'
        in refused.content.decode()
    )
    assert not Flag.objects.exists()
    away = client.post(
        "/annotate/flags/new/",
        {
            "table": table.pk,
            "reason": "other",
            "note": "Totals off",
            "next": "https://evil.example/",
        },
    )
    assert away["Location"] == "/tables/psa--3--1/"


def test_a_flag_from_a_gold_slot_does_not_name_its_question(annotator, settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 100
    table = TableFactory()
    gold = ModelQuestionFactory(
        table=table, status="verified", in_gold_pool=True, gold_answer="{1}"
    )
    slot = services.verification_claim(annotator=annotator)
    assert slot.kind == "gold" and slot.question == gold
    question = selectors.flag_target_question(
        user=annotator, table=table, question_id="", slot_id=str(slot.public_id)
    )
    assert question is None
    regular = VerificationSlot.objects.filter(kind="regular").first()
    assert regular is None or regular.annotator != annotator


def test_researchers_cannot_flag(annotator) -> None:
    with pytest.raises(PermissionDenied):
        services.flag_raise(
            user=UserFactory(role="researcher"),
            table=TableFactory(),
            question=None,
            reason="broken_table",
            note="",
        )
