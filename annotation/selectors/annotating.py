"""Reads of the dataset. Every page and endpoint goes through these, so the rule that hides
test-split gold answers lives in one place."""

from __future__ import annotations

import statistics
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.urls import reverse
from django.utils import timezone

from annotation.models import (
    AnnotationSkip,
    AnnotationSource,
    AnnotationTool,
    Flag,
    PropertyAnnotation,
    QuestionAuthoring,
    QuestionDraft,
    VerificationOutcome,
    VerificationSlot,
)
from annotation.selectors.assignments import assigned_next
from annotation.selectors.verification import verdict_change_allowed
from dataset.models import Question, QuestionOrigin, QuestionStatus, Table
from dataset.selectors import (
    human_questions_of_each_table,
    question_order,
    questions_visible,
    real_tables,
    table_get,
)
from hctqa.core import taxonomy
from hctqa.core.agreement import AgreementReport, Disagreement, agreement_report, majority
from hctqa.core.wording import counted

User = AbstractBaseUser | AnonymousUser


# --- Annotation work -----------------------------------------------------------------------

# Someone else's draft this recent means the table is being annotated right now.
_ACTIVE_DRAFT = timedelta(minutes=30)


def _saved_annotations() -> QuerySet[PropertyAnnotation]:
    return PropertyAnnotation.objects.filter(
        version__gt=0, source__in=(AnnotationSource.ANNOTATOR, AnnotationSource.RELEASE)
    )


def _queue_next(
    *,
    annotator: User,
    tool: str,
    after: str | None,
    done: QuerySet[Any],
    weight: QuerySet[Any],
) -> Table | None:
    """The lightest table this annotator has not done (``done``: an OuterRef("pk") query of
    their finished work; ``weight``: one of the table's load). Skipped tables come last,
    longest skipped first."""
    candidates = (
        Table.objects.filter(real_tables())
        .exclude(Exists(done))
        .exclude(pk=after or "")
        .defer("canonical_csv")
    )
    skipped = AnnotationSkip.objects.filter(table=OuterRef("pk"), annotator=annotator, tool=tool)
    fresh = (
        candidates.exclude(Exists(skipped))
        .annotate(
            weight=Coalesce(
                Subquery(weight.order_by().values("table").annotate(n=Count("pk")).values("n")), 0
            )
        )
        .order_by("weight", "id")
        .first()
    )
    if fresh is not None:
        return fresh
    return (
        candidates.annotate(skipped_at=Subquery(skipped.values("created_at")))
        .order_by("skipped_at", "id")
        .first()
    )


def _skipped_since(annotator: User, tool: str, drafted_at: str) -> Exists:
    """A draft skipped after it was last written is no longer "where you left off": otherwise
    skipping two drafted tables would bounce between them forever."""
    return Exists(
        AnnotationSkip.objects.filter(
            annotator=annotator,
            tool=tool,
            table_id=OuterRef("table_id"),
            created_at__gte=OuterRef(drafted_at),
        )
    )


def property_queue_next(*, annotator: User, after: str | None = None) -> Table | None:
    """The table this annotator should annotate next.

    Their own unsaved draft comes first (resume where you left off); then the tables assigned
    to them, oldest assignment first; then the tables they have not annotated, fewest
    annotations first, counting others' drafts in progress so that two annotators do not get
    the same table at once; skipped tables come last.
    """
    draft = (
        PropertyAnnotation.objects.filter(annotator=annotator, source=AnnotationSource.ANNOTATOR)
        .filter(draft__isnull=False, draft_base_version=F("version"))
        .exclude(table_id=after)
        .exclude(_skipped_since(annotator, AnnotationTool.PROPERTIES, "draft_saved_at"))
        .order_by("-draft_saved_at")
        .values_list("table_id", flat=True)
        .first()
    )
    if draft:
        return Table.objects.defer("canonical_csv").get(pk=draft)
    assigned = assigned_next(annotator=annotator, kind=AnnotationTool.PROPERTIES, after=after)
    if assigned is not None:
        return assigned
    busy_since = timezone.now() - _ACTIVE_DRAFT
    return _queue_next(
        annotator=annotator,
        tool=AnnotationTool.PROPERTIES,
        after=after,
        done=PropertyAnnotation.objects.filter(
            table=OuterRef("pk"), annotator=annotator, version__gt=0
        ),
        weight=PropertyAnnotation.objects.filter(table=OuterRef("pk"))
        .filter(Q(version__gt=0) | Q(draft_saved_at__gte=busy_since))
        .exclude(annotator=annotator),
    )


@dataclass(frozen=True)
class PropertyWork:
    """What the property tool shows for one table and annotator."""

    properties: dict[str, Any]  # the draft if unsaved, else the saved set, else empty
    saved: dict[str, Any] | None
    version: int
    has_draft: bool
    seconds_spent: int
    draft_client_ms: int | None = None


def property_work(*, annotator: User, table: Table) -> PropertyWork:
    row = PropertyAnnotation.objects.filter(
        table=table, annotator=annotator, source=AnnotationSource.ANNOTATOR
    ).first()
    empty = taxonomy.TABLE_PROPERTIES.empty()
    if row is None:
        return PropertyWork(empty, None, 0, False, 0)
    saved = row.properties if row.version else None
    current = row.draft if row.has_unsaved_draft else (saved or empty)
    return PropertyWork(
        {**empty, **current},
        saved,
        row.version,
        row.has_unsaved_draft,
        row.seconds_spent,
        row.draft_client_ms if row.has_unsaved_draft else None,
    )


@dataclass(frozen=True)
class Progress:
    done_today: int
    done_total: int
    remaining: int


def _start_of_day() -> datetime:
    return timezone.now().astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def property_progress(*, annotator: User) -> Progress:
    saved = PropertyAnnotation.objects.filter(
        annotator=annotator, source=AnnotationSource.ANNOTATOR, version__gt=0
    )
    counts = saved.aggregate(
        total=Count("pk"), today=Count("pk", filter=Q(saved_at__gte=_start_of_day()))
    )
    tables = Table.objects.filter(real_tables()).count()
    return Progress(counts["today"], counts["total"], max(0, tables - counts["total"]))


def question_queue_next(*, annotator: User, after: str | None = None) -> Table | None:
    """Their own draft first; then the tables assigned to them; then tables with the fewest
    human-written questions (uncovered tables first) that this annotator has not written
    for; skipped tables last."""
    draft = (
        QuestionDraft.objects.filter(annotator=annotator)
        .exclude(table_id=after)
        .exclude(_skipped_since(annotator, AnnotationTool.QUESTIONS, "updated_at"))
        .order_by("-updated_at")
        .values_list("table_id", flat=True)
        .first()
    )
    if draft:
        return Table.objects.defer("canonical_csv").get(pk=draft)
    assigned = assigned_next(annotator=annotator, kind=AnnotationTool.QUESTIONS, after=after)
    if assigned is not None:
        return assigned
    return _queue_next(
        annotator=annotator,
        tool=AnnotationTool.QUESTIONS,
        after=after,
        done=QuestionAuthoring.objects.filter(question__table=OuterRef("pk"), annotator=annotator),
        weight=Question.objects.filter(table=OuterRef("pk"), origin=QuestionOrigin.HUMAN),
    )


@dataclass(frozen=True)
class QuestionWork:
    draft: QuestionDraft | None
    # Already on this table (every origin), so they are not written twice.
    existing_questions: list[Question]


def question_work(*, annotator: User, table: Table) -> QuestionWork:
    draft = QuestionDraft.objects.filter(annotator=annotator, table=table).first()
    # Gold-pool questions stay hidden here too: the annotator may verify them as gold later.
    existing = list(questions_visible(user=annotator).filter(table=table))
    return QuestionWork(draft, sorted(existing, key=question_order))


@dataclass(frozen=True)
class QuestionProgress:
    written_today: int
    written_total: int
    tables_covered: int
    tables_total: int


def question_progress(*, annotator: User) -> QuestionProgress:
    mine = QuestionAuthoring.objects.filter(annotator=annotator).aggregate(
        total=Count("pk"), today=Count("pk", filter=Q(created_at__gte=_start_of_day()))
    )
    tables = Table.objects.filter(real_tables())
    covered = tables.filter(Exists(human_questions_of_each_table())).count()
    return QuestionProgress(mine["today"], mine["total"], covered, tables.count())


@dataclass(frozen=True)
class MixRow:
    code: str
    label: str
    mine: float
    target: float
    count: int


def query_mix(*, annotator: User) -> tuple[int, list[MixRow]]:
    """The share of this annotator's questions with each top-level query property, beside
    the target mix."""
    from hctqa.core.query_templates import TARGET_MIX

    rows = QuestionAuthoring.objects.filter(annotator=annotator).values_list(
        "question__query_properties", flat=True
    )
    props = list(rows)
    n = len(props)
    out = []
    for code, target in TARGET_MIX.items():
        count = sum(1 for p in props if (p or {}).get(code) is True)
        out.append(
            MixRow(
                code,
                taxonomy.QUERY_PROPERTIES.get(code).label,
                count / n if n else 0.0,
                target,
                count,
            )
        )
    return n, out


# --- Agreement -----------------------------------------------------------------------------

RELEASE_CODER = "release"


def _coder(row: PropertyAnnotation) -> str:
    return RELEASE_CODER if row.source == AnnotationSource.RELEASE else row.annotator.get_username()


@dataclass(frozen=True)
class AgreementView:
    report: AgreementReport
    open_disagreements: list[Disagreement]
    resolved: int
    annotators: int


def agreement_overview() -> AgreementView:
    """Agreement over every table a person has annotated, the release counting as one
    annotator; disagreements already resolved after their last annotation are set apart."""
    annotated = PropertyAnnotation.objects.filter(
        source=AnnotationSource.ANNOTATOR, version__gt=0
    ).values("table_id")
    rows = _saved_annotations().filter(table_id__in=annotated).select_related("annotator")
    by_table: dict[str, dict[str, dict[str, Any]]] = {}
    latest: dict[str, datetime] = {}
    for row in rows:
        by_table.setdefault(row.table_id, {})[_coder(row)] = row.properties
        latest[row.table_id] = max(latest.get(row.table_id, row.saved_at), row.saved_at)
    resolutions = dict(
        PropertyAnnotation.objects.filter(
            source=AnnotationSource.RESOLUTION, table_id__in=list(by_table)
        ).values_list("table_id", "saved_at")
    )
    codes = [p.code for p in taxonomy.TABLE_PROPERTIES.flags()]
    report = agreement_report(by_table, codes)
    open_ = [
        d
        for d in report.disagreements
        if not (d.table_id in resolutions and resolutions[d.table_id] >= latest[d.table_id])
    ]
    coders = {c for by in by_table.values() for c in by if c != RELEASE_CODER}
    return AgreementView(report, open_, len(report.disagreements) - len(open_), len(coders))


@dataclass(frozen=True)
class ResolutionWork:
    table: Table
    by_coder: dict[str, dict[str, Any]]
    majority: dict[str, bool]
    resolution: PropertyAnnotation | None


def resolution_work(*, table_id: str) -> ResolutionWork:
    table = table_get(table_id=table_id)
    rows = (
        _saved_annotations()
        .filter(table=table)
        .select_related("annotator")
        .order_by("source", "annotator__username")
    )
    by_coder = {_coder(row): row.properties for row in rows}
    codes = [p.code for p in taxonomy.TABLE_PROPERTIES.flags()]
    resolution = PropertyAnnotation.objects.filter(
        table=table, source=AnnotationSource.RESOLUTION
    ).first()
    return ResolutionWork(table, by_coder, majority(by_coder, codes), resolution)


@dataclass(frozen=True)
class TimeSpent:
    """One annotator's pace: saved table-property annotations and written questions, with the
    median seconds each took (drafts included). The paper reports about 2.5 minutes a
    question."""

    annotator: str
    tables: int
    median_seconds_per_table: float | None
    questions: int
    median_seconds_per_question: float | None


def time_spent() -> list[TimeSpent]:
    per_table: dict[str, list[int]] = {}
    for name, seconds in PropertyAnnotation.objects.filter(
        source=AnnotationSource.ANNOTATOR, version__gt=0
    ).values_list("annotator__username", "seconds_spent"):
        per_table.setdefault(name, []).append(seconds)
    per_question: dict[str, list[int]] = {}
    for name, seconds in QuestionAuthoring.objects.values_list(
        "annotator__username", "seconds_spent"
    ):
        per_question.setdefault(name, []).append(seconds)

    def median(values: list[int]) -> float | None:
        return statistics.median(values) if values else None

    return [
        TimeSpent(
            name,
            len(per_table.get(name, [])),
            median(per_table.get(name, [])),
            len(per_question.get(name, [])),
            median(per_question.get(name, [])),
        )
        for name in sorted(per_table.keys() | per_question.keys())
    ]


def tables_annotated_by(*, annotator: User, table_ids: list[str]) -> set[str]:
    """Which of these tables this person has a saved property annotation on (so they do not
    resolve its disagreements)."""
    return set(
        PropertyAnnotation.objects.filter(
            annotator=annotator,
            source=AnnotationSource.ANNOTATOR,
            version__gt=0,
            table_id__in=table_ids,
        ).values_list("table_id", flat=True)
    )


def question_change_allowed(authoring: QuestionAuthoring, *, now: datetime | None = None) -> bool:
    """An author may change a question they wrote for ANNOTATION_CHANGE_WINDOW_HOURS after
    writing it, unless it became a gold-control question meanwhile."""
    now = now or timezone.now()
    window = timedelta(hours=settings.ANNOTATION_CHANGE_WINDOW_HOURS)
    return not authoring.question.in_gold_pool and now - authoring.created_at <= window


# --- My recent work ------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkItem:
    """One saved piece of an annotator's work: what, on which table, when, and where to change
    it (empty when it can no longer be changed)."""

    kind: str  # "properties", "question" or "verdict"
    table_id: str
    summary: str
    saved_at: datetime
    version: str
    change_url: str
    locked_because: str = ""


def _verdict_summary(slot: VerificationSlot) -> str:
    """The annotator's own verdict on the question as they saw it: a decision may have
    rewritten the question since (its original text is kept on the outcome)."""
    try:
        seen = slot.question.outcome.original_text
    except VerificationOutcome.DoesNotExist:
        seen = slot.question.text
    summary = f"{slot.get_rating_display()}: {seen}"
    if slot.corrected_answer:
        summary += f" Your answer: {slot.corrected_answer}"
    if slot.rewritten_question:
        summary += f" Your rewrite: {slot.rewritten_question}"
    return summary


def recent_work(*, annotator: User, limit: int = 15) -> list[WorkItem]:
    """The annotator's last saved table properties, questions and verdicts, newest first.
    Three queries, whatever the limit."""
    items: list[WorkItem] = []
    for row in (
        PropertyAnnotation.objects.filter(
            annotator=annotator, source=AnnotationSource.ANNOTATOR, version__gt=0
        )
        .order_by("-saved_at")
        .only("table_id", "properties", "version", "saved_at")[:limit]
    ):
        on = [p.label for p in taxonomy.TABLE_PROPERTIES.flags() if row.properties.get(p.code)]
        items.append(
            WorkItem(
                "properties",
                row.table_id,
                ", ".join(on) or "no property",
                row.saved_at,
                f"version {row.version}",
                reverse("annotate:properties", args=[row.table_id]),
            )
        )
    window = settings.ANNOTATION_CHANGE_WINDOW_HOURS
    for authoring in (
        QuestionAuthoring.objects.filter(annotator=annotator)
        .select_related("question")
        .order_by("-created_at")[:limit]
    ):
        question = authoring.question
        allowed = question_change_allowed(authoring)
        items.append(
            WorkItem(
                "question",
                question.table_id,
                question.text,
                authoring.changed_at or authoring.created_at,
                f"{question.id}, version {authoring.version}",
                reverse("annotate:question_change", args=[question.id]) if allowed else "",
                "" if allowed else f"more than {counted(window, 'hour')} old, or now gold control",
            )
        )
    for slot in (
        VerificationSlot.objects.filter(annotator=annotator, status="done")
        .select_related("question__outcome")
        .order_by("-submitted_at")[:limit]
    ):
        allowed = verdict_change_allowed(slot)
        waiting = slot.question.status == QuestionStatus.ADJUDICATION
        items.append(
            WorkItem(
                "verdict",
                slot.question.table_id,
                _verdict_summary(slot),
                slot.submitted_at,
                "",
                reverse("annotate:verdict_change", args=[slot.public_id]) if allowed else "",
                ""
                if allowed
                else "waiting for an adjudicator's decision"
                if waiting
                else "the question has been decided",
            )
        )
    items.sort(key=lambda item: item.saved_at, reverse=True)
    return items[: 3 * limit]


# --- Flags ---------------------------------------------------------------------------------


def flags_open(*, limit: int = 200) -> list[Flag]:
    return list(
        Flag.objects.filter(resolved_at__isnull=True)
        .select_related("raised_by", "question")
        .order_by("raised_at", "pk")[:limit]
    )


def flags_open_count() -> int:
    return Flag.objects.filter(resolved_at__isnull=True).count()


def flags_resolved(*, limit: int = 20) -> list[Flag]:
    return list(
        Flag.objects.filter(resolved_at__isnull=False)
        .select_related("raised_by", "resolved_by", "question")
        .order_by("-resolved_at", "-pk")[:limit]
    )


def question_authored(*, annotator: User, question_id: str) -> QuestionAuthoring:
    """A question this annotator wrote, with its table (404 for anyone else's)."""
    authoring = (
        QuestionAuthoring.objects.select_related("question__table")
        .filter(question_id=question_id, annotator=annotator)
        .first()
    )
    if authoring is None:
        raise Http404("You did not write a question with this id")
    return authoring


def flag_target_question(
    *, user: User, table: Table, question_id: str, slot_id: str
) -> Question | None:
    """The question a flag is about, if any: one the person may see on this table, or the one
    behind a verification slot they were given. A gold slot's question is left out (it is
    private), so such a flag is about the table only."""
    if slot_id:
        try:
            public_id = uuid.UUID(slot_id)
        except ValueError:
            return None
        slot = (
            VerificationSlot.objects.select_related("question")
            .filter(public_id=public_id, annotator=user, question__table=table)
            .first()
        )
        return slot.question if slot is not None and slot.kind == "regular" else None
    if question_id:
        return questions_visible(user=user).filter(pk=question_id, table=table).first()
    return None
