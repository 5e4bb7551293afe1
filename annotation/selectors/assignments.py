"""Reads of assignments: who may be given which work, what each person has been given and how
far they are, and the next assigned table of a queue. Done and in progress are read from the
work itself (a saved annotation or question, a draft), never stored twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, Case, Count, Exists, F, OuterRef, Q, QuerySet, When

from annotation.models import (
    AnnotationSkip,
    AnnotationSource,
    AnnotationTool,
    Assignment,
    PropertyAnnotation,
    QuestionAuthoring,
    QuestionDraft,
)
from dataset.models import Table

# The permission each kind of work needs.
KIND_PERMISSION = {
    AnnotationTool.PROPERTIES: "annotate_table",
    AnnotationTool.QUESTIONS: "write_question",
}


def may_assign(user: Any) -> bool:
    """Admins and adjudicators give out work."""
    return bool(user.is_authenticated and user.has_perm("annotation.adjudicate_question"))


def annotators_for(kind: str | None = None) -> QuerySet[Any]:
    """Active accounts that may do this kind of work (either kind when None), by name: the
    permission comes from a role, is given directly, or the account is a superuser."""
    codenames = [KIND_PERMISSION[kind]] if kind else list(KIND_PERMISSION.values())
    User = get_user_model()
    granted = User.objects.filter(
        Q(groups__permissions__codename__in=codenames) | Q(user_permissions__codename__in=codenames)
    ).values("pk")
    return (
        User.objects.filter(is_active=True)
        .filter(Q(pk__in=granted) | Q(is_superuser=True))
        .order_by("username")
    )


def _done(kind: str) -> Exists:
    """Whether the assignment's annotator has saved this kind of work on its table."""
    if kind == AnnotationTool.PROPERTIES:
        return Exists(
            PropertyAnnotation.objects.filter(
                table_id=OuterRef("table_id"),
                annotator_id=OuterRef("annotator_id"),
                source=AnnotationSource.ANNOTATOR,
                version__gt=0,
            )
        )
    return Exists(
        QuestionAuthoring.objects.filter(
            question__table_id=OuterRef("table_id"), annotator_id=OuterRef("annotator_id")
        )
    )


def _drafted(kind: str) -> Exists:
    """Whether the assignment's annotator has unsaved work on its table: table properties
    drafted since their last save, or a question being written."""
    if kind == AnnotationTool.PROPERTIES:
        return Exists(
            PropertyAnnotation.objects.filter(
                table_id=OuterRef("table_id"),
                annotator_id=OuterRef("annotator_id"),
                source=AnnotationSource.ANNOTATOR,
                draft__isnull=False,
                draft_base_version=F("version"),
            )
        )
    return Exists(
        QuestionDraft.objects.filter(
            table_id=OuterRef("table_id"), annotator_id=OuterRef("annotator_id")
        )
    )


def _skipped(kind: str) -> Exists:
    return Exists(
        AnnotationSkip.objects.filter(
            table_id=OuterRef("table_id"), annotator_id=OuterRef("annotator_id"), tool=kind
        )
    )


def _done_any() -> Q:
    return Q(kind=AnnotationTool.PROPERTIES, _done_p=True) | Q(
        kind=AnnotationTool.QUESTIONS, _done_q=True
    )


def _with_state(assignments: QuerySet[Assignment]) -> QuerySet[Assignment]:
    """Assignments with ``is_done`` and ``in_progress`` (a draft, not done)."""
    P, Qn = AnnotationTool.PROPERTIES, AnnotationTool.QUESTIONS
    return assignments.annotate(
        _done_p=_done(P),
        _done_q=_done(Qn),
        _drafted_p=_drafted(P),
        _drafted_q=_drafted(Qn),
    ).annotate(
        is_done=Case(When(_done_any(), then=True), default=False, output_field=BooleanField()),
        in_progress=Case(
            When(_done_any(), then=False),
            When(Q(kind=P, _drafted_p=True) | Q(kind=Qn, _drafted_q=True), then=True),
            default=False,
            output_field=BooleanField(),
        ),
    )


@dataclass(frozen=True)
class AssignmentRow:
    """One person's assignments of one kind, and how far they are."""

    annotator_id: int
    annotator: str
    kind: str
    kind_label: str
    assigned: int
    done: int
    in_progress: int

    @property
    def waiting(self) -> int:
        return self.assigned - self.done - self.in_progress


def assignment_overview(*, annotator: Any = None) -> list[AssignmentRow]:
    """Per person and kind: tables assigned, done and in progress. One query, however many
    people and tables; ``annotator`` keeps one person's rows."""
    assignments = Assignment.objects.all()
    if annotator is not None:
        assignments = assignments.filter(annotator=annotator)
    rows = (
        _with_state(assignments)
        .values("annotator_id", "annotator__username", "kind")
        .annotate(
            assigned=Count("pk"),
            done=Count("pk", filter=Q(is_done=True)),
            in_progress=Count("pk", filter=Q(in_progress=True)),
        )
        .order_by("annotator__username", "kind")
    )
    labels = dict(AnnotationTool.choices)
    return [
        AssignmentRow(
            r["annotator_id"],
            r["annotator__username"],
            r["kind"],
            labels[r["kind"]],
            r["assigned"],
            r["done"],
            r["in_progress"],
        )
        for r in rows
    ]


def assigned_next(*, annotator: Any, kind: str, after: str | None = None) -> Table | None:
    """The annotator's oldest assignment of this kind not done and not skipped (a skipped
    assigned table waits at the end of their queue, as any skipped table does)."""
    table_id = (
        Assignment.objects.filter(annotator=annotator, kind=kind)
        .exclude(table_id=after or "")
        .exclude(_done(kind))
        .exclude(_skipped(kind))
        .order_by("created_at", "pk")
        .values_list("table_id", flat=True)
        .first()
    )
    if table_id is None:
        return None
    return Table.objects.defer("canonical_csv").get(pk=table_id)


def assignments_open_of(*, annotator: Any, kind: str) -> QuerySet[Assignment]:
    """This person's assignments of this kind not done yet."""
    return Assignment.objects.filter(annotator=annotator, kind=kind).exclude(_done(kind))


def assigned_tables(*, annotator: Any, limit: int = 10) -> list[Assignment]:
    """The annotator's open assignments, oldest first, each with ``in_progress``: for their
    hub. One query."""
    return list(
        _with_state(Assignment.objects.filter(annotator=annotator))
        .filter(is_done=False)
        .order_by("created_at", "pk")[:limit]
    )
