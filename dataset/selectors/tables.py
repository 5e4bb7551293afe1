"""Reads of the dataset's tables and questions. Every page and endpoint goes through these,
so the rules that hide test-split gold answers (``gold_answer_visible``) and private
questions (``questions_visible``) live in one place."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Case, Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from dataset.models import (
    NOT_COLLECTIONS,
    Collection,
    Question,
    QuestionOrigin,
    QuestionStatus,
    Source,
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


def source_choices() -> list[tuple[str, str]]:
    """Every source a table can have, as (code, label): the release's four, the other
    collections by name, then synthetic and demo. The release's four are listed even when
    their collection rows are missing (a database emptied and re-imported)."""
    names = {s.value: s.label for s in Source if s.value not in NOT_COLLECTIONS}
    release = list(names)
    names.update(Collection.objects.values_list("code", "name"))
    others = sorted((c for c in names if c not in release), key=lambda c: names[c].lower())
    return [(c, names[c]) for c in release + others] + [
        (s.value, s.label) for s in (Source.SYNTHETIC, Source.DEMO)
    ]


def source_name() -> Coalesce:
    """A table's source as people read it, for annotating a list in its one query: its
    collection's name, else the label of the release's or a generated source, else the code."""
    collection = Collection.objects.filter(code=OuterRef("source")).values("name")[:1]
    labels = Case(*(When(source=s.value, then=Value(s.label)) for s in Source), default=F("source"))
    return Coalesce(Subquery(collection), labels)


def real_tables(prefix: str = "") -> Q:
    """Real tables: every collection's, so the four release sources and every table ingested
    since. Synthetic and demo tables are the other kinds. ``prefix`` reaches the table from
    another model (``"table__"``)."""
    return ~Q(**{f"{prefix}source__in": NOT_COLLECTIONS})


def scope_filter(data_scope: str, prefix: str = "table__") -> Q:
    """The tables of a data scope, ``"real"``, ``"synthetic"`` or ``"demo"`` (the made-up
    tables, a board of their own), as the scorer selects them."""
    if data_scope in NOT_COLLECTIONS:
        return Q(**{f"{prefix}source": data_scope})
    return real_tables(prefix)


def can_see_private_questions(user: User) -> bool:
    return bool(user.is_authenticated and user.has_perm("dataset.view_private_questions"))


def private_questions() -> Q:
    """Questions only admins see: the private gold pool, and model-generated questions that
    are not (or not yet) verified. Verifiers are served both beside each other; if either
    showed on a public page, a verifier could look the question up and tell gold (absent)
    from a real item (present), or read a proposed answer before judging it."""
    return Q(in_gold_pool=True) | (
        Q(origin=QuestionOrigin.MODEL) & ~Q(status=QuestionStatus.VERIFIED)
    )


def questions_visible(*, user: User) -> QuerySet[Question]:
    """The questions this user may see at all (gold answers aside: ``gold_answer_visible``)."""
    if can_see_private_questions(user):
        return Question.objects.all()
    return Question.objects.exclude(private_questions())


def human_questions_of_each_table() -> QuerySet[Question]:
    """The human-written questions of the table an outer query is on (``OuterRef("pk")``),
    for ``Exists`` and counts over a list of tables."""
    return Question.objects.filter(table=OuterRef("pk"), origin=QuestionOrigin.HUMAN)


def table_list(*, filters: TableFilters, viewer: User) -> QuerySet[Table]:
    """Tables matching the filters, with the counts of the questions this viewer may see, in
    id order. Counts, filters and search all read the same visible questions, so none of
    them reveals a private one.

    Filters on questions use EXISTS rather than joins, so the counts stay per table and the
    page costs one query whatever the size of the dataset.
    """
    shown = questions_visible(user=viewer)
    tables = Table.objects.all()
    if filters.source:
        tables = tables.filter(source=filters.source)
    if filters.split:
        tables = tables.filter(split=filters.split)
    if filters.table_property:
        # A JSON key lookup works on SQLite and PostgreSQL alike.
        tables = tables.filter(**{f"table_properties__{filters.table_property}": True})
    if filters.has_human_question is not None:
        exists = Exists(shown.filter(table=OuterRef("pk"), origin=QuestionOrigin.HUMAN))
        tables = tables.filter(exists if filters.has_human_question else ~exists)
    if filters.search:
        text = filters.search
        tables = tables.filter(
            Q(id__icontains=text)
            | Q(canonical_csv__icontains=text)
            | Exists(shown.filter(table=OuterRef("pk"), text__icontains=text))
        )
    # Correlated subqueries, not JOIN + GROUP BY: count() drops them, and the page query
    # computes them for its own rows only.
    return (
        tables.defer("canonical_csv")
        .annotate(
            source_name=source_name(),
            question_count=_question_count(shown),
            human_question_count=_question_count(shown.filter(origin=QuestionOrigin.HUMAN)),
        )
        .order_by("id")
    )


@dataclass(frozen=True)
class SearchHit:
    """Where a table matched a search, with the matched text and a little around it. The
    template escapes each part and marks the middle one."""

    where: str  # "table id", "cell" or "question"
    before: str
    match: str
    after: str


_CONTEXT = 40


def _snippet(where: str, text: str, needle: str) -> SearchHit | None:
    at = text.casefold().find(needle.casefold())
    if at < 0:
        return None
    end = at + len(needle)
    start, stop = max(0, at - _CONTEXT), min(len(text), end + _CONTEXT)
    before = ("…" if start else "") + text[start:at]
    after = text[end:stop] + ("…" if stop < len(text) else "")
    return SearchHit(where, before, text[at:end], after)


def search_hits(*, table_ids: list[str], search: str, viewer: User) -> dict[str, SearchHit]:
    """For each table of a result page, the text the search matched: its id, else a cell,
    else one of the questions this viewer may see. Two queries at most, for the page's rows
    only."""
    search = search.strip()
    if not search or not table_ids:
        return {}
    hits: dict[str, SearchHit] = {}
    for table_id in table_ids:
        if hit := _snippet("table id", table_id, search):
            hits[table_id] = hit
    rest = [t for t in table_ids if t not in hits]
    if rest:
        for table_id, canonical in Table.objects.filter(
            pk__in=rest, canonical_csv__icontains=search
        ).values_list("id", "canonical_csv"):
            needle = search.casefold()
            line = next((ln for ln in canonical.splitlines() if needle in ln.casefold()), "")
            # The row's cells as a reader sees them: merged-cell marks dropped, " | " between.
            cells = [c.strip() for c in next(csv.reader([line])) if c.strip() not in ("", "__")]
            if hit := _snippet("cell", " | ".join(cells), search):
                hits[table_id] = hit
    rest = [t for t in table_ids if t not in hits]
    if rest:
        for table_id, text in (
            questions_visible(user=viewer)
            .filter(table_id__in=rest, text__icontains=search)
            .order_by("table_id", "id")
            .values_list("table_id", "text")
        ):
            if table_id not in hits and (hit := _snippet("question", text, search)):
                hits[table_id] = hit
    return hits


def _question_count(questions: QuerySet[Question]) -> Coalesce:
    counted = (
        questions.filter(table=OuterRef("pk"))
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


def question_order(question: Question) -> tuple[int, str, int, str]:
    """The sort key of a table's questions as pages list them."""
    # M0, M1, …, M10 rather than M0, M1, M10: human-written first, then model, then templates.
    match = _QUESTION_NUMBER.search(question.id)
    origin_rank = {"human": 0, "model": 1, "synthetic": 2}.get(question.origin, 3)
    if match:
        return (origin_rank, match.group(1), int(match.group(2)), question.id)
    return (origin_rank, "", 0, question.id)


def question_list_for_table(*, table: Table, viewer: User) -> list[Question]:
    questions = list(questions_visible(user=viewer).filter(table=table))
    for q in questions:
        q.table = table  # Avoid one query per question when reading q.split.
    return sorted(questions, key=question_order)


@dataclass(frozen=True)
class QuestionFilters:
    table: str = ""
    source: str = ""
    split: str = ""
    origin: str = ""
    status: str = ""
    search: str = ""


def question_list(*, filters: QuestionFilters, viewer: User) -> QuerySet[Question]:
    questions = questions_visible(user=viewer).select_related("table").defer("table__canonical_csv")
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


def question_get(*, question_id: str, viewer: User) -> Question:
    """The question, or 404: a private one is as absent as one that does not exist."""
    return get_object_or_404(
        questions_visible(user=viewer).select_related("table").defer("table__canonical_csv"),
        pk=question_id,
    )


def can_see_test_gold(user: User) -> bool:
    return bool(user.is_authenticated and user.has_perm("dataset.view_test_gold"))


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


def _source_order(labels: dict[str, str]):  # type: ignore[no-untyped-def]
    order = {code: i for i, code in enumerate(labels)}
    return lambda item: (order.get(item[0], len(order)), item[0])


def dataset_overview(*, viewer: User) -> DatasetOverview:
    """Counts for the home page, of what this viewer may see: three small GROUP BY queries."""
    sources = dict(source_choices())
    splits = dict(Split.choices)
    origins = dict(QuestionOrigin.choices)
    by_source = {
        row["source"]: row["n"] for row in Table.objects.values("source").annotate(n=Count("pk"))
    }
    by_split = {
        row["split"]: row["n"] for row in Table.objects.values("split").annotate(n=Count("pk"))
    }
    by_origin = {
        row["origin"]: row["n"]
        for row in questions_visible(user=viewer).values("origin").annotate(n=Count("pk"))
    }
    return DatasetOverview(
        tables=sum(by_source.values()),
        questions=sum(by_origin.values()),
        by_source=[
            (k, sources.get(k, k), n)
            for k, n in sorted(by_source.items(), key=_source_order(sources))
        ],
        by_split=[(k, splits[k], by_split[k]) for k in splits if k in by_split],
        by_origin=[(k, origins[k], by_origin[k]) for k in origins if k in by_origin],
    )


def table_rendering(*, table: Table, fmt: str) -> str:
    """The table in one of ``hctqa.core.render.FORMATS``."""
    from hctqa.core.render import render
    from hctqa.core.tables import parse_table

    return render(parse_table(table.canonical_csv), table.canonical_csv, fmt)
