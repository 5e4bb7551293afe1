"""Reads of the dataset. Every page and endpoint goes through these, so the rule that hides
test-split gold answers lives in one place."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from django.utils import timezone

from annotation.models import (
    AnnotationSkip,
    AnnotationSource,
    AnnotationTool,
    PropertyAnnotation,
    Question,
    QuestionAuthoring,
    QuestionDraft,
    QuestionOrigin,
    Split,
    Table,
)
from hctqa.core import taxonomy
from hctqa.core.agreement import AgreementReport, Disagreement, agreement_report, majority

User = AbstractBaseUser | AnonymousUser


@dataclass(frozen=True)
class TableFilters:
    source: str = ""
    split: str = ""
    table_property: str = ""
    has_human_question: bool | None = None
    search: str = ""


def _human_questions() -> QuerySet[Question]:
    return Question.objects.filter(table=OuterRef("pk"), origin=QuestionOrigin.HUMAN)


def table_list(*, filters: TableFilters) -> QuerySet[Table]:
    """Tables matching the filters, with their question counts, in id order.

    Filters on questions use EXISTS rather than joins, so the counts stay per table and the
    page costs one query whatever the size of the dataset.
    """
    tables = Table.objects.all()
    if filters.source:
        tables = tables.filter(source=filters.source)
    if filters.split:
        tables = tables.filter(split=filters.split)
    if filters.table_property:
        # A JSON key lookup works on SQLite and PostgreSQL alike.
        tables = tables.filter(**{f"table_properties__{filters.table_property}": True})
    if filters.has_human_question is not None:
        exists = Exists(_human_questions())
        tables = tables.filter(exists if filters.has_human_question else ~exists)
    if filters.search:
        text = filters.search
        tables = tables.filter(
            Q(id__icontains=text)
            | Q(canonical_csv__icontains=text)
            | Exists(Question.objects.filter(table=OuterRef("pk"), text__icontains=text))
        )
    # Correlated subqueries, not JOIN + GROUP BY: count() drops them, and the page query
    # computes them for its own rows only.
    return (
        tables.defer("canonical_csv")
        .annotate(
            question_count=_question_count(),
            human_question_count=_question_count(origin=QuestionOrigin.HUMAN),
        )
        .order_by("id")
    )


def _question_count(**filters: str) -> Coalesce:
    counted = (
        Question.objects.filter(table=OuterRef("pk"), **filters)
        .order_by()
        .values("table")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted), 0)


def table_get(*, table_id: str) -> Table:
    """The table with its synthetic files, or 404."""
    return get_object_or_404(Table.objects.select_related("synthetic"), pk=table_id)


_QUESTION_NUMBER = re.compile(r"--([A-Z])(\d+)$")


def _question_order(question: Question) -> tuple[int, str, int, str]:
    # M0, M1, …, M10 rather than M0, M1, M10: human-written first, then model, then templates.
    match = _QUESTION_NUMBER.search(question.id)
    origin_rank = {"human": 0, "model": 1, "synthetic": 2}.get(question.origin, 3)
    if match:
        return (origin_rank, match.group(1), int(match.group(2)), question.id)
    return (origin_rank, "", 0, question.id)


def question_list_for_table(*, table: Table) -> list[Question]:
    questions = list(Question.objects.filter(table=table))
    for q in questions:
        q.table = table  # Avoid one query per question when reading q.split.
    return sorted(questions, key=_question_order)


@dataclass(frozen=True)
class QuestionFilters:
    table: str = ""
    source: str = ""
    split: str = ""
    origin: str = ""
    status: str = ""
    search: str = ""


def question_list(*, filters: QuestionFilters) -> QuerySet[Question]:
    questions = Question.objects.select_related("table").defer("table__canonical_csv")
    if filters.table:
        questions = questions.filter(table_id=filters.table)
    if filters.source:
        questions = questions.filter(table__source=filters.source)
    if filters.split:
        questions = questions.filter(table__split=filters.split)
    if filters.origin:
        questions = questions.filter(origin=filters.origin)
    if filters.status:
        questions = questions.filter(status=filters.status)
    if filters.search:
        questions = questions.filter(text__icontains=filters.search)
    return questions


def question_get(*, question_id: str) -> Question:
    return get_object_or_404(
        Question.objects.select_related("table").defer("table__canonical_csv"), pk=question_id
    )


def can_see_test_gold(user: User) -> bool:
    return bool(user.is_authenticated and user.has_perm("annotation.view_test_gold"))


def gold_answer_visible(*, user: User, split: str) -> bool:
    """Test-split gold answers are for admins only, on every page and endpoint."""
    return split != Split.TEST or can_see_test_gold(user)


@dataclass(frozen=True)
class DatasetOverview:
    tables: int
    questions: int
    by_source: list[tuple[str, str, int]]
    by_split: list[tuple[str, str, int]]
    by_origin: list[tuple[str, str, int]]


def dataset_overview() -> DatasetOverview:
    """Counts for the home page: three small GROUP BY queries."""
    from annotation.models import Source

    sources = dict(Source.choices)
    splits = dict(Split.choices)
    origins = dict(QuestionOrigin.choices)
    by_source = {
        row["source"]: row["n"] for row in Table.objects.values("source").annotate(n=Count("pk"))
    }
    by_split = {
        row["split"]: row["n"] for row in Table.objects.values("split").annotate(n=Count("pk"))
    }
    by_origin = {
        row["origin"]: row["n"] for row in Question.objects.values("origin").annotate(n=Count("pk"))
    }
    return DatasetOverview(
        tables=sum(by_source.values()),
        questions=sum(by_origin.values()),
        by_source=[(k, sources[k], by_source[k]) for k in sources if k in by_source],
        by_split=[(k, splits[k], by_split[k]) for k in splits if k in by_split],
        by_origin=[(k, origins[k], by_origin[k]) for k in origins if k in by_origin],
    )


def table_rendering(*, table: Table, fmt: str) -> str:
    """The table in one of ``hctqa.core.render.FORMATS``."""
    from hctqa.core.render import render
    from hctqa.core.tables import parse_table

    return render(parse_table(table.canonical_csv), table.canonical_csv, fmt)


# --- Annotation work -----------------------------------------------------------------------

# Synthetic tables get their properties from the generator; people annotate the others.
_ANNOTATED_SOURCES = ("psa", "pak", "census", "arxiv", "uploaded")
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
        Table.objects.filter(source__in=_ANNOTATED_SOURCES)
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


def property_queue_next(*, annotator: User, after: str | None = None) -> Table | None:
    """The table this annotator should annotate next.

    Their own unsaved draft comes first (resume where you left off); then the tables they
    have not annotated, fewest annotations first, counting others' drafts in progress so
    that two annotators do not get the same table at once; skipped tables come last.
    """
    draft = (
        PropertyAnnotation.objects.filter(annotator=annotator, source=AnnotationSource.ANNOTATOR)
        .filter(draft__isnull=False, draft_base_version=F("version"))
        .exclude(table_id=after)
        .order_by("-draft_saved_at")
        .values_list("table_id", flat=True)
        .first()
    )
    if draft:
        return Table.objects.defer("canonical_csv").get(pk=draft)
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
    tables = Table.objects.filter(source__in=_ANNOTATED_SOURCES).count()
    return Progress(counts["today"], counts["total"], max(0, tables - counts["total"]))


def question_queue_next(*, annotator: User, after: str | None = None) -> Table | None:
    """Their own draft first; then tables with the fewest human-written questions (uncovered
    tables first) that this annotator has not written for; skipped tables last."""
    draft = (
        QuestionDraft.objects.filter(annotator=annotator)
        .exclude(table_id=after)
        .order_by("-updated_at")
        .values_list("table_id", flat=True)
        .first()
    )
    if draft:
        return Table.objects.defer("canonical_csv").get(pk=draft)
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
    human_questions: list[Question]  # already on this table, so they are not written twice


def question_work(*, annotator: User, table: Table) -> QuestionWork:
    draft = QuestionDraft.objects.filter(annotator=annotator, table=table).first()
    human = list(Question.objects.filter(table=table, origin=QuestionOrigin.HUMAN).order_by("id"))
    return QuestionWork(draft, sorted(human, key=_question_order))


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
    tables = Table.objects.filter(source__in=_ANNOTATED_SOURCES)
    covered = tables.filter(Exists(_human_questions())).count()
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
