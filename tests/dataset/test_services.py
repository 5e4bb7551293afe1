"""The services other apps make dataset rows with (issue 29): a table from its canonical CSV
or from a grid of merged cells (an accepted candidate), and questions under new ids."""

from __future__ import annotations

import pytest

from dataset.models import Question, QuestionOrigin, QuestionStatus, Split, Table
from dataset.services import NewQuestion, questions_add, table_create
from hctqa.core.extraction.grid import Grid, GridCell, grid_from_canonical
from hctqa.core.splits import split_for_table
from plumbing.errors import ApplicationError
from tests.factories import TableFactory

pytestmark = pytest.mark.django_db

NESTED = "Region,2019,__\n__,Male,Female\nNorth,1,2\n"


def test_a_table_from_a_grid_is_written_as_its_canonical_csv() -> None:
    grid = grid_from_canonical(NESTED)
    table = table_create(table_id="qnpc--1--1", source="psa", grid=grid, title="Voters")
    stored = Table.objects.get(pk="qnpc--1--1")
    assert stored.canonical_csv == grid.to_canonical() == table.canonical_csv
    assert grid_from_canonical(stored.canonical_csv) == grid  # it reads back as that table
    assert stored.split == split_for_table("qnpc--1--1") and stored.title == "Voters"


def test_a_table_from_its_csv_is_read_to_check_it_and_nothing_is_written_when_refused() -> None:
    with pytest.raises(ApplicationError, match="cannot be read"):
        table_create(table_id="x--1--1", source="psa", canonical_csv="a\x00,b\n1,2\n")
    with pytest.raises(ApplicationError, match="cannot be read"):
        table_create(table_id="x--1--2", source="psa", grid=Grid(0, 0, ()))
    with pytest.raises(ApplicationError, match="cannot be read"):
        bad = Grid(1, 1, (GridCell(0, 0, 1, 1, "a\x00b"),))
        table_create(table_id="x--1--3", source="psa", grid=bad)
    TableFactory(id="x--1--4", source="psa", split=Split.TRAIN)
    with pytest.raises(ApplicationError, match="already exists"):
        table_create(table_id="x--1--4", source="psa", canonical_csv=NESTED)
    assert list(Table.objects.values_list("pk", flat=True)) == ["x--1--4"]


def test_questions_are_added_under_new_ids_of_their_kind() -> None:
    table = TableFactory(id="psa--9--1", source="psa")
    made = questions_add(
        table=table,
        kind="A",
        questions=[
            NewQuestion("How many?", "{3}", QuestionOrigin.MODEL, QuestionStatus.UNVERIFIED),
            NewQuestion("Which?", "{North}", QuestionOrigin.MODEL, QuestionStatus.UNVERIFIED),
        ],
    )
    assert len({q.pk for q in made}) == 2
    assert all(q.pk.startswith("psa--9--1--A") for q in made)
    assert Question.objects.filter(table=table, origin="model").count() == 2
    with pytest.raises(ValueError, match="--M<k> or --A<k>"):
        questions_add(table=table, kind="Z", questions=made[:0])
