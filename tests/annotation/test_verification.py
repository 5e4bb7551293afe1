"""The two-annotator verification of model-generated questions: claims, leases, verdicts,
resolution, adjudication and gold control, at the service level."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.db import close_old_connections
from django.db.models import Count
from django.utils import timezone

from annotation.models import (
    DiscardedVerification,
    QuestionAuthoring,
    SlotKind,
    SlotStatus,
    VerificationOutcome,
    VerificationSlot,
    VerifierStanding,
)
from annotation.selectors import (
    adjudication_queue,
    slot_payload,
    verification_slot_held,
    verifier_progress,
)
from annotation.services import (
    Verdict,
    adjudication_decide,
    leases_release_expired,
    verification_claim,
    verification_release,
    verification_renew,
    verification_submit,
    verifier_reinstate,
)
from annotation.services import verification as verification_services
from dataset.models import Question
from plumbing.errors import ApplicationError, ConflictError
from tests.factories import ModelQuestionFactory, QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

GOOD = Verdict("good", answer_correct=True)
NONSENSE = Verdict("nonsensical", answer_correct=True)


@pytest.fixture(autouse=True)
def _no_gold(settings) -> None:
    # Gold mixing is tested on its own; elsewhere the stream is only regular slots, and gold
    # shows the gold answer unless a test asks for wrong ones.
    settings.VERIFICATION_GOLD_PERCENT = 0
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 0


def annotators(n: int) -> list:
    return [UserFactory(role="annotator") for _ in range(n)]


def verify(user, verdict: Verdict):
    slot = verification_claim(annotator=user)
    assert slot is not None
    return verification_submit(annotator=user, slot_id=slot.pk, verdict=verdict)


def test_two_good_verdicts_with_the_same_answer_verify_the_question() -> None:
    question = ModelQuestionFactory(gold_answer="{12}")
    a, b, c = annotators(3)
    first = verify(a, GOOD)
    assert first.question_status == "unverified"
    second = verify(b, Verdict("good", answer_correct=False, corrected_answer=" {12} "))
    assert second.question_status == "verified"
    outcome = VerificationOutcome.objects.get(question=question)
    assert (outcome.rating, outcome.answer_corrected) == ("good", False)
    # Both slots are used up: a third annotator has nothing to do.
    assert verification_claim(annotator=c) is None


def test_one_annotator_never_gets_both_slots_of_a_question() -> None:
    question = ModelQuestionFactory()
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    # Claiming again gives back the slot already held, not the question's other slot.
    assert verification_claim(annotator=a).pk == slot.pk
    verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD)
    assert verification_claim(annotator=a) is None
    assert VerificationSlot.objects.filter(question=question, status="open").count() == 1


def test_half_done_questions_are_finished_first() -> None:
    first, second = ModelQuestionFactory(), ModelQuestionFactory()
    a, b = annotators(2)
    slot = verification_claim(annotator=a)
    verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD)
    # b gets the other slot of a's question, not a fresh question.
    assert verification_claim(annotator=b).question_id == slot.question_id
    assert {first.pk, second.pk} >= {slot.question_id}


@pytest.mark.parametrize(
    ("verdict_a", "verdict_b"),
    [
        (GOOD, Verdict("ambiguous", True, rewritten_question="Which region has 12?")),
        (GOOD, Verdict("good", answer_correct=False, corrected_answer="{13}")),
        (GOOD, NONSENSE),
    ],
    ids=["rating", "answer", "nonsensical-vs-good"],
)
def test_any_disagreement_goes_to_adjudication(verdict_a: Verdict, verdict_b: Verdict) -> None:
    question = ModelQuestionFactory(gold_answer="{12}")
    a, b = annotators(2)
    verify(a, verdict_a)
    assert verify(b, verdict_b).question_status == "adjudication"
    assert not VerificationOutcome.objects.filter(question=question).exists()


def test_an_adjudicator_decides_but_not_on_a_question_they_verified() -> None:
    question = ModelQuestionFactory(gold_answer="{12}")
    a = UserFactory(role="annotator")
    judge_who_verified = UserFactory(role="adjudicator")
    verify(a, GOOD)
    verify(judge_who_verified, Verdict("good", False, corrected_answer="{13}"))
    with pytest.raises(PermissionDenied, match="You verified this question yourself"):
        adjudication_decide(
            adjudicator=judge_who_verified, question_id=question.pk, rating="good", answer="{13}"
        )
    with pytest.raises(PermissionDenied):
        adjudication_decide(adjudicator=a, question_id=question.pk, rating="good", answer="{13}")
    judge = UserFactory(role="adjudicator")
    with pytest.raises(ApplicationError, match="The answer"):
        adjudication_decide(adjudicator=judge, question_id=question.pk, rating="good", answer="{")
    adjudication_decide(adjudicator=judge, question_id=question.pk, rating="good", answer="{13}")
    question.refresh_from_db()
    assert (question.status, question.gold_answer) == ("verified", "{13}")
    outcome = VerificationOutcome.objects.get(question=question)
    assert outcome.answer_corrected and outcome.adjudicator == judge
    with pytest.raises(ConflictError, match="not waiting for adjudication"):
        adjudication_decide(adjudicator=judge, question_id=question.pk, rating="good", answer="{1}")


def test_nonsensical_questions_are_dropped_but_kept_for_the_statistics() -> None:
    question = ModelQuestionFactory()
    a, b = annotators(2)
    verify(a, NONSENSE)
    assert verify(b, NONSENSE).question_status == "dropped"
    assert Question.objects.filter(pk=question.pk, status="dropped").exists()
    assert VerificationOutcome.objects.get(question=question).rating == "nonsensical"


def test_an_ambiguous_question_is_verified_in_its_rewritten_form() -> None:
    question = ModelQuestionFactory(text="How many in it?", gold_answer="{12}")
    a, b = annotators(2)
    rewrite = Verdict("ambiguous", True, rewritten_question="How many men live  in the North?")
    verify(a, rewrite)
    assert verify(b, rewrite).question_status == "verified"
    question.refresh_from_db()
    assert question.text == "How many men live in the North?"
    outcome = VerificationOutcome.objects.get(question=question)
    assert (outcome.rating, outcome.original_text) == ("ambiguous", "How many in it?")


def test_two_rewrites_in_other_words_are_no_disagreement() -> None:
    question = ModelQuestionFactory(text="How many in it?", gold_answer="{12}")
    a, b = annotators(2)
    verify(a, Verdict("ambiguous", True, rewritten_question="How many men live in the North?"))
    second = Verdict("ambiguous", True, rewritten_question="What is the North's male population?")
    assert verify(b, second).question_status == "verified"
    question.refresh_from_db()
    assert question.text == "How many men live in the North?"  # the earlier rewrite
    # A different answer is a disagreement, rewrites or not.
    other = ModelQuestionFactory(gold_answer="{12}")
    verify(a, Verdict("ambiguous", True, rewritten_question="Which one?"))
    late = Verdict("ambiguous", False, corrected_answer="{13}", rewritten_question="Which one?")
    assert verify(b, late).question_status == "adjudication"
    assert Question.objects.get(pk=other.pk).status == "adjudication"


@pytest.mark.parametrize(
    ("verdict", "field"),
    [
        (Verdict("maybe", True), "rating"),
        (Verdict("ambiguous", True), "rewritten_question"),
        (Verdict("good", False, corrected_answer="{unclosed"), "corrected_answer"),
        (Verdict("good", False, corrected_answer=""), "corrected_answer"),
    ],
)
def test_a_bad_verdict_is_refused_and_the_slot_stays_leased(verdict: Verdict, field: str) -> None:
    ModelQuestionFactory()
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    with pytest.raises(ApplicationError) as error:
        verification_submit(annotator=a, slot_id=slot.pk, verdict=verdict)
    assert error.value.field == field
    slot.refresh_from_db()
    assert (slot.status, slot.rating) == ("leased", "")


def test_a_repeated_submit_is_harmless_and_a_foreign_slot_is_refused() -> None:
    ModelQuestionFactory()
    a, b = annotators(2)
    slot = verification_claim(annotator=a)
    verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD)
    again = verification_submit(annotator=a, slot_id=slot.pk, verdict=NONSENSE)
    assert again.slot.rating == "good"  # the first verdict stands
    with pytest.raises(ConflictError):
        verification_submit(annotator=b, slot_id=slot.pk, verdict=GOOD)


def test_only_annotators_verify() -> None:
    researcher = UserFactory(role="researcher")
    with pytest.raises(PermissionDenied):
        verification_claim(annotator=researcher)


# --- Leases ---------------------------------------------------------------------------------


def expire(slot: VerificationSlot) -> None:
    VerificationSlot.objects.filter(pk=slot.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )


def test_renewal_extends_the_lease() -> None:
    ModelQuestionFactory()
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    VerificationSlot.objects.filter(pk=slot.pk).update(
        lease_expires_at=timezone.now() + timedelta(seconds=5)
    )
    expires = verification_renew(annotator=a, slot_id=slot.pk)
    assert expires > timezone.now() + timedelta(seconds=200)
    slot.refresh_from_db()
    assert slot.lease_expires_at == expires


def test_an_expired_lease_goes_to_the_next_annotator_and_the_first_loses_it() -> None:
    question = ModelQuestionFactory()
    a, b = annotators(2)
    slot = verification_claim(annotator=a)
    expire(slot)
    taken = verification_claim(annotator=b)
    # b may get either slot of the question; a's expired one is free to take.
    assert taken.question_id == question.pk
    if taken.pk == slot.pk:
        with pytest.raises(ConflictError, match="no longer yours"):
            verification_renew(annotator=a, slot_id=slot.pk)
        with pytest.raises(ConflictError):
            verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD)


def test_a_late_submit_on_an_expired_but_untaken_lease_still_counts() -> None:
    ModelQuestionFactory()
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    expire(slot)
    assert verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD).slot.status == "done"


def test_the_sweep_reopens_expired_leases_and_leaves_live_ones() -> None:
    ModelQuestionFactory(), ModelQuestionFactory()
    a, b = annotators(2)
    stale = verification_claim(annotator=a)
    live = verification_claim(annotator=b)
    expire(stale)
    assert leases_release_expired() == 1
    stale.refresh_from_db()
    live.refresh_from_db()
    assert (stale.status, stale.annotator_id) == ("open", None)
    assert live.status == "leased"


def test_releasing_gives_the_slot_back() -> None:
    ModelQuestionFactory()
    a, b = annotators(2)
    slot = verification_claim(annotator=a)
    verification_release(annotator=a, slot_id=slot.pk)
    assert VerificationSlot.objects.filter(status="open").count() == 2
    assert verification_claim(annotator=b) is not None


# --- Gold control ---------------------------------------------------------------------------


@pytest.fixture
def gold_questions() -> list[Question]:
    table = TableFactory()
    return [
        QuestionFactory(table=table, gold_answer=f"{{{n}}}", in_gold_pool=True) for n in range(6)
    ]


def serve_gold(settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 100


def test_gold_is_mixed_in_at_the_configured_share(settings, gold_questions) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 25
    for _ in range(8):  # enough that the regular stream never runs dry
        ModelQuestionFactory()
    (a,) = annotators(1)
    kinds = []
    for _ in range(8):
        slot = verification_claim(annotator=a)
        kinds.append(slot.kind)
        verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD)
    assert set(kinds) <= {"gold", "regular"} and "regular" in kinds
    # At random, at the configured share: no rhythm to count.
    draws = sum(verification_services._gold_due() for _ in range(4000))
    assert 900 <= draws <= 1100
    settings.VERIFICATION_GOLD_PERCENT = 0
    assert not any(verification_services._gold_due() for _ in range(200))


def test_gold_is_never_the_verifiers_own_question_nor_an_unparsable_answer(settings) -> None:
    serve_gold(settings)
    ModelQuestionFactory()
    (a,) = annotators(1)
    table = TableFactory()
    own = QuestionFactory(table=table, gold_answer="{3}", in_gold_pool=True)
    QuestionAuthoring.objects.create(question=own, annotator=a, client_key=uuid.uuid4())
    # The pool refuses unparsable answers; one that got in some other way is skipped too.
    QuestionFactory(table=table, gold_answer="not in the gold format", in_gold_pool=True)
    # Neither can be gold for this annotator: the regular stream continues.
    assert verification_claim(annotator=a).kind == "regular"
    (b,) = annotators(1)
    slot = verification_claim(annotator=b)
    assert slot.kind == "gold" and slot.question == own


def test_an_unparsable_gold_answer_drawn_first_never_hides_a_good_one(
    settings, monkeypatch
) -> None:
    serve_gold(settings)
    table = TableFactory()
    # First in the pool's order, and drawn first: each draw takes the lowest offset.
    QuestionFactory(
        id=f"{table.id}--A0", table=table, gold_answer="not in the gold format", in_gold_pool=True
    )
    good = QuestionFactory(id=f"{table.id}--M0", table=table, gold_answer="{3}", in_gold_pool=True)
    monkeypatch.setattr(verification_services.secrets, "randbelow", lambda n: 0)
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    assert slot.kind == "gold" and slot.question == good


def test_passing_gold_keeps_the_annotator_in_the_pool(settings, gold_questions) -> None:
    serve_gold(settings)
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    assert slot.kind == SlotKind.GOLD
    gold = slot.question.gold_answer
    # Re-typing the right answer as a "correction" is not flagging it as wrong.
    result = verification_submit(
        annotator=a, slot_id=slot.pk, verdict=Verdict("good", False, corrected_answer=gold)
    )
    assert result.slot.gold_passed and not result.removed_from_pool


def test_one_nonsensical_gold_is_tolerated_and_the_second_removes(settings, gold_questions) -> None:
    serve_gold(settings)
    (a,) = annotators(1)
    first = verify(a, NONSENSE)
    assert not first.removed_from_pool and first.slot.gold_passed is False
    assert verify(a, NONSENSE).removed_from_pool
    with pytest.raises(PermissionDenied, match="left the verification pool"):
        verification_claim(annotator=a)


def test_removal_releases_leases_and_requeues_past_verdicts(settings, gold_questions) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    decided, pending, held = (ModelQuestionFactory(gold_answer="{1}") for _ in range(3))
    bad, good = annotators(2)
    # bad verifies two questions (one of them decided together with good) and holds a third.
    for question in (decided, pending):
        slot = VerificationSlot.objects.filter(question=question, slot_number=1).get()
        VerificationSlot.objects.filter(pk=slot.pk).update(
            status="leased", annotator=bad, lease_expires_at=timezone.now() + timedelta(minutes=5)
        )
        verification_submit(annotator=bad, slot_id=slot.pk, verdict=GOOD)
    other = VerificationSlot.objects.get(question=decided, slot_number=2)
    VerificationSlot.objects.filter(pk=other.pk).update(
        status="leased", annotator=good, lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    verification_submit(annotator=good, slot_id=other.pk, verdict=GOOD)
    assert Question.objects.get(pk=decided.pk).status == "verified"
    VerificationSlot.objects.filter(question=held, slot_number=1).update(
        status="leased", annotator=bad, lease_expires_at=timezone.now() + timedelta(minutes=5)
    )

    # Then fails a gold question by flagging its correct answer as wrong.
    serve_gold(settings)
    slot = verification_claim(annotator=bad)
    assert slot.question_id == held.pk  # the held lease comes first
    verification_release(annotator=bad, slot_id=slot.pk)
    gold = verification_claim(annotator=bad)
    assert gold.kind == "gold"
    result = verification_submit(
        annotator=bad, slot_id=gold.pk, verdict=Verdict("good", False, corrected_answer="{999}")
    )
    assert result.removed_from_pool

    standing = VerifierStanding.objects.get(user=bad)
    assert standing.removed_at and "flagged 1 correct gold answer as wrong" in standing.reason
    assert not VerificationSlot.objects.filter(annotator=bad, kind="regular").exists()
    assert DiscardedVerification.objects.filter(annotator=bad).count() == 2
    # The decided question is undecided again, with one verdict (good's) still standing.
    decided.refresh_from_db()
    assert decided.status == "unverified"
    assert not VerificationOutcome.objects.filter(question=decided).exists()
    assert VerificationSlot.objects.filter(question=decided, status="done").count() == 1
    # Other annotators now pick the re-queued work up.
    settings.VERIFICATION_GOLD_PERCENT = 0
    newcomer = UserFactory(role="annotator")
    assert verification_claim(annotator=newcomer).question_id == decided.pk

    # An admin can put the annotator back.
    admin = UserFactory(role="admin")
    verifier_reinstate(admin=admin, user=bad)
    assert verification_claim(annotator=bad) is not None


def test_gold_never_comes_from_the_test_split(settings) -> None:
    serve_gold(settings)
    QuestionFactory(table=TableFactory(split="test"), in_gold_pool=True)
    ModelQuestionFactory()
    (a,) = annotators(1)
    assert verification_claim(annotator=a).kind == "regular"


def test_gold_comes_only_from_the_pool_and_an_empty_pool_serves_none(settings) -> None:
    serve_gold(settings)
    ModelQuestionFactory()
    # Verified human-written questions outside the pool are public: never gold.
    QuestionFactory(gold_answer="{1}")
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    assert slot.kind == "regular"
    verification_release(annotator=a, slot_id=slot.pk)
    pooled = QuestionFactory(gold_answer="{2}", in_gold_pool=True)
    slot = verification_claim(annotator=a)
    assert (slot.kind, slot.question_id) == ("gold", pooled.pk)


def test_gold_is_never_a_question_the_verifier_verified_or_adjudicated(settings) -> None:
    question = ModelQuestionFactory(gold_answer="{4}")
    a, b, c = annotators(3)
    verify(a, GOOD)
    verify(b, GOOD)
    Question.objects.filter(pk=question.pk).update(in_gold_pool=True)
    serve_gold(settings)
    ModelQuestionFactory()
    # a and b know its answer: they get the regular stream; c gets it as gold.
    assert verification_claim(annotator=a).kind == "regular"
    assert verification_claim(annotator=c).question_id == question.pk


# --- Deliberately wrong gold answers ---------------------------------------------------------


def wrong_gold(settings) -> None:
    serve_gold(settings)
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 100


def test_a_wrong_gold_answer_is_shown_and_recorded(settings, gold_questions) -> None:
    wrong_gold(settings)
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    gold = slot.question.gold_answer
    assert slot.gold_shown_wrong is True
    assert slot.gold_shown_answer != gold
    # What the verifier is served is the wrong answer, and only that.
    payload = slot_payload(slot)
    assert payload["proposed_answer"] == slot.gold_shown_answer
    assert gold not in str(payload)


def test_the_share_of_wrong_gold_answers_follows_the_setting(settings, gold_questions) -> None:
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 30
    question = Question.objects.select_related("table").get(pk=gold_questions[0].pk)
    wrong = sum(verification_services._shown_answer(question)[1] for _ in range(3000))
    assert 750 <= wrong <= 1050
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 0
    assert verification_services._shown_answer(question) == (question.gold_answer, False)


@pytest.mark.parametrize(
    "verdict",
    [
        Verdict("good", answer_correct=True),
        Verdict("ambiguous", True, rewritten_question="Which one?"),
        # "Correcting" it to the very answer shown is accepting it.
        "shown",
    ],
    ids=["right", "ambiguous-but-right", "corrected-to-itself"],
)
def test_an_annotator_who_accepts_a_wrong_gold_answer_is_removed(
    settings, gold_questions, verdict
) -> None:
    wrong_gold(settings)
    ModelQuestionFactory()
    (a,) = annotators(1)
    slot = verification_claim(annotator=a)
    if verdict == "shown":
        verdict = Verdict("good", False, corrected_answer=slot.gold_shown_answer)
    result = verification_submit(annotator=a, slot_id=slot.pk, verdict=verdict)
    assert result.slot.gold_passed is False and result.removed_from_pool
    reason = VerifierStanding.objects.get(user=a).reason
    assert reason == "accepted 1 deliberately wrong gold answer as right"
    with pytest.raises(PermissionDenied, match="left the verification pool"):
        verification_claim(annotator=a)


def test_flagging_a_wrong_gold_answer_passes_and_the_threshold_is_configurable(
    settings, gold_questions
) -> None:
    wrong_gold(settings)
    careful, lenient = annotators(2)
    slot = verification_claim(annotator=careful)
    gold = slot.question.gold_answer
    result = verification_submit(
        annotator=careful, slot_id=slot.pk, verdict=Verdict("good", False, corrected_answer=gold)
    )
    assert result.slot.gold_passed and not result.removed_from_pool
    # One accepted wrong answer tolerated, the second removes.
    settings.GOLD_MAX_WRONG_ANSWERS_ACCEPTED = 1
    assert not verify(lenient, GOOD).removed_from_pool
    assert verify(lenient, GOOD).removed_from_pool


def test_a_pool_question_undecided_by_a_removal_leaves_the_pool(settings) -> None:
    question = ModelQuestionFactory(gold_answer="{4}")
    a, b = annotators(2)
    verify(a, GOOD)
    verify(b, GOOD)
    Question.objects.filter(pk=question.pk).update(in_gold_pool=True)
    verification_services.verifier_remove(user=a, reason="test")
    question.refresh_from_db()
    assert (question.status, question.in_gold_pool) == ("unverified", False)


# --- Test-split questions: admins only -------------------------------------------------------


def test_test_split_questions_are_verified_by_admins_only() -> None:
    held_out = ModelQuestionFactory(table=TableFactory(split="test"), gold_answer="{7}")
    (a,) = annotators(1)
    judge = UserFactory(role="adjudicator")
    # Never offered to annotators or adjudicators, nor counted for them.
    assert verification_claim(annotator=a) is None
    assert verification_claim(annotator=judge) is None
    assert verifier_progress(annotator=a).open_slots == 0
    first, second = UserFactory(role="admin"), UserFactory(role="admin")
    assert verifier_progress(annotator=first).open_slots == 2
    verify(first, GOOD)
    assert verify(second, Verdict("good", False, corrected_answer="{8}")).question_status == (
        "adjudication"
    )
    # Adjudicating it is for admins too.
    assert adjudication_queue(adjudicator=judge) == (0, [])
    with pytest.raises(PermissionDenied, match="admins only"):
        adjudication_decide(adjudicator=judge, question_id=held_out.pk, rating="good", answer="{8}")
    third = UserFactory(role="admin")
    assert adjudication_queue(adjudicator=third)[0] == 1
    adjudication_decide(adjudicator=third, question_id=held_out.pk, rating="good", answer="{8}")
    assert Question.objects.get(pk=held_out.pk).status == "verified"


def test_a_test_split_slot_an_annotator_somehow_holds_is_never_served_or_accepted() -> None:
    held_out = ModelQuestionFactory(table=TableFactory(split="test"))
    (a,) = annotators(1)
    slot = VerificationSlot.objects.filter(question=held_out, slot_number=1).get()
    VerificationSlot.objects.filter(pk=slot.pk).update(
        status="leased", annotator=a, lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    assert verification_claim(annotator=a) is None
    assert verification_slot_held(annotator=a, slot_id=slot.pk) is None
    with pytest.raises(PermissionDenied, match="admins only"):
        verification_submit(annotator=a, slot_id=slot.pk, verdict=GOOD)
    slot.refresh_from_db()
    assert slot.status == "leased" and slot.rating == ""


# --- Concurrency ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_many_annotators_claiming_at_once_never_share_a_slot(settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    for _ in range(6):
        ModelQuestionFactory()
    people = annotators(20)  # twenty threads at once, as the platform must hold
    start = threading.Barrier(len(people))
    claimed: dict[int, int | None] = {}
    errors: list[BaseException] = []

    def work(user) -> None:
        try:
            start.wait()
            slot = verification_claim(annotator=user)
            claimed[user.pk] = slot.pk if slot else None
            if slot:
                verification_submit(annotator=user, slot_id=slot.pk, verdict=GOOD)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=work, args=(u,)) for u in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    taken = [s for s in claimed.values() if s is not None]
    assert len(taken) == len(set(taken))
    assert len(taken) == 12  # six questions, two slots each, twenty people
    per_question = VerificationSlot.objects.values("question").annotate(n=Count("annotator"))
    assert {row["n"] for row in per_question} == {2}
    assert VerificationSlot.objects.filter(status=SlotStatus.DONE).count() == 12
    assert Question.objects.filter(status="verified").count() == 6
