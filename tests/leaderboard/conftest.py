from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import QuestionFactory, TableFactory, UserFactory

# Four real tables, one per source, across the splits; three questions each.
TABLES = {
    "psa--1--1": "train",
    "pak--1--1": "test",
    "census--1--1": "validation",
    "arxiv--1--1": "train",
}


def make_dataset(tables: dict[str, str]) -> dict[str, str]:
    """Three questions on each table (id → split); question id → gold answer."""
    gold = {}
    for table_id, split in tables.items():
        table = TableFactory(id=table_id, source=table_id.split("--")[0], split=split)
        for k in range(3):
            question = QuestionFactory(
                table=table, id=f"{table_id}--M{k}", gold_answer=f"{{{table_id}-answer-{k}}}"
            )
            gold[question.id] = question.gold_answer
    return gold


@pytest.fixture
def dataset(db) -> dict[str, str]:
    """Question id → gold answer."""
    return make_dataset(TABLES)


@pytest.fixture
def public_dataset(db) -> dict[str, str]:
    """The same tables, the test one moved to validation: no gold is hidden, so every figure
    is shown (three test questions would withhold every figure resting on them)."""
    return make_dataset({**TABLES, "pak--1--1": "validation"})


@pytest.fixture
def researcher(db):
    return UserFactory(username="ada", role="researcher")


def answers(gold: dict[str, str], *, right: int | None = None) -> dict[str, str]:
    """Answers to every question; only the first ``right`` ones correct (the others wrong,
    each in its own way, as a model's are)."""
    out = {}
    for i, (qid, answer) in enumerate(sorted(gold.items())):
        correct = right is None or i < right
        out[qid] = answer.strip("{}") if correct else f"wrong {i}"
    return out


def upload(
    records: dict[str, str] | list | bytes, name: str = "predictions.jsonl"
) -> SimpleUploadedFile:
    if isinstance(records, bytes):
        data = records
    elif isinstance(records, dict):
        data = "\n".join(
            json.dumps({"question_id": q, "response": a}) for q, a in records.items()
        ).encode()
    else:
        data = json.dumps(records).encode()
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def submit(owner, gold, *, right=None, predictions=None, **fields):  # type: ignore[no-untyped-def]
    """A submission of answers to every question of ``gold`` (the first ``right`` right), or
    of ``predictions``, by ``owner``; metadata from ``fields`` over plain defaults."""
    from leaderboard import services

    data = services.SubmissionInput(
        **{
            "model_name": "m",
            "weights": "open",
            "parameters_billions": 7,
            "modality": "text",
            "table_format": "paper",
            "split": "all",
            "data_scope": "real",
            **fields,
        }
    )
    if predictions is None:
        predictions = answers(gold, right=right)
    return services.submission_create(owner=owner, data=data, predictions=upload(predictions))


FORM = {
    "model_name": "TableLlama-7B",
    "organisation": "Lab",
    "parameters_billions": "7",
    "weights": "open",
    "modality": "text",
    "table_format": "paper",
    "prompt_style": "zero_shot",
    "split": "test",
    "data_scope": "real",
    "visibility": "public",
    "paper_url": "",
    "code_url": "",
    "description": "",
}


@pytest.fixture
def form_data() -> Callable[..., dict]:
    def make(**overrides: object) -> dict:
        return {**FORM, **overrides}

    return make


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """The board medians are cached by the board's rows; ids start again in each test."""
    from django.core.cache import cache

    cache.clear()
