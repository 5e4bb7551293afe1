"""Reads of the dataset. Every page and endpoint goes through these, so the rule that hides
test-split gold answers lives in one place."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from annotation.models import (
    Question,
    QuestionOrigin,
    Split,
    Table,
)

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
