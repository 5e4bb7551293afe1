"""Model-generated questions: the prompt that asks a chat model for question/answer pairs on
one table, and the strict reading of its reply. No I/O here; the worker sends the request."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hctqa.core import safe_json
from hctqa.core.answers import AnswerFormatError, canonical_answer
from hctqa.core.wording import counted

QUESTION_KINDS = ("lookup", "filter", "aggregation", "ranking", "yes_no")
MIN_KINDS = 3
QUESTIONS_PER_TABLE = 8

SYSTEM_PROMPT = (
    "You write questions about a single table for a question-answering benchmark. Every "
    "question must be answerable from the table alone, and every answer must be exact. "
    "Reply with one JSON object and nothing else."
)


class GenerationOutputError(ValueError):
    """A model reply that does not follow the schema; the message says where."""


@dataclass(frozen=True)
class GeneratedPair:
    question: str
    answer: str  # canonical gold-answer format
    kind: str


def _instructions(n: int, example: tuple[str, str] | None) -> str:
    lines = [
        f"Write {n} different questions about the table, each with its answer.",
        "",
        "Rules:",
        "- Use only what the table shows; no outside knowledge.",
        "- Mix the kinds of question: lookups, filters (rows meeting a condition), "
        "aggregations (sum, average, count, minimum, maximum), rankings (top or bottom k) "
        f"and yes/no questions. Use at least {MIN_KINDS} kinds.",
        "- Write each answer in the benchmark's format: the values of one result row in "
        "braces separated by ' | ', several rows joined by ' || ', for example "
        "{Doha | 1200} || {Al Rayyan | 950}. A yes/no answer is just Yes or No.",
        "- Copy values exactly as the table writes them.",
    ]
    if example is not None:
        question, answer = example
        lines += ["", "An example, on another table:", f"Question: {question}", f"Answer: {answer}"]
    lines += [
        "",
        "Reply with a JSON object of this shape:",
        '{"questions": [{"question": "...", "answer": "...", "type": "lookup"}]}',
        f"where type is one of {', '.join(QUESTION_KINDS)}.",
    ]
    return "\n".join(lines)


def generation_messages(
    *,
    table_html: str,
    image_data_url: str | None = None,
    example: tuple[str, str] | None = None,
    n: int = QUESTIONS_PER_TABLE,
) -> list[dict[str, Any]]:
    """Chat messages asking for ``n`` pairs. With an image (vision models) the table is sent
    as the image; otherwise as its HTML rendering, merged cells included."""
    instructions = _instructions(n, example)
    if image_data_url:
        user: Any = [
            {"type": "text", "text": instructions + "\n\nThe table is the image below."},
            {"type": "image_url", "image_url": {"url": image_data_url}},
        ]
    else:
        user = instructions + "\n\nThe table, as HTML:\n" + table_html
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.S)


def parse_generation(text: str, *, n: int = QUESTIONS_PER_TABLE) -> list[GeneratedPair]:
    """The reply as exactly ``n`` valid pairs, or GenerationOutputError.

    One code fence around the JSON is tolerated; anything else outside it is not.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise GenerationOutputError("The reply is empty")
    try:
        data = safe_json.loads(body)
    except json.JSONDecodeError as exc:
        hint = " (the reply looks cut short)" if exc.pos >= len(body) - 1 else ""
        raise GenerationOutputError(f"Not JSON at character {exc.pos}: {exc.msg}{hint}") from None
    except safe_json.NestingError as exc:
        raise GenerationOutputError(str(exc)) from None
    if not isinstance(data, dict) or set(data) != {"questions"}:
        raise GenerationOutputError('Expected an object with exactly one key, "questions"')
    items = data["questions"]
    if not isinstance(items, list):
        raise GenerationOutputError('"questions" should be a list')
    if len(items) != n:
        raise GenerationOutputError(f"Expected {counted(n, 'question')}, got {len(items)}")
    pairs: list[GeneratedPair] = []
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        where = f"Question {number}"
        if not isinstance(item, dict) or set(item) != {"question", "answer", "type"}:
            raise GenerationOutputError(
                f'{where}: expected exactly "question", "answer" and "type"'
            )
        question, answer, kind = item["question"], item["answer"], item["type"]
        if not isinstance(question, str) or not question.strip():
            raise GenerationOutputError(f"{where}: the question is empty")
        if kind not in QUESTION_KINDS:
            raise GenerationOutputError(
                f"{where}: type should be one of {', '.join(QUESTION_KINDS)}, not {kind!r}"
            )
        if not isinstance(answer, str):
            raise GenerationOutputError(f"{where}: the answer should be a string")
        try:
            canonical = canonical_answer(answer)
        except AnswerFormatError as exc:
            raise GenerationOutputError(f"{where}: the answer breaks the format: {exc}") from None
        text_key = " ".join(question.lower().split())
        if text_key in seen:
            raise GenerationOutputError(f"{where} repeats an earlier question")
        seen.add(text_key)
        pairs.append(GeneratedPair(" ".join(question.split()), canonical, kind))
    kinds = {p.kind for p in pairs}
    if len(kinds) < min(MIN_KINDS, n):
        raise GenerationOutputError(
            f"The questions should mix at least {MIN_KINDS} kinds, not {len(kinds)}"
        )
    return pairs
