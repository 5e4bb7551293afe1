"""Giving annotators tables to work on (their queues serve them first), and taking back what
they have not done."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation import permissions as rules
from annotation.models import AnnotationTool, Assignment
from annotation.selectors.assignments import annotators_for, assignments_open_of
from dataset.models import Table
from dataset.selectors import TableFilters, table_list
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError, Problems

# Tables one assignment may cover: a filter matching the whole dataset is a mistake.
MAX_TABLES = 5000
# Unknown ids named in the refusal.
_NAMED = 10
_SEPARATORS = re.compile(r"[\s,;]+")


@dataclass(frozen=True)
class AssignResult:
    tables: int
    created: int
    already: int


def parse_table_ids(text: str) -> list[str]:
    """Table ids typed or pasted: separated by spaces, commas, semicolons or lines; each once,
    in the order given."""
    return list(dict.fromkeys(t for t in _SEPARATORS.split(text) if t))


def _chosen_tables(
    problems: Problems, *, by: Any, table_ids: list[str], filters: TableFilters | None
) -> list[str]:
    table_ids = list(dict.fromkeys(table_ids))
    if table_ids:
        found = set(Table.objects.filter(pk__in=table_ids).values_list("pk", flat=True))
        unknown = [t for t in table_ids if t not in found]
        if unknown:
            named = ", ".join(unknown[:_NAMED]) + (" …" if len(unknown) > _NAMED else "")
            problems.add(
                f"No table has the id{'s' if len(unknown) > 1 else ''} {named}",
                field="table_ids",
            )
        chosen = [t for t in table_ids if t in found]
    elif filters is not None:
        # Only the ids, and one more than allowed, to tell a filter that is too wide.
        chosen = list(
            table_list(filters=filters, viewer=by).values_list("id", flat=True)[: MAX_TABLES + 1]
        )
        if not chosen:
            problems.add("No table matches these filters", field="table_ids")
    else:
        chosen = []
        problems.add("Choose tables: by filters or by a list of ids", field="table_ids")
    if len(chosen) > MAX_TABLES:
        problems.add(
            f"That is more than {MAX_TABLES:,} tables; narrow the filters or split the list",
            field="table_ids",
        )
    return chosen


@transaction.atomic
def tables_assign(
    *,
    by: Any,
    annotator_ids: list[int],
    kind: str,
    table_ids: list[str] | None = None,
    filters: TableFilters | None = None,
) -> AssignResult:
    """Assign the tables named (or those the filters match) to each of these annotators for
    one kind of work. Every problem is reported at once and nothing is written unless all is
    right; the assignments are made in one transaction, the ones that exist kept as they are.
    A fixed number of queries, however many tables."""
    rules.ASSIGNING.check(by)
    problems = Problems()
    if kind not in AnnotationTool.values:
        problems.add("Choose the work: table properties or questions", field="kind")
    annotator_ids = list(dict.fromkeys(annotator_ids))
    if not annotator_ids:
        problems.add("Choose at least one annotator", field="annotators")
    elif kind in AnnotationTool.values:
        able = set(annotators_for(kind).filter(pk__in=annotator_ids).values_list("pk", flat=True))
        if refused := [pk for pk in annotator_ids if pk not in able]:
            names = sorted(
                get_user_model().objects.filter(pk__in=refused).values_list("username", flat=True)
            )
            label = AnnotationTool(kind).label.lower()
            problems.add(
                f"{', '.join(names) or 'Those accounts'} may not annotate {label}: only "
                "active annotators, adjudicators and admins are given work",
                field="annotators",
            )
    chosen = _chosen_tables(problems, by=by, table_ids=table_ids or [], filters=filters)
    problems.raise_if_any()
    before = Assignment.objects.filter(
        kind=kind, annotator_id__in=annotator_ids, table_id__in=chosen
    ).count()
    Assignment.objects.bulk_create(
        [
            Assignment(table_id=table_id, annotator_id=annotator_id, kind=kind, assigned_by=by)
            for annotator_id in annotator_ids
            for table_id in chosen
        ],
        ignore_conflicts=True,
        batch_size=500,
    )
    total = len(chosen) * len(annotator_ids)
    return AssignResult(tables=len(chosen), created=total - before, already=before)


@transaction.atomic
def assignments_withdraw(*, by: Any, annotator_id: int, kind: str) -> int:
    """Take back this person's assignments of one kind that they have not done (what they
    did stays, with its assignment). How many were taken back."""
    rules.ASSIGNING.check(by)
    if kind not in AnnotationTool.values:
        raise ApplicationError("Choose the work: table properties or questions", field="kind")
    deleted, _ = Assignment.objects.filter(
        pk__in=list(
            assignments_open_of(annotator=annotator_id, kind=kind).values_list("pk", flat=True)
        )
    ).delete()
    return deleted


def describe_assignment(result: AssignResult, *, annotators: int) -> str:
    """What an assignment did, for the page."""
    text = (
        f"Assigned {counted(result.tables, 'table')} to "
        f"{counted(annotators, 'annotator')}: {counted(result.created, 'new assignment')}"
    )
    if result.already:
        text += f" ({result.already:,} {'was' if result.already == 1 else 'were'} there already)"
    return text + "."
