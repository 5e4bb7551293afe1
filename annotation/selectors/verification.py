"""Reads for the verification of model-generated questions: one verifier's slot, the
adjudication queue, and the dashboard admins watch the workflow on."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.http import Http404
from django.urls import reverse
from django.utils import timezone

from annotation import permissions as rules
from annotation.models import (
    GenerationItem,
    GenerationRun,
    Rating,
    SlotKind,
    SlotStatus,
    VerificationOutcome,
    VerificationSlot,
    VerifierStanding,
)
from dataset.models import Question, QuestionOrigin, QuestionStatus, Split, Table
from dataset.selectors import can_see_private_questions
from hctqa.core.agreement import cohen_kappa, krippendorff_alpha
from hctqa.core.wording import percent

# The paper's shares (Section 3.2): of the generated questions, 72% were rated Good, 24%
# Ambiguous and 4% Nonsensical, and about half of the answers needed correcting.
PAPER_SHARES = {"good": 0.72, "ambiguous": 0.24, "nonsensical": 0.04, "corrected": 0.50}


def may_verify_test_split(user: Any) -> bool:
    """Test-split questions (their proposed answers are held-out gold) are for admins only:
    verifying, adjudicating and even counting them."""
    return bool(user.has_perm("dataset.view_test_gold"))


def outside_test_split(user: Any, prefix: str = "question__") -> Q:
    """No restriction for admins; for anyone else, no question on a test-split table."""
    if may_verify_test_split(user):
        return Q()
    return ~Q(**{f"{prefix}table__split": Split.TEST})


@dataclass(frozen=True)
class VerifierProgress:
    today: int
    total: int
    open_slots: int


def verifier_progress(*, annotator: Any) -> VerifierProgress:
    start = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    mine = VerificationSlot.objects.filter(annotator=annotator, status=SlotStatus.DONE).aggregate(
        total=Count("pk"), today=Count("pk", filter=Q(submitted_at__gte=start))
    )
    # Verdicts still to give, leased ones included: a count that a claim leaves as it is,
    # so it does not tell a verifier whether the slot just served was a real one or gold.
    waiting = (
        VerificationSlot.objects.filter(
            outside_test_split(annotator),
            kind=SlotKind.REGULAR,
            question__status=QuestionStatus.UNVERIFIED,
        )
        .exclude(status=SlotStatus.DONE)
        .count()
    )
    return VerifierProgress(mine["today"], mine["total"], waiting)


@dataclass(frozen=True)
class PoolRemoval:
    """Why an annotator is out of the verification pool, and who can put them back."""

    removed_at: datetime
    reason: str
    admins: list[str]

    @property
    def message(self) -> str:
        return f"you left the verification pool on {self.removed_at:%Y-%m-%d}: you {self.reason}"

    @property
    def hint(self) -> str:
        who = f" ({', '.join(self.admins)})" if self.admins else ""
        return (
            f"Only an admin{who} can put you back in the pool, from the verification "
            "dashboard: ask one to look at your gold verdicts. Your other annotation tools "
            "stay open to you."
        )


def pool_removal(*, annotator: Any) -> PoolRemoval | None:
    standing = VerifierStanding.objects.filter(user=annotator, removed_at__isnull=False).first()
    if standing is None:
        return None
    from accounts.selectors import admins_to_tell

    admins = list(admins_to_tell().order_by("username").values_list("username", flat=True)[:3])
    return PoolRemoval(standing.removed_at, standing.reason, admins)


def verdict_change_allowed(slot: VerificationSlot) -> bool:
    """A verdict can be changed while its question still waits for the other one. Gold
    verdicts never can (they were graded when given), and look the same as a decided one."""
    return (
        slot.kind == SlotKind.REGULAR
        and slot.status == SlotStatus.DONE
        and slot.question.status == QuestionStatus.UNVERIFIED
    )


def verdict_given(*, annotator: Any, public_id: uuid.UUID) -> VerificationSlot:
    """A verdict this annotator gave, with its question and table (404 for anyone else's)."""
    slot = (
        VerificationSlot.objects.select_related("question__table")
        .filter(public_id=public_id, annotator=annotator, status=SlotStatus.DONE)
        .first()
    )
    if slot is None:
        raise Http404("You gave no verdict with this id")
    return slot


def verification_slot_pk(*, public_id: uuid.UUID) -> int:
    """The slot behind a public id (404 when there is none)."""
    pk = VerificationSlot.objects.filter(public_id=public_id).values_list("pk", flat=True).first()
    if pk is None:
        raise Http404("No such verification slot")
    return pk


def verification_slot_held(*, annotator: Any, slot_id: int) -> VerificationSlot | None:
    """The slot if this annotator holds its lease now, with its question and table."""
    return (
        VerificationSlot.objects.select_related("question__table")
        .filter(
            outside_test_split(annotator), pk=slot_id, annotator=annotator, status=SlotStatus.LEASED
        )
        .first()
    )


def slot_payload(slot: VerificationSlot) -> dict[str, Any]:
    """What a verifier is shown. The same for gold and regular slots: nothing says which (not
    even the question id, whose --M/--A suffix would)."""
    question = slot.question
    # A gold slot proposes what was drawn for it at claim time: the gold, or a wrong answer.
    proposed = slot.gold_shown_answer if slot.kind == SlotKind.GOLD else question.gold_answer
    return {
        "slot": str(slot.public_id),
        "table_id": question.table_id,
        "question": question.text,
        "proposed_answer": proposed,
        "lease_expires_at": slot.lease_expires_at,
        "url": reverse("annotate:verify", args=[slot.public_id]),
    }


# --- Adjudication ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AdjudicationItem:
    question: Question
    verdicts: list[VerificationSlot]


def adjudication_queue(*, adjudicator: Any, limit: int = 50) -> tuple[int, list[AdjudicationItem]]:
    """Questions the two verifiers disagreed on, oldest first, leaving out those this
    adjudicator verified. Returns the total waiting and the first ``limit``."""
    waiting = (
        Question.objects.filter(
            outside_test_split(adjudicator, prefix=""), status=QuestionStatus.ADJUDICATION
        )
        .exclude(verification_slots__annotator=adjudicator)
        .order_by("updated_at", "pk")
    )
    total = waiting.count()
    questions = list(waiting.select_related("table")[:limit])
    slots = defaultdict(list)
    for slot in (
        VerificationSlot.objects.filter(
            question__in=questions, kind=SlotKind.REGULAR, status=SlotStatus.DONE
        )
        .select_related("annotator")
        .order_by("slot_number")
    ):
        slots[slot.question_id].append(slot)
    return total, [AdjudicationItem(q, slots[q.pk]) for q in questions]


def adjudication_item(*, question_id: str, adjudicator: Any) -> AdjudicationItem | None:
    """The question with both verdicts; None when there is none this adjudicator may see."""
    question = (
        Question.objects.select_related("table")
        .filter(outside_test_split(adjudicator, prefix=""), pk=question_id)
        .first()
    )
    if question is None:
        return None
    verdicts = list(
        VerificationSlot.objects.filter(
            question=question, kind=SlotKind.REGULAR, status=SlotStatus.DONE
        )
        .select_related("annotator")
        .order_by("slot_number")
    )
    return AdjudicationItem(question, verdicts)


# --- Dashboard ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Share:
    key: str
    label: str
    count: int
    share: float | None
    paper: float


@dataclass(frozen=True)
class PairKappa:
    a: str
    b: str
    questions: int
    kappa: float | None


@dataclass(frozen=True)
class VerifierRow:
    user_id: int
    username: str
    verified: int
    last_day: int
    hours: float
    per_hour: float | None
    gold_seen: int
    gold_passed: int
    gold_accuracy: float | None
    removed_at: datetime | None
    reason: str
    # Gold failures by kind: a right answer flagged wrong, a wrong one accepted as right.
    gold_flagged_right: int = 0
    gold_accepted_wrong: int = 0


@dataclass(frozen=True)
class Queue:
    label: str
    done: int
    total: int

    @property
    def percent(self) -> int:
        # Rounded down: 6587 of 6605 is 99%, and 100% means nothing is left.
        return 100 * self.done // self.total if self.total else 0


@dataclass(frozen=True)
class GoldVerdict:
    """One gold slot as graded: what it showed, what the verifier said, and the outcome."""

    slot: VerificationSlot

    @property
    def failure(self) -> str:
        slot = self.slot
        if slot.gold_passed:
            return ""
        if slot.rating == Rating.NONSENSICAL:
            return "marked it Nonsensical"
        if slot.gold_shown_wrong:
            return "accepted the wrong answer as right"
        return "flagged the right answer as wrong"


@dataclass(frozen=True)
class GoldControl:
    """Gold control at a glance, for admins only: the pool and its questions are private."""

    pool: int  # questions in the pool that can be served (verified, outside the test split)
    gold_percent: int
    wrong_percent: int
    served: int  # gold verdicts given
    shown_wrong: int
    passed: int
    # Failures tolerated before an annotator leaves the verification pool, by kind.
    max_nonsensical: int
    max_wrong_flags: int
    max_wrong_accepted: int

    @property
    def serving(self) -> bool:
        return self.pool > 0 and self.gold_percent > 0


@dataclass(frozen=True)
class Dashboard:
    decided: int
    shares: list[Share]
    alpha: float | None
    alpha_units: int
    pairs: list[PairKappa]
    verifiers: list[VerifierRow]
    queues: list[Queue]
    status_counts: dict[str, int]
    runs: list[GenerationRun]
    gold: GoldControl | None = None  # None unless the viewer is an admin


def _shares() -> tuple[int, list[Share]]:
    counts = dict(
        VerificationOutcome.objects.values_list("rating").annotate(n=Count("pk")).order_by()
    )
    decided = sum(counts.values())
    corrected = VerificationOutcome.objects.exclude(rating=Rating.NONSENSICAL).aggregate(
        n=Count("pk"), corrected=Count("pk", filter=Q(answer_corrected=True))
    )
    shares = [
        Share(
            r.value,
            r.label,
            counts.get(r.value, 0),
            counts.get(r.value, 0) / decided if decided else None,
            PAPER_SHARES[r.value],
        )
        for r in Rating
    ]
    shares.append(
        Share(
            "corrected",
            "Answer corrected",
            corrected["corrected"],
            corrected["corrected"] / corrected["n"] if corrected["n"] else None,
            PAPER_SHARES["corrected"],
        )
    )
    return decided, shares


@dataclass(frozen=True)
class DayShares:
    """Outcomes of the questions decided on one day (UTC): counts and whole-number shares."""

    day: date
    total: int
    counts: dict[str, int]
    shares: dict[str, int]

    @property
    def ordered_shares(self) -> list[int]:
        return [self.shares[r.value] for r in Rating]


def outcome_shares_by_day(*, days: int = 60) -> list[DayShares]:
    """Good, Ambiguous and Nonsensical shares of each day's decisions, for the last ``days``
    days that had any. One query."""
    rows = (
        VerificationOutcome.objects.annotate(day=TruncDate("decided_at", tzinfo=UTC))
        .values_list("day", "rating")
        .annotate(n=Count("pk"))
        .order_by("day")
    )
    by_day: dict[date, dict[str, int]] = defaultdict(dict)
    for day, rating, n in rows:
        by_day[day][rating] = n
    out = []
    for day in sorted(by_day)[-days:]:
        counts = {r.value: by_day[day].get(r.value, 0) for r in Rating}
        total = sum(counts.values())
        shares = {k: int(percent(v / total, 0)) for k, v in counts.items()}
        out.append(DayShares(day, total, counts, shares))
    return out


def _agreement() -> tuple[float | None, int, list[PairKappa]]:
    """Ratings of questions with both verdicts in, as units of two coders each."""
    rows = (
        VerificationSlot.objects.filter(kind=SlotKind.REGULAR, status=SlotStatus.DONE)
        .values_list("question_id", "annotator__username", "rating")
        .order_by("question_id")
    )
    by_question: dict[str, dict[str, str]] = defaultdict(dict)
    for question_id, username, rating in rows:
        by_question[question_id][username or "?"] = rating
    units = [u for u in by_question.values() if len(u) == 2]
    pair_ratings: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for unit in units:
        (a, ra), (b, rb) = sorted(unit.items())
        pair_ratings[(a, b)].append((ra, rb))
    pairs = sorted(
        (PairKappa(a, b, len(p), cohen_kappa(p)) for (a, b), p in pair_ratings.items()),
        key=lambda p: (-p.questions, p.a, p.b),
    )
    return krippendorff_alpha(units), len(units), pairs


def _verifiers(now: datetime) -> list[VerifierRow]:
    done = Q(verification_slots__status=SlotStatus.DONE)
    gold = done & Q(verification_slots__kind=SlotKind.GOLD)
    failed = (
        gold
        & Q(verification_slots__gold_passed=False)
        & ~Q(verification_slots__rating=Rating.NONSENSICAL)
    )
    shown_right = Q(verification_slots__gold_shown_wrong=False)
    users = (
        get_user_model()
        .objects.filter(done)
        .annotate(
            verified=Count("verification_slots", filter=done),
            last_day=Count(
                "verification_slots",
                filter=done & Q(verification_slots__submitted_at__gte=now - timedelta(days=1)),
            ),
            seconds=Sum("verification_slots__seconds_spent", filter=done),
            gold_seen=Count("verification_slots", filter=gold),
            gold_passed=Count(
                "verification_slots", filter=gold & Q(verification_slots__gold_passed=True)
            ),
            gold_flagged_right=Count("verification_slots", filter=failed & shown_right),
            gold_accepted_wrong=Count(
                "verification_slots",
                filter=failed & Q(verification_slots__gold_shown_wrong=True),
            ),
        )
        .order_by("username")
    )
    standing = {
        s.user_id: s
        for s in VerifierStanding.objects.filter(removed_at__isnull=False).select_related("user")
    }
    rows = []
    for u in users:
        hours = (u.seconds or 0) / 3600
        removed = standing.get(u.pk)
        rows.append(
            VerifierRow(
                u.pk,
                u.username,
                u.verified,
                u.last_day,
                hours,
                u.verified / hours if hours >= 0.01 else None,
                u.gold_seen,
                u.gold_passed,
                u.gold_passed / u.gold_seen if u.gold_seen else None,
                removed.removed_at if removed else None,
                removed.reason if removed else "",
                u.gold_flagged_right,
                u.gold_accepted_wrong,
            )
        )
    # Removed annotators with no verdict left still show, so admins see every removal.
    listed = {r.user_id for r in rows}
    for s in standing.values():
        if s.user_id not in listed:
            rows.append(
                VerifierRow(
                    s.user_id, s.user.username, 0, 0, 0.0, None, 0, 0, None, s.removed_at, s.reason
                )
            )
    return rows


def gold_control_summary() -> GoldControl:
    served = VerificationSlot.objects.filter(kind=SlotKind.GOLD, status=SlotStatus.DONE).aggregate(
        n=Count("pk"),
        wrong=Count("pk", filter=Q(gold_shown_wrong=True)),
        passed=Count("pk", filter=Q(gold_passed=True)),
    )
    pool = (
        Question.objects.filter(in_gold_pool=True, status=QuestionStatus.VERIFIED)
        .exclude(table__split=Split.TEST)
        .count()
    )
    return GoldControl(
        pool=pool,
        gold_percent=settings.VERIFICATION_GOLD_PERCENT,
        wrong_percent=settings.VERIFICATION_GOLD_WRONG_PERCENT,
        served=served["n"],
        shown_wrong=served["wrong"],
        passed=served["passed"],
        max_nonsensical=settings.GOLD_MAX_NONSENSICAL,
        max_wrong_flags=settings.GOLD_MAX_WRONG_ANSWER_FLAGS,
        max_wrong_accepted=settings.GOLD_MAX_WRONG_ANSWERS_ACCEPTED,
    )


def gold_verdicts(*, username: str = "", limit: int = 100) -> list[GoldVerdict]:
    """The latest gold verdicts, each with the answer it showed, newest first (admins)."""
    slots = (
        VerificationSlot.objects.filter(kind=SlotKind.GOLD, status=SlotStatus.DONE)
        .select_related("question", "annotator")
        .defer("question__query_properties", "question__sql")
        .order_by("-submitted_at", "-pk")
    )
    if username:
        slots = slots.filter(annotator__username=username)
    return [GoldVerdict(slot) for slot in slots[:limit]]


def gold_pool_questions() -> QuerySet[Question]:
    """The pool, with how often each question was served as gold and passed (admins)."""
    served = Q(verification_slots__kind=SlotKind.GOLD, verification_slots__status=SlotStatus.DONE)
    return (
        Question.objects.filter(in_gold_pool=True)
        .select_related("table")
        .defer("table__canonical_csv", "query_properties", "sql")
        .annotate(
            served=Count("verification_slots", filter=served),
            passed=Count(
                "verification_slots", filter=served & Q(verification_slots__gold_passed=True)
            ),
        )
        .order_by("pk")
    )


def verification_dashboard(*, viewer: Any) -> Dashboard:
    rules.DASHBOARD.check(viewer)
    now = timezone.now()
    decided, shares = _shares()
    alpha, alpha_units, pairs = _agreement()
    status_counts = dict(
        Question.objects.filter(origin=QuestionOrigin.MODEL)
        .values_list("status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    slots = VerificationSlot.objects.filter(kind=SlotKind.REGULAR).aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(status=SlotStatus.DONE)),
    )
    generated = sum(status_counts.values())
    waiting = status_counts.get(QuestionStatus.ADJUDICATION, 0)
    adjudicated = VerificationOutcome.objects.filter(adjudicator__isnull=False).count()
    queues = [
        Queue("Verifications given", slots["done"], slots["total"]),
        Queue(
            "Model-generated questions decided",
            status_counts.get(QuestionStatus.VERIFIED, 0)
            + status_counts.get(QuestionStatus.DROPPED, 0),
            generated,
        ),
        Queue("Disagreements adjudicated", adjudicated, adjudicated + waiting),
    ]
    runs = list(GenerationRun.objects.select_related("created_by").order_by("-created_at")[:10])
    return Dashboard(
        decided=decided,
        shares=shares,
        alpha=alpha,
        alpha_units=alpha_units,
        pairs=pairs,
        verifiers=_verifiers(now),
        queues=queues,
        status_counts=status_counts,
        runs=runs,
        gold=gold_control_summary() if can_see_private_questions(viewer) else None,
    )


def generation_runs(*, limit: int = 50) -> list[GenerationRun]:
    return list(
        GenerationRun.objects.select_related("created_by", "endpoint").order_by("-created_at")[
            :limit
        ]
    )


def generation_run_get(*, run_id: int) -> GenerationRun | None:
    return GenerationRun.objects.select_related("created_by", "endpoint").filter(pk=run_id).first()


def generation_failures(*, run_id: int, limit: int = 100) -> list[GenerationItem]:
    """The tables of a run that got no valid reply, with the reason."""
    return list(
        GenerationItem.objects.filter(run_id=run_id, status="failed").order_by("pk")[:limit]
    )


def tables_without_generated_questions(
    *, source: str = "", limit: int = 20, include_test_split: bool = False
) -> list[str]:
    """Real tables with no model-generated question yet, for a new generation run."""
    has_model = Question.objects.filter(table=OuterRef("pk"), origin=QuestionOrigin.MODEL)
    tables = Table.objects.exclude(Exists(has_model)).filter(synthetic__isnull=True)
    if not include_test_split:
        tables = tables.exclude(split=Split.TEST)
    if source:
        tables = tables.filter(source=source)
    return list(tables.order_by("pk").values_list("pk", flat=True)[:limit])
