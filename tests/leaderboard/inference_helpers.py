"""Shared set-up for the inference-run tests: questions whose right answer a fake model can
read off the prompt, and a quick way to start a run."""

from __future__ import annotations

import re
from typing import Any

from leaderboard.models import InferenceRun
from leaderboard.services import InferenceRunInput, inference_run_create
from tests.factories import QuestionFactory, TableFactory
from tests.fake_openai import Reply

KEY_ENV = "HCTQA_TEST_INFERENCE_API_KEY"
_NUMBER = re.compile(r"What is value number (\d+)\?")


def make_questions(n: int, *, split: str = "test", per_table: int = 3) -> list[str]:
    """``n`` verified real-table questions, ``per_table`` to a table; question k's gold answer
    is ``{gold-k}``, and the question says k."""
    ids = []
    table = None
    for i in range(n):
        if i % per_table == 0:
            table = TableFactory(split=split)
        q = QuestionFactory(
            table=table, text=f"What is value number {i}?", gold_answer=f"{{gold-{i}}}"
        )
        ids.append(q.id)
    return ids


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content)
    return str(content)


def right_answer(body: dict[str, Any]) -> Reply:
    """The fake model that knows every answer."""
    match = _NUMBER.search(last_user_text(body))
    return Reply(f"gold-{match.group(1)}" if match else "No Answer")


def asked(server: Any) -> list[str]:
    """The question number of every request the server received, in order."""
    out = []
    for body in server.requests:
        match = _NUMBER.search(last_user_text(body))
        out.append(match.group(1) if match else "?")
    return out


def start(user: Any, base_url: str, **overrides: Any) -> InferenceRun:
    data = {
        "model_name": "fake-7b",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "modality": "text",
        "table_format": "csv",
        "split": "test",
        "data_scope": "real",
        "weights": "open",
        "parameters_billions": 7,
        "concurrency": 4,
        **overrides,
    }
    return inference_run_create(user=user, data=InferenceRunInput(**data), enqueue=False)
