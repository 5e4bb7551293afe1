"""The two-annotator verification of model-generated questions.

Slots are leased one at a time: a claim takes an open slot (or one whose lease ran out) with
SELECT … FOR UPDATE SKIP LOCKED on PostgreSQL, so two annotators never get the same slot and
nobody waits on a lock; a submit is a conditional update on "leased to me", so a verdict is
recorded once and never overwritten. Questions get their two slots when they are created.

Questions on test-split tables (generated only with GENERATION_ALLOW_TEST_SPLIT) are verified
and adjudicated by admins only: their proposed answers would be held-out gold once verified.
Gold control draws from the private gold pool (``services.gold_pool``), and a share of it is
shown with a deliberately wrong answer (``hctqa.core.gold_control``).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from annotation import permissions as rules
from annotation.models import (
    DiscardedVerification,
    QuestionAuthoring,
    Rating,
    SlotKind,
    SlotStatus,
    VerificationOutcome,
    VerificationSlot,
    VerifierStanding,
)
from annotation.selectors.verification import (
    may_verify_test_split,
    outside_test_split,
    pool_removal,
    verdict_change_allowed,
)
from dataset.models import Question, QuestionStatus, Split, Table
from hctqa.core.answers import AnswerFormatError, canonical_answer
from hctqa.core.gold_control import wrong_answer
from hctqa.core.tables import TableFormatError, parse_table
from plumbing.errors import ApplicationError, ConflictError, Forbidden

# The gold stream's coins and picks must not be predictable from outside.
_rng = random.SystemRandom()


def _lease() -> timedelta:
    return timedelta(seconds=settings.VERIFICATION_LEASE_SECONDS)


def _check_verifier(user: Any) -> None:
    """An annotator who verifies, and has not been taken out of the pool."""
    rules.VERIFYING.check(user)
    removal = pool_removal(annotator=user)
    if removal is not None:
        raise Forbidden(removal.message, hint=removal.hint)


def verification_slots_open(*, questions: list[Question]) -> int:
    """Two open slots for each question (call inside the transaction creating them)."""
    slots = [
        VerificationSlot(question=q, kind=SlotKind.REGULAR, slot_number=n)
        for q in questions
        for n in (1, 2)
    ]
    VerificationSlot.objects.bulk_create(slots, ignore_conflicts=True)
    return len(slots)


def _claimable(now: datetime) -> Q:
    return Q(status=SlotStatus.OPEN) | Q(status=SlotStatus.LEASED, lease_expires_at__lt=now)


def _take(slot_id: int, annotator: Any, now: datetime) -> bool:
    """Lease the slot if it is still free; True when it is now ours."""
    return bool(
        VerificationSlot.objects.filter(_claimable(now), pk=slot_id).update(
            status=SlotStatus.LEASED,
            annotator=annotator,
            leased_at=now,
            lease_expires_at=now + _lease(),
        )
    )


def _gold_due() -> bool:
    """A coin weighted to the configured gold share, tossed at every claim: a fixed rhythm
    (every tenth item) would let a verifier count their way to the gold."""
    percent = settings.VERIFICATION_GOLD_PERCENT
    return percent > 0 and secrets.randbelow(100) < percent


# A few random picks find a usable gold question; the pool refuses unparsable answers anyway.
_GOLD_PICKS = 5


def gold_candidates(*, annotator: Any) -> QuerySet[Question]:
    """Pool questions this annotator may be served as gold: never from the test split (gold
    shows its answer), never one they wrote, verified, adjudicated or were served before,
    which would test nothing."""
    theirs = (
        Exists(QuestionAuthoring.objects.filter(question=OuterRef("pk"), annotator=annotator))
        | Exists(VerificationSlot.objects.filter(question=OuterRef("pk"), annotator=annotator))
        | Exists(VerificationOutcome.objects.filter(question=OuterRef("pk"), adjudicator=annotator))
        | Exists(DiscardedVerification.objects.filter(question=OuterRef("pk"), annotator=annotator))
    )
    return (
        Question.objects.filter(in_gold_pool=True, status=QuestionStatus.VERIFIED)
        .exclude(table__split=Split.TEST)
        .exclude(theirs)
        .order_by("pk")
    )


def _shown_answer(question: Question) -> tuple[str, bool]:
    """The answer a gold slot proposes, and whether it is the deliberately wrong one.
    Raises AnswerFormatError for a gold answer that does not parse."""
    gold = canonical_answer(question.gold_answer)
    if secrets.randbelow(100) >= settings.VERIFICATION_GOLD_WRONG_PERCENT:
        return gold, False
    # The table is read only for a wrong answer, which draws from its cells.
    csv = Table.objects.filter(pk=question.table_id).values_list("canonical_csv", flat=True)
    try:
        cells = [cell.text for cell in parse_table(csv.first() or "").cells]
    except TableFormatError:
        cells = []  # a number with another digit, or the other of Yes/No, still does
    return wrong_answer(gold, cells, _rng), True


def _claim_gold(annotator: Any, now: datetime) -> VerificationSlot | None:
    candidates = gold_candidates(annotator=annotator)
    count = candidates.count()
    if not count:
        return None  # an empty pool serves no gold
    for _ in range(_GOLD_PICKS):
        if not count:
            return None
        # A random offset into a stable order: cheaper than ORDER BY random() on every claim.
        question = candidates.only("pk", "gold_answer", "table_id")[secrets.randbelow(count)]
        try:
            shown, wrong = _shown_answer(question)
        except AnswerFormatError:
            # A gold answer the editor cannot even show as right is no fair test; the next
            # pick is among the others, so one bad answer cannot hide the good ones.
            candidates = candidates.exclude(pk=question.pk)
            count -= 1
            continue
        try:
            with transaction.atomic():
                return VerificationSlot.objects.create(
                    question_id=question.pk,
                    kind=SlotKind.GOLD,
                    annotator=annotator,
                    status=SlotStatus.LEASED,
                    leased_at=now,
                    lease_expires_at=now + _lease(),
                    gold_shown_answer=shown,
                    gold_shown_wrong=wrong,
                )
        except IntegrityError:
            return None
    return None


def _claim_regular(
    annotator: Any, now: datetime, avoid: Sequence[str] = ()
) -> VerificationSlot | None:
    mine = VerificationSlot.objects.filter(question=OuterRef("question"), annotator=annotator)
    sibling_done = VerificationSlot.objects.filter(
        question=OuterRef("question"), kind=SlotKind.REGULAR, status=SlotStatus.DONE
    )
    claimable = (
        VerificationSlot.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(
            _claimable(now),
            outside_test_split(annotator),
            kind=SlotKind.REGULAR,
            question__status=QuestionStatus.UNVERIFIED,
        )
        .exclude(Exists(mine))
        .exclude(question_id__in=list(avoid))
        .order_by("pk")
    )
    # Finish questions that already have one verdict before starting new ones. Two plain
    # queries in primary-key order stop at the first free row, where one sorted query would
    # look at every open slot.
    for candidates in (claimable.filter(Exists(sibling_done)), claimable):
        for _ in range(3):
            with transaction.atomic():
                slot = candidates.first()
                if slot is None:
                    break
                try:
                    with transaction.atomic():
                        if _take(slot.pk, annotator, now):
                            slot.refresh_from_db()
                            return slot
                except IntegrityError:
                    # Our other tab took this question's other slot meanwhile; look again.
                    continue
    return None


def verification_claim(
    *, annotator: Any, avoid_questions: Sequence[str] = ()
) -> VerificationSlot | None:
    """The slot this annotator should verify now: the one they already hold, else gold when
    it is due, else an open one, preferring questions they have not just skipped. None when
    there is nothing to verify."""
    _check_verifier(annotator)
    now = timezone.now()
    held = (
        VerificationSlot.objects.filter(
            outside_test_split(annotator), annotator=annotator, status=SlotStatus.LEASED
        )
        .order_by("leased_at")
        .first()
    )
    if held is not None:
        VerificationSlot.objects.filter(
            pk=held.pk, annotator=annotator, status=SlotStatus.LEASED
        ).update(lease_expires_at=now + _lease())
        held.refresh_from_db()
        return held
    if _gold_due():
        gold = _claim_gold(annotator, now)
        if gold is not None:
            return gold
    if avoid_questions:
        slot = _claim_regular(annotator, now, avoid_questions)
        if slot is not None:
            return slot
    return _claim_regular(annotator, now)


def verification_renew(*, annotator: Any, slot_id: int) -> datetime:
    """Extend the lease while the page is open. Refused (409) when the slot went to someone
    else after the lease ran out."""
    now = timezone.now()
    expires = now + _lease()
    renewed = VerificationSlot.objects.filter(
        pk=slot_id, annotator=annotator, status=SlotStatus.LEASED
    ).update(lease_expires_at=expires)
    if not renewed:
        raise ConflictError(
            "This question is no longer yours: the lease ran out and it went to someone else",
            current={"slot": slot_id},
        )
    return expires


def verification_release(*, annotator: Any, slot_id: int) -> None:
    """Give a slot back (skip). A gold slot is simply forgotten."""
    with transaction.atomic():
        slot = (
            VerificationSlot.objects.select_for_update()
            .filter(pk=slot_id, annotator=annotator, status=SlotStatus.LEASED)
            .first()
        )
        if slot is None:
            return
        if slot.kind == SlotKind.GOLD:
            slot.delete()
        else:
            _reopen(VerificationSlot.objects.filter(pk=slot.pk))


def _reopen(slots: QuerySet[VerificationSlot]) -> int:
    return slots.update(
        status=SlotStatus.OPEN,
        annotator=None,
        leased_at=None,
        lease_expires_at=None,
        rating="",
        answer_correct=None,
        corrected_answer="",
        rewritten_question="",
        gold_passed=None,
        submitted_at=None,
        seconds_spent=0,
    )


def leases_release_expired(*, now: datetime | None = None) -> int:
    """Reopen slots whose lease ran out (claims take those anyway; this keeps counts honest)."""
    now = now or timezone.now()
    expired = VerificationSlot.objects.filter(status=SlotStatus.LEASED, lease_expires_at__lt=now)
    VerificationSlot.objects.filter(pk__in=expired.filter(kind=SlotKind.GOLD).values("pk")).delete()
    return _reopen(expired.filter(kind=SlotKind.REGULAR))


def _answer_key(text: str) -> str:
    try:
        return canonical_answer(text)
    except AnswerFormatError:
        return " ".join(text.split())


@dataclass(frozen=True)
class Verdict:
    rating: str
    answer_correct: bool
    corrected_answer: str = ""
    rewritten_question: str = ""


def _checked(verdict: Verdict) -> Verdict:
    if verdict.rating not in Rating.values:
        raise ApplicationError(f"Rate the question {', '.join(Rating.values)}", field="rating")
    corrected = ""
    if verdict.rating != Rating.NONSENSICAL and not verdict.answer_correct:
        try:
            corrected = canonical_answer(verdict.corrected_answer)
        except AnswerFormatError as exc:
            raise ApplicationError(
                f"The corrected answer: {exc}", field="corrected_answer"
            ) from None
    rewrite = " ".join(verdict.rewritten_question.split())
    if verdict.rating == Rating.AMBIGUOUS and not rewrite:
        raise ApplicationError(
            "An ambiguous question needs its rewrite", field="rewritten_question"
        )
    if verdict.rating != Rating.AMBIGUOUS:
        rewrite = ""
    return Verdict(
        verdict.rating,
        verdict.answer_correct or verdict.rating == Rating.NONSENSICAL,
        corrected,
        rewrite,
    )


@dataclass(frozen=True)
class SubmitResult:
    slot: VerificationSlot
    question_status: str
    removed_from_pool: bool = False


@transaction.atomic
def verification_submit(
    *, annotator: Any, slot_id: int, verdict: Verdict, elapsed_ms: int = 0
) -> SubmitResult:
    """Record a verdict on a leased slot. Sending the same verdict again is harmless; a slot
    that went to someone else is refused (409)."""
    _check_verifier(annotator)
    verdict = _checked(verdict)
    now = timezone.now()
    slot = VerificationSlot.objects.select_for_update().filter(pk=slot_id).first()
    if slot is None or slot.annotator_id != annotator.pk:
        raise ConflictError("This question is no longer yours", current={"slot": slot_id})
    if slot.status == SlotStatus.DONE:
        return SubmitResult(slot, slot.question.status)  # a retried request
    question = Question.objects.select_for_update().get(pk=slot.question_id)
    if not may_verify_test_split(annotator) and _on_test_split(question):
        raise PermissionDenied("Test-split questions are verified by admins only")
    slot.status = SlotStatus.DONE
    slot.rating = verdict.rating
    slot.answer_correct = verdict.answer_correct
    slot.corrected_answer = verdict.corrected_answer
    slot.rewritten_question = verdict.rewritten_question
    slot.submitted_at = now
    slot.lease_expires_at = None
    slot.seconds_spent = max(0, min(int(elapsed_ms), 3_600_000)) // 1000
    removed = False
    if slot.kind == SlotKind.GOLD:
        slot.gold_passed = _gold_passed(slot, verdict, question)
        slot.save()
        removed = _check_gold_standing(annotator)
    else:
        slot.save()
        _resolve_if_complete(question, now)  # updates ``question`` in place
    return SubmitResult(slot, question.status, removed)


@transaction.atomic
def verification_change(
    *, annotator: Any, slot_id: int, verdict: Verdict, base_submitted_at: str
) -> VerificationSlot:
    """Change a verdict already given, while that is still allowed. ``base_submitted_at``
    (when the verdict being changed was given) is its version: a change from a stale page
    is refused (409), so is one after the question was decided."""
    _check_verifier(annotator)
    verdict = _checked(verdict)
    slot = (
        VerificationSlot.objects.select_for_update()
        .filter(pk=slot_id, annotator=annotator, status=SlotStatus.DONE)
        .first()
    )
    if slot is None:
        raise ApplicationError("You have given no verdict on this question", field="slot")
    slot.question = Question.objects.select_for_update().get(pk=slot.question_id)
    current = {
        "submitted_at": slot.submitted_at.isoformat(),
        "rating": slot.rating,
        "question_status": slot.question.status,
    }
    if not verdict_change_allowed(slot):
        raise ConflictError(
            "This verdict can no longer be changed: the question has been decided", current=current
        )
    if base_submitted_at != current["submitted_at"]:
        raise ConflictError(
            "This verdict was changed in another tab or window since you opened it",
            current=current,
        )
    slot.rating = verdict.rating
    slot.answer_correct = verdict.answer_correct
    slot.corrected_answer = verdict.corrected_answer
    slot.rewritten_question = verdict.rewritten_question
    slot.submitted_at = timezone.now()
    slot.save(
        update_fields=[
            "rating",
            "answer_correct",
            "corrected_answer",
            "rewritten_question",
            "submitted_at",
        ]
    )
    return slot


def _gold_passed(slot: VerificationSlot, verdict: Verdict, question: Question) -> bool:
    """Graded against what the slot showed: a right answer must not be flagged as wrong (a
    "correction" to the same answer is no flag), a deliberately wrong one must be (a
    "correction" to the same wrong answer is accepting it). Nonsensical always fails."""
    if verdict.rating == Rating.NONSENSICAL:
        return False
    corrected = _answer_key(verdict.corrected_answer) if not verdict.answer_correct else None
    if slot.gold_shown_wrong:
        return corrected is not None and corrected != _answer_key(slot.gold_shown_answer)
    return corrected is None or corrected == _answer_key(question.gold_answer)


def _on_test_split(question: Question) -> bool:
    return Table.objects.filter(pk=question.table_id, split=Split.TEST).exists()


def _final_answer(question: Question, slot: VerificationSlot) -> str:
    return slot.corrected_answer if not slot.answer_correct else _answer_key(question.gold_answer)


def _decide(
    question: Question, rating: str, answer: str, text: str, now: datetime, adjudicator: Any = None
) -> None:
    VerificationOutcome.objects.update_or_create(
        question=question,
        defaults={
            "rating": rating,
            "answer_corrected": answer != _answer_key(question.gold_answer),
            "original_text": question.text,
            "original_answer": question.gold_answer,
            "adjudicator": adjudicator,
            "decided_at": now,
        },
    )
    if rating == Rating.NONSENSICAL:
        question.status = QuestionStatus.DROPPED
    else:
        question.status = QuestionStatus.VERIFIED
        question.gold_answer = answer
        if rating == Rating.AMBIGUOUS:
            question.text = text
    question.save(update_fields=["status", "gold_answer", "text", "updated_at"])


def _resolve_if_complete(question: Question, now: datetime) -> None:
    """With both verdicts in: agreement decides, disagreement goes to an adjudicator."""
    done = list(
        VerificationSlot.objects.filter(
            question=question, kind=SlotKind.REGULAR, status=SlotStatus.DONE
        )
    )
    if len(done) < 2 or question.status != QuestionStatus.UNVERIFIED:
        return
    # The earlier verdict first: when both rewrote an ambiguous question, its rewrite is kept.
    a, b = sorted(done, key=lambda slot: (slot.submitted_at, slot.pk))
    same_rating = a.rating == b.rating
    if same_rating and a.rating == Rating.NONSENSICAL:
        _decide(question, Rating.NONSENSICAL, question.gold_answer, question.text, now)
    elif same_rating and _final_answer(question, a) == _final_answer(question, b):
        # Two rewrites in different words are not a disagreement in rating or answer; both
        # stay on their slots for the record.
        _decide(question, a.rating, _final_answer(question, a), a.rewritten_question, now)
    else:
        question.status = QuestionStatus.ADJUDICATION
        question.save(update_fields=["status", "updated_at"])


@transaction.atomic
def adjudication_decide(
    *, adjudicator: Any, question_id: str, rating: str, answer: str, text: str = ""
) -> Question:
    """A third annotator's decision on a question the two verifiers disagreed on."""
    rules.ADJUDICATING.check(adjudicator)
    question = Question.objects.select_for_update().filter(pk=question_id).first()
    if question is None:
        raise ApplicationError(f"No question {question_id}")
    if not may_verify_test_split(adjudicator) and _on_test_split(question):
        raise PermissionDenied("Test-split questions are adjudicated by admins only")
    if question.status != QuestionStatus.ADJUDICATION:
        raise ConflictError(
            "This question is not waiting for adjudication (someone decided it already)",
            current={"status": question.status},
        )
    if VerificationSlot.objects.filter(question=question, annotator=adjudicator).exists():
        raise PermissionDenied("You verified this question yourself: another adjudicator decides")
    if rating not in Rating.values:
        raise ApplicationError(f"Rate the question {', '.join(Rating.values)}", field="rating")
    final_answer = question.gold_answer
    if rating != Rating.NONSENSICAL:
        try:
            final_answer = canonical_answer(answer)
        except AnswerFormatError as exc:
            raise ApplicationError(f"The answer: {exc}", field="answer") from None
    final_text = " ".join(text.split())
    if rating == Rating.AMBIGUOUS and not final_text:
        raise ApplicationError("Give the rewritten question", field="text")
    _decide(question, rating, final_answer, final_text, timezone.now(), adjudicator=adjudicator)
    return question


# --- Gold control --------------------------------------------------------------------------


def _check_gold_standing(annotator: Any) -> bool:
    gold = VerificationSlot.objects.filter(
        annotator=annotator, kind=SlotKind.GOLD, status=SlotStatus.DONE
    )
    failed = Q(gold_passed=False) & ~Q(rating=Rating.NONSENSICAL)
    counts = gold.aggregate(
        nonsensical=Count("pk", filter=Q(rating=Rating.NONSENSICAL)),
        wrong_flags=Count("pk", filter=failed & Q(gold_shown_wrong=False)),
        accepted=Count("pk", filter=failed & Q(gold_shown_wrong=True)),
    )
    nonsensical, wrong_flags = counts["nonsensical"], counts["wrong_flags"]
    accepted = counts["accepted"]
    reasons = []
    if nonsensical > settings.GOLD_MAX_NONSENSICAL:
        reasons.append(f"marked {nonsensical} gold questions Nonsensical")
    if wrong_flags > settings.GOLD_MAX_WRONG_ANSWER_FLAGS:
        reasons.append(
            f"flagged {wrong_flags} correct gold answer{'s' if wrong_flags != 1 else ''} as wrong"
        )
    if accepted > settings.GOLD_MAX_WRONG_ANSWERS_ACCEPTED:
        reasons.append(
            f"accepted {accepted} deliberately wrong gold answer{'s' if accepted != 1 else ''} "
            "as right"
        )
    if not reasons:
        return False
    verifier_remove(user=annotator, reason=" and ".join(reasons))
    return True


@transaction.atomic
def verifier_remove(*, user: Any, reason: str) -> int:
    """Take an annotator out of the pool: release their leases and send every verdict they
    gave back to the queue (questions decided with it are undecided again). Returns the
    number of verdicts re-queued."""
    standing, _ = VerifierStanding.objects.select_for_update().get_or_create(user=user)
    if standing.removed_at is not None:
        return 0
    standing.removed_at = timezone.now()
    standing.reason = reason
    standing.save()
    # Lock the questions they verified first (in one order): a verdict being submitted on one
    # of them by someone else then finishes before this reads their outcomes, so a decision
    # resting on a verdict set aside here is undone below, never left standing.
    list(
        Question.objects.select_for_update()
        .filter(
            pk__in=VerificationSlot.objects.filter(
                annotator=user, kind=SlotKind.REGULAR, status=SlotStatus.DONE
            ).values("question_id")
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    VerificationSlot.objects.filter(
        annotator=user, kind=SlotKind.GOLD, status=SlotStatus.LEASED
    ).delete()
    _reopen(
        VerificationSlot.objects.filter(
            annotator=user, kind=SlotKind.REGULAR, status=SlotStatus.LEASED
        )
    )
    given = list(
        VerificationSlot.objects.filter(
            annotator=user, kind=SlotKind.REGULAR, status=SlotStatus.DONE
        )
    )
    DiscardedVerification.objects.bulk_create(
        [
            DiscardedVerification(
                question_id=s.question_id,
                annotator=user,
                rating=s.rating,
                answer_correct=s.answer_correct,
                corrected_answer=s.corrected_answer,
                rewritten_question=s.rewritten_question,
                submitted_at=s.submitted_at,
            )
            for s in given
        ]
    )
    _reopen(VerificationSlot.objects.filter(pk__in=[s.pk for s in given]))
    affected = {s.question_id for s in given}
    for outcome in VerificationOutcome.objects.filter(question_id__in=affected).select_related(
        "question"
    ):
        question = outcome.question
        question.text = outcome.original_text
        question.gold_answer = outcome.original_answer
        question.status = QuestionStatus.UNVERIFIED
        question.in_gold_pool = False  # undecided again: it cannot stay gold
        question.save(update_fields=["text", "gold_answer", "status", "in_gold_pool", "updated_at"])
        outcome.delete()
    Question.objects.filter(pk__in=affected, status=QuestionStatus.ADJUDICATION).update(
        status=QuestionStatus.UNVERIFIED
    )
    return len(given)


@transaction.atomic
def verifier_reinstate(*, admin: Any, user: Any) -> None:
    rules.REINSTATING.check(admin)
    VerifierStanding.objects.filter(user=user).update(removed_at=None, reason="")
