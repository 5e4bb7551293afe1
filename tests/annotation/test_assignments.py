"""Assignments: an admin or adjudicator gives annotators tables (by list or by the dataset's
filters) for table properties or questions, in one transaction and a fixed number of queries;
an annotator's queue serves them first; the overview shows each person's assigned, done and
in-progress tables."""

from __future__ import annotations

import uuid
from unittest import mock

import pytest
from django.db import IntegrityError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation import selectors, services
from annotation.models import Assignment, PropertyAnnotation
from dataset.selectors import TableFilters
from hctqa.core import taxonomy
from plumbing.errors import ApplicationError, Forbidden
from tests.factories import LOOKUP_PROPERTIES, QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

LABELLED = {**taxonomy.TABLE_PROPERTIES.empty(), "standard_relational_table": True}


@pytest.fixture
def judge():
    return UserFactory(username="judge", role="adjudicator")


def _assign(judge, annotators, kind="properties", **tables) -> services.AssignResult:
    return services.tables_assign(
        by=judge, annotator_ids=[a.pk for a in annotators], kind=kind, **tables
    )


def test_a_list_of_tables_to_several_annotators_once(judge, ann, bob) -> None:
    ids = [TableFactory().pk for _ in range(3)]
    result = _assign(judge, [ann, bob], table_ids=ids)
    assert (result.tables, result.created, result.already) == (3, 6, 0)
    assert Assignment.objects.filter(assigned_by=judge).count() == 6
    again = _assign(judge, [ann, bob], table_ids=[*ids, ids[0]])
    assert (again.tables, again.created, again.already) == (3, 0, 6)
    # The other kind of work is another assignment.
    assert _assign(judge, [ann], kind="questions", table_ids=ids[:1]).created == 1
    assert services.describe_assignment(result, annotators=2) == (
        "Assigned 3 tables to 2 annotators: 6 new assignments."
    )


def test_by_filter(judge, ann) -> None:
    TableFactory(id="pak--1--1", source="pak", split="test")
    TableFactory(id="pak--1--2", source="pak", split="train")
    TableFactory(id="psa--1--1", source="psa", split="test")
    result = _assign(judge, [ann], filters=TableFilters(source="pak", split="test"))
    assert result.tables == 1
    assert list(Assignment.objects.values_list("table_id", flat=True)) == ["pak--1--1"]
    with pytest.raises(ApplicationError, match="No table matches these filters"):
        _assign(judge, [ann], filters=TableFilters(source="census"))


def test_every_problem_at_once_and_nothing_written(judge, ann) -> None:
    researcher = UserFactory(username="rita", role="researcher")
    table = TableFactory()
    with pytest.raises(ApplicationError) as caught:
        _assign(judge, [ann, researcher], table_ids=[table.pk, "nope--1", "nope--2"])
    fields = caught.value.by_field
    assert fields["annotators"] == [
        "rita may not annotate table properties: only active annotators, adjudicators and "
        "admins are given work"
    ]
    assert fields["table_ids"] == ["No table has the ids nope--1, nope--2"]
    assert not Assignment.objects.exists()


def test_only_annotators_of_that_work_and_only_active_ones(judge) -> None:
    table = TableFactory()
    gone = UserFactory(username="gone", role="annotator", is_active=False)
    with pytest.raises(ApplicationError, match="gone may not annotate"):
        _assign(judge, [gone], table_ids=[table.pk])
    # Adjudicators and admins annotate too.
    admin = UserFactory(role="admin")
    assert _assign(judge, [judge, admin], kind="questions", table_ids=[table.pk]).created == 2


def test_only_adjudicators_and_admins_assign(client: Client, ann) -> None:
    table = TableFactory()
    with pytest.raises(Forbidden):
        _assign(ann, [ann], table_ids=[table.pk])
    client.force_login(ann)
    assert client.get("/annotate/assignments/").status_code == 403
    response = client.post(
        "/annotate/assignments/",
        {"annotators": [ann.pk], "kind": "properties", "table_ids": table.pk},
    )
    assert response.status_code == 403 and not Assignment.objects.exists()


def test_one_assignment_per_table_annotator_and_kind_in_the_database(judge, ann) -> None:
    table = TableFactory()
    Assignment.objects.create(table=table, annotator=ann, kind="properties", assigned_by=judge)
    with pytest.raises(IntegrityError):
        Assignment.objects.create(table=table, annotator=ann, kind="properties")


def test_a_failure_midway_leaves_nothing(judge, ann) -> None:
    ids = [TableFactory().pk for _ in range(3)]
    real = Assignment.objects.bulk_create

    def then_fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        real(*args, **kwargs)
        raise IntegrityError("the database went away")

    with (
        mock.patch.object(Assignment.objects, "bulk_create", side_effect=then_fail),
        pytest.raises(IntegrityError),
    ):
        _assign(judge, [ann], table_ids=ids)
    assert not Assignment.objects.exists()


def test_assigning_costs_the_same_queries_however_many_tables(judge, ann, bob) -> None:
    few = [TableFactory().pk for _ in range(3)]
    many = [TableFactory().pk for _ in range(60)]

    def queries(ids: list[str], kind: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            _assign(judge, [ann, bob], kind=kind, table_ids=ids)
        return len(captured)

    queries([TableFactory().pk], "properties")  # the assigner's permissions, read once
    assert queries(few, "properties") == queries(many, "questions")


def test_the_queue_serves_assignments_first(judge, ann, bob) -> None:
    light = TableFactory(id="psa--1--1")
    heavy = TableFactory(id="psa--1--2")
    # Someone has annotated the heavy table: without an assignment it comes last.
    services.property_annotation_save(
        annotator=bob, table=heavy, properties=LABELLED, base_version=0
    )
    assert selectors.property_queue_next(annotator=ann).pk == light.pk
    _assign(judge, [ann], table_ids=[heavy.pk])
    assert selectors.property_queue_next(annotator=ann).pk == heavy.pk
    # Done: no longer served first.
    services.property_annotation_save(
        annotator=ann, table=heavy, properties=LABELLED, base_version=0
    )
    assert selectors.property_queue_next(annotator=ann).pk == light.pk


def test_a_draft_of_ones_own_still_comes_first_and_a_skipped_assignment_waits(judge, ann) -> None:
    drafted, assigned, other = (TableFactory(id=f"psa--2--{n}") for n in range(3))
    services.property_draft_save(
        annotator=ann,
        table=drafted,
        properties=taxonomy.TABLE_PROPERTIES.empty(),
        base_version=0,
        client_ms=1,
    )
    _assign(judge, [ann], table_ids=[assigned.pk])
    assert selectors.property_queue_next(annotator=ann).pk == drafted.pk
    assert selectors.property_queue_next(annotator=ann, after=drafted.pk).pk == assigned.pk
    services.annotation_skip(annotator=ann, table=assigned, tool="properties")
    assert selectors.property_queue_next(annotator=ann, after=drafted.pk).pk == other.pk


def test_the_question_queue_serves_assignments_first_too(judge, ann) -> None:
    uncovered = TableFactory(id="psa--3--1")
    covered = TableFactory(id="psa--3--2")
    QuestionFactory(table=covered)
    assert selectors.question_queue_next(annotator=ann).pk == uncovered.pk
    _assign(judge, [ann], kind="questions", table_ids=[covered.pk])
    assert selectors.question_queue_next(annotator=ann).pk == covered.pk
    services.question_write(
        annotator=ann,
        table=covered,
        client_key=uuid.uuid4(),
        text="Which region had the most women in 2020?",
        gold_answer="{South}",
        query_properties=LOOKUP_PROPERTIES,
    )
    assert selectors.question_queue_next(annotator=ann).pk == uncovered.pk


def test_the_overview_counts_assigned_done_and_in_progress(client: Client, judge, ann, bob) -> None:
    tables = [TableFactory() for _ in range(4)]
    _assign(judge, [ann, bob], table_ids=[t.pk for t in tables])
    _assign(judge, [ann], kind="questions", table_ids=[tables[0].pk])
    empty = taxonomy.TABLE_PROPERTIES.empty()
    services.property_annotation_save(
        annotator=ann, table=tables[0], properties=LABELLED, base_version=0
    )
    services.property_draft_save(
        annotator=ann, table=tables[1], properties=empty, base_version=0, client_ms=1
    )
    # A draft after a save: done still, not in progress.
    services.property_draft_save(
        annotator=ann, table=tables[0], properties=empty, base_version=1, client_ms=2
    )
    services.question_draft_save(
        annotator=ann,
        table=tables[0],
        client_key=uuid.uuid4(),
        text="Half a question",
        gold_answer="",
        query_properties={},
        client_ms=3,
    )
    rows = {
        (r.annotator, r.kind): (r.assigned, r.done, r.in_progress, r.waiting)
        for r in selectors.assignment_overview()
    }
    assert rows == {
        ("ann", "properties"): (4, 1, 1, 2),
        ("ann", "questions"): (1, 0, 1, 0),
        ("bob", "properties"): (4, 0, 0, 4),
    }
    client.force_login(judge)
    page = client.get("/annotate/assignments/").text
    assert 'id="assignment-overview"' in page and ">Take back the open ones</button>" in page
    # Ann's hub lists what is hers, the table in progress marked.
    client.force_login(ann)
    hub = client.get("/annotate/").text
    assert "Table properties: 4 assigned · 1 done · 1 in progress" in hub
    assert f'{tables[1].pk}</a> <span class="sub">(table properties, in progress)' in hub


def test_the_overview_costs_the_same_queries_however_many_people(client: Client, judge) -> None:
    client.force_login(judge)
    tables = [TableFactory().pk for _ in range(3)]

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/annotate/assignments/").status_code == 200
        return len(captured)

    _assign(judge, [UserFactory(role="annotator")], table_ids=tables)
    one = queries()
    _assign(judge, [UserFactory(role="annotator") for _ in range(4)], table_ids=tables)
    assert queries() == one


def test_the_page_assigns_by_list_or_filter_and_takes_back_the_open_ones(
    client: Client, judge, ann
) -> None:
    TableFactory(id="arxiv--1--1", source="arxiv", split="validation")
    TableFactory(id="arxiv--1--2", source="arxiv", split="train")
    client.force_login(judge)
    form = client.get("/annotate/assignments/").text
    assert f'value="{ann.pk}"' in form and "> ann</label>" in form
    response = client.post(
        "/annotate/assignments/",
        {"annotators": [ann.pk], "kind": "questions", "table_ids": "arxiv--1--1,\narxiv--1--2"},
    )
    assert response.status_code == 302
    assert Assignment.objects.filter(annotator=ann, kind="questions").count() == 2
    response = client.post(
        "/annotate/assignments/",
        {"annotators": [ann.pk], "kind": "properties", "source": "arxiv", "split": "validation"},
    )
    assert response.status_code == 302
    assert list(
        Assignment.objects.filter(kind="properties").values_list("table_id", flat=True)
    ) == ["arxiv--1--1"]
    bad = client.post("/annotate/assignments/", {"kind": "properties", "table_ids": "x--1"})
    assert bad.status_code == 400
    assert "Choose at least one annotator" in bad.text
    PropertyAnnotation.objects.create(
        table_id="arxiv--1--1",
        annotator=ann,
        properties={},
        version=1,
        saved_at="2026-01-01T00:00Z",
    )
    client.post("/annotate/assignments/withdraw/", {"annotator": ann.pk, "kind": "questions"})
    assert not Assignment.objects.filter(kind="questions").exists()
    client.post("/annotate/assignments/withdraw/", {"annotator": ann.pk, "kind": "properties"})
    # Done work keeps its assignment.
    assert Assignment.objects.filter(kind="properties").count() == 1
