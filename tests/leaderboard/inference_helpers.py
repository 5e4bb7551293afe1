"""Shared set-up for the inference-run tests: questions whose right answer a fake model can
read off the prompt, and a quick way to start a run."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from endpoints.models import Endpoint
from endpoints.services import base_url_checked
from leaderboard.models import InferenceRun
from leaderboard.services import InferenceRunInput, inference_run_create
from tests.factories import QuestionFactory, TableFactory
from tests.fake_openai import Reply

KEY_ENV = "HCTQA_TEST_INFERENCE_API_KEY"
_NUMBER = re.compile(r"What is value number (\d+)\?")


def quick_inference(settings: Any, monkeypatch: Any) -> None:
    """Retries in milliseconds, a short request timeout, and the key's variable set."""
    settings.INFERENCE_RETRY_BASE_MS = 1
    settings.INFERENCE_RETRY_MAX_SECONDS = 1
    settings.INFERENCE_REQUEST_TIMEOUT = 5
    monkeypatch.setenv(KEY_ENV, "sk-test")


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


def registered(base_url: str, *, name: str = "", **fields: Any) -> Endpoint:
    """The endpoint an admin registered at ``base_url`` (the tests' local server), open to
    researchers, with its key in KEY_ENV on the worker."""
    base_url = base_url_checked(base_url, allow_private=True)
    endpoint, _ = Endpoint.objects.get_or_create(
        base_url=base_url,
        name=name or "ep-" + hashlib.sha256(base_url.encode()).hexdigest()[:8],
        defaults={"api_key_env": KEY_ENV, "open_to_researchers": True, **fields},
    )
    return endpoint


def start(
    user: Any, base_url: str, *, own: bool = False, api_key: str = "", **overrides: Any
) -> InferenceRun:
    """Start a run on ``base_url``: a registered endpoint there, or with ``own`` the user's
    own endpoint (with ``api_key``, if given)."""
    where = {"base_url": base_url} if own else {"endpoint": registered(base_url).name}
    data = {
        "model_name": "fake-7b",
        **where,
        "api_key": api_key,
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
