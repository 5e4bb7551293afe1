"""New questions on a table, and their ids: ``<table_id>--M<k>`` written by an annotator,
``--A<k>`` by a model, the benchmark's own form.

``k`` is drawn at random from a wide range, not counted on from the table's highest: a
question in the private gold pool keeps its id, and the next one counted on from it left a
gap on the public pages that showed the pool question was there (M0, M1, then M3). A drawn
number says nothing of the others. Ids already given, counted ones included, never change.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dataset.models import Question, Table

# Six digits: short ids, and a draw rarely hits one taken (then it is drawn again).
FIRST_NUMBER = 100_000
NUMBERS = 900_000


def new_question_ids(table: Table, kind: str, n: int) -> list[str]:
    """``n`` unused ids of ``kind`` (``M`` or ``A``) on ``table``, which the caller has
    locked (select_for_update) so that two writers cannot draw the same one."""
    if kind not in ("M", "A"):
        raise ValueError(f"Question ids are --M<k> or --A<k>, not --{kind}<k>")
    taken = set(Question.objects.filter(table=table).values_list("id", flat=True))
    ids: list[str] = []
    while len(ids) < n:
        question_id = f"{table.pk}--{kind}{FIRST_NUMBER + secrets.randbelow(NUMBERS)}"
        if question_id not in taken:
            taken.add(question_id)
            ids.append(question_id)
    return ids


@dataclass(frozen=True)
class NewQuestion:
    """A question to add to a table: its text and gold answer, who made it, and its state."""

    text: str
    gold_answer: str
    origin: str
    status: str
    query_properties: dict[str, Any] = field(default_factory=dict)


def questions_add(*, table: Table, kind: str, questions: Sequence[NewQuestion]) -> list[Question]:
    """Add ``questions`` to ``table``, each under a new id of ``kind`` (``M``: written by an
    annotator, ``A``: by a model). The caller has locked the table (select_for_update), so
    two writers never draw the same id; run it in the caller's transaction."""
    ids = new_question_ids(table, kind, len(questions))
    made = [
        Question(
            id=question_id,
            table=table,
            text=new.text,
            gold_answer=new.gold_answer,
            origin=new.origin,
            status=new.status,
            query_properties=new.query_properties,
        )
        for question_id, new in zip(ids, questions, strict=True)
    ]
    return Question.objects.bulk_create(made)
