"""Reads for the verification of model-generated questions: one verifier's slot, the
adjudication queue, and the dashboard admins watch the workflow on."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.http import Http404
from django.utils import timezone

from annotation.models import (
    GenerationItem,
    GenerationRun,
    Question,
    QuestionOrigin,
    QuestionStatus,
    Rating,
    SlotKind,
    SlotStatus,
    Table,
    VerificationOutcome,
    VerificationSlot,
    VerifierStanding,
)
from hctqa.core.agreement import cohen_kappa, krippendorff_alpha

# The paper's shares (Section 3.2): of the generated questions, 72% were rated Good, 24%
# Ambiguous and 4% Nonsensical, and about half of the answers needed correcting.
PAPER_SHARES = {"good": 0.72, "ambiguous": 0.24, "nonsensical": 0.04, "corrected": 0.50}


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
    open_slots = VerificationSlot.objects.filter(
        kind=SlotKind.REGULAR, status=SlotStatus.OPEN, question__status=QuestionStatus.UNVERIFIED
    ).count()
    return VerifierProgress(mine["today"], mine["total"], open_slots)


def verification_slot_pk(*, public_id: uuid.UUID) -> int:
    """The slot behind a public id (404 when there is none)."""
    pk = VerificationSlot.objects.filter(public_id=public_id).values_list("pk", flat=True).first()
    if pk is None:
        raise Http404("no such verification slot")
    return pk


def verification_slot_held(*, annotator: Any, slot_id: int) -> VerificationSlot | None:
    """The slot if this annotator holds its lease now, with its question and table."""
    return (
        VerificationSlot.objects.select_related("question__table")
        .filter(pk=slot_id, annotator=annotator, status=SlotStatus.LEASED)
        .first()
    )


def slot_payload(slot: VerificationSlot) -> dict[str, Any]:
    """What a verifier is shown. The same for gold and regular slots: nothing says which (not
    even the question id, whose --M/--A suffix would)."""
    question = slot.question
    return {
        "slot": str(slot.public_id),
        "table_id": question.table_id,
        "question": question.text,
        "proposed_answer": question.gold_answer,
        "lease_expires_at": slot.lease_expires_at,
        "url": f"/annotate/verify/{slot.public_id}/",
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
        Question.objects.filter(status=QuestionStatus.ADJUDICATION)
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


def adjudication_item(*, question_id: str) -> AdjudicationItem | None:
    question = Question.objects.select_related("table").filter(pk=question_id).first()
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


@dataclass(frozen=True)
class Queue:
    label: str
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


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


def verification_dashboard(*, viewer: Any) -> Dashboard:
    if not (
        viewer.has_perm("annotation.adjudicate_question")
        or viewer.has_perm("annotation.change_question")
    ):
        raise PermissionDenied("the verification dashboard is for adjudicators and admins")
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


def tables_without_generated_questions(*, source: str = "", limit: int = 20) -> list[str]:
    """Real tables with no model-generated question yet, for a new generation run."""
    has_model = Question.objects.filter(table=OuterRef("pk"), origin=QuestionOrigin.MODEL)
    tables = Table.objects.exclude(Exists(has_model)).filter(synthetic__isnull=True)
    if source:
        tables = tables.filter(source=source)
    return list(tables.order_by("pk").values_list("pk", flat=True)[:limit])
