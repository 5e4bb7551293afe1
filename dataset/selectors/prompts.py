"""Reads that turn benchmark questions into model prompts (``hctqa.core.prompts``)."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterator

from django.db.models import QuerySet
from django.db.models.functions import Length

from dataset.models import Question, QuestionStatus, Table
from dataset.selectors.tables import scope_filter
from hctqa.core.prompts import (
    PromptError,
    PromptRecord,
    PromptTable,
    WorkedExample,
    check_format_and_style,
    table_prompt_records,
)

PROMPT_SPLITS = ("test", "validation", "train", "all")
PROMPT_SCOPES = ("real", "synthetic", "demo")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def prompt_questions(*, split: str, data_scope: str) -> QuerySet[Question]:
    """The verified questions of a split and scope, the private gold pool left out: the same
    selection the leaderboard scores a submission on (``leaderboard.selectors
    .benchmark_questions``)."""
    if split not in PROMPT_SPLITS:
        raise PromptError(f"Unknown split {split!r}; choose one of {', '.join(PROMPT_SPLITS)}")
    if data_scope not in PROMPT_SCOPES:
        raise PromptError(f"Unknown scope {data_scope!r}; choose one of {', '.join(PROMPT_SCOPES)}")
    questions = Question.objects.filter(
        scope_filter(data_scope), status=QuestionStatus.VERIFIED, in_gold_pool=False
    )
    if split != "all":
        questions = questions.filter(table__split=split)
    return questions


def table_png(table: Table) -> bytes | None:
    """The table's own image as PNG (converted if stored in another format), or None when it
    has none or the file cannot be read: the prompt then draws the table instead. The prompt
    export and inference runs both use this, so both send the same bytes."""
    if not table.image:
        return None
    try:
        with table.image.open("rb") as handle:
            data = handle.read()
    except (OSError, ValueError):
        return None
    if data.startswith(_PNG_SIGNATURE):
        return data
    from PIL import Image, UnidentifiedImageError  # only image prompts need pillow

    try:
        with Image.open(io.BytesIO(data)) as picture:
            out = io.BytesIO()
            try:
                picture.save(out, format="PNG")
            except OSError:  # a mode PNG cannot hold (CMYK)
                out = io.BytesIO()
                picture.convert("RGB").save(out, format="PNG")
            return out.getvalue()
    except (OSError, UnidentifiedImageError):
        return None


def _prompt_table(table: Table, *, with_image: bool) -> PromptTable:
    image = table_png(table) if with_image else None
    if with_image and image is None and table.image:
        raise PromptError(f"The image of table {table.pk} ({table.image.name}) cannot be read")
    return PromptTable(canonical_csv=table.canonical_csv, image_png=image, source=table.source)


def one_shot_example_ids(*, data_scope: str) -> list[str]:
    """The two worked examples of one-shot prompts, for the export and inference runs alike:
    verified train-split questions (public gold, so no hidden answer goes to a model provider)
    with a gold answer, on the two smallest tables (ties by id). A question on the first
    example's table gets the second, so an example is never about the table being asked
    about. Empty when there are not two such tables."""
    rows = (
        prompt_questions(split="train", data_scope=data_scope)
        .exclude(gold_answer="")
        .annotate(csv_length=Length("table__canonical_csv"))
        .order_by("csv_length", "table_id", "id")
        .values_list("id", "table_id")
    )
    picked: list[tuple[str, str]] = []
    for question_id, table_id in rows.iterator(chunk_size=200):
        if picked and picked[0][1] == table_id:
            continue
        picked.append((question_id, table_id))
        if len(picked) == 2:
            return [question_id for question_id, _ in picked]
    return []


def _one_shot_examples(*, data_scope: str, with_image: bool) -> list[tuple[str, WorkedExample]]:
    ids = one_shot_example_ids(data_scope=data_scope)
    if not ids:
        raise PromptError("One_shot prompts need verified train-split questions on two tables")
    questions = Question.objects.select_related("table").in_bulk(ids)
    return [
        (
            questions[qid].table_id,
            WorkedExample(
                questions[qid].text,
                questions[qid].gold_answer,
                _prompt_table(questions[qid].table, with_image=with_image),
            ),
        )
        for qid in ids
    ]


def prompt_records(
    *,
    table_format: str,
    split: str = "all",
    data_scope: str = "real",
    prompt_style: str = "zero_shot",
    system_role: bool = True,
) -> Iterator[PromptRecord]:
    """One prompt per question of the split and scope, by table id then question id.

    Tables are read one at a time, so memory stays flat whatever the size of the export.
    Raises ``PromptError`` for an unknown format, style, split or scope before yielding.
    """
    check_format_and_style(table_format, prompt_style)
    questions = prompt_questions(split=split, data_scope=data_scope)
    with_image = table_format == "image"
    examples = (
        _one_shot_examples(data_scope=data_scope, with_image=with_image)
        if prompt_style == "one_shot"
        else []
    )
    return _records(
        questions=questions,
        table_format=table_format,
        prompt_style=prompt_style,
        system_role=system_role,
        examples=examples,
        with_image=with_image,
    )


def _tables_in_order(table_ids: list[str], chunk: int = 100) -> Iterator[Table]:
    """The tables by id, a chunk at a time so memory stays flat. By the ids already read
    rather than a subquery: right after a bulk import PostgreSQL has no statistics yet, and
    planned the semi-join as a nested loop that took minutes."""
    for start in range(0, len(table_ids), chunk):
        ids = table_ids[start : start + chunk]
        tables = Table.objects.only("id", "source", "canonical_csv", "image").in_bulk(ids)
        yield from (tables[table_id] for table_id in ids)


def _records(
    *,
    questions: QuerySet[Question],
    table_format: str,
    prompt_style: str,
    system_role: bool,
    examples: list[tuple[str, WorkedExample]],
    with_image: bool,
) -> Iterator[PromptRecord]:
    by_table: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for qa_id, table_id, text in questions.order_by("table_id", "id").values_list(
        "id", "table_id", "text"
    ):
        by_table[table_id].append((qa_id, text))
    # In the database's order of table ids, as the questions were read.
    for table in _tables_in_order(list(by_table)):
        example = None
        if examples:
            example = examples[1][1] if examples[0][0] == table.id else examples[0][1]
        yield from table_prompt_records(
            table_id=table.id,
            table=_prompt_table(table, with_image=with_image),
            questions=by_table[table.id],
            table_format=table_format,
            prompt_style=prompt_style,
            system_role=system_role,
            example=example,
        )
