"""Ids for new questions: ``<table_id>--M<k>`` written by an annotator, ``--A<k>`` by a
model, the benchmark's own form.

``k`` is drawn at random from a wide range, not counted on from the table's highest: a
question in the private gold pool keeps its id, and the next one counted on from it left a
gap on the public pages that showed the pool question was there (M0, M1, then M3). A drawn
number says nothing of the others. Ids already given, counted ones included, never change.
"""

from __future__ import annotations

import secrets

from annotation.models import Question, Table

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
