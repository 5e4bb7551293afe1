"""Chat prompts for running a model on HCT-QA questions.

The paper's zero-shot prompt is a system message plus a user message holding the table and
the question. ``prompt_messages`` builds it with the table in one of ``TABLE_FORMATS``:

- ``paper``: pandas' text rendering of the canonical CSV. This reproduces the 9,835 released
  prompts (``prompts.jsonl.gz``) byte for byte, given the same question text. The released
  census prompts begin their user message with ``"# "``; the others do not. Pass
  ``PromptTable(source="census")`` to get that quirk. The other formats never have it.
- ``csv``, ``html`` (merged cells as ``rowspan``/``colspan``), ``markdown``, ``json``,
  ``latex`` (``\\multicolumn``/``\\multirow``): the same template with another serialisation,
  so a comparison between formats changes nothing but the table text.
- ``nonsensical_csv``: the CSV with every word of the table replaced by a stable nonsense
  token. The same words in the question get the same tokens. ``nonsense_for`` gives the
  reverse mapping, and ``denonsense`` uses it to map an answer back before scoring.
- ``image``: the user content is a text part and a PNG data-URL part. The PNG is the table's
  own image when there is one, else a pillow rendering (``hctqa.core.images``).

Without a system role (``system_role=False``) the system text goes first in the first user
message, separated from it by ``SYSTEM_SEPARATOR`` (a blank line).

One-shot prompts put the worked example first, as its own exchange: a user message built
exactly like the real one (same format, the example's own table and question), then an
assistant message with the example's answer, then the real user message.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hctqa.core.render import (
    plain_csv,
    to_html,
    to_json_records,
    to_latex,
    to_markdown,
    to_pandas_text,
)
from hctqa.core.tables import parse_table, read_csv_rows

TABLE_FORMATS = (
    "paper",
    "csv",
    "html",
    "markdown",
    "json",
    "latex",
    "nonsensical_csv",
    "image",
)
PROMPT_STYLES = ("zero_shot", "one_shot")

# The released prompts' texts, typos included: they are what the paper's models saw.
SYSTEM_PROMPT = (
    "You are a table question answering assistant. You are given a table and a question. "
    "Your task is to answer the question based on the information in the table. The table "
    "may be messy and not a standard relational table so try to understand the structure of "
    "the table when answering the question. If the question cannot be answered from the "
    "table, return 'No Answer'. Do not provide any explainations, equations, code, or text "
    "explaning intermediate steps in figuring out the answer. Return only the final answer "
    "itself. If there are multiple values, separate each value with the ' || ' token."
)
INSTRUCTION = (
    "Answer the question given the input table. Do not provide any explainations, "
    "equations, code, or text explaning intermediate steps in figuring out the answer. "
    "Return only the final answer itself."
)
_USER_TEMPLATE = (
    "{head}\n # INPUTS: \nTable: \n`{table}` \n\nQuestion: \n`{question}`\n# OUTPUT: \n`Answer:"
)
# The image part takes the table's place; the text says where to look.
_IMAGE_USER_TEMPLATE = (
    "{head}\n # INPUTS: \nTable: the image below.\n\nQuestion: \n`{question}`\n# OUTPUT: \n`Answer:"
)
SYSTEM_SEPARATOR = "\n\n"
# The release's census prompts carry a stray Markdown heading mark before the instruction.
_HEADING_SOURCES = frozenset({"census"})


class PromptError(ValueError):
    """A prompt that cannot be built, with the reason."""


@dataclass(frozen=True)
class PromptTable:
    """A table as a prompt needs it.

    ``source`` is the table's release source (``psa``, ``census``, …). Only the ``paper``
    format reads it, to reproduce the released census prompts. ``image_png`` is the table's
    own image, as PNG bytes; without one the ``image`` format draws the table.
    """

    canonical_csv: str
    image_png: bytes | None = None
    source: str = ""


@dataclass(frozen=True)
class WorkedExample:
    """A solved question on another table, for one-shot prompts; ``answer`` is given in the
    gold-answer format."""

    question: str
    answer: str
    table: PromptTable


# --- Nonsense tokens -----------------------------------------------------------------------

# A word is a run of letters; digits, punctuation and the "__" markers are left as they are.
_WORD = re.compile(r"[^\W\d_]+")
# Aggregate names stay readable, as in the release's _NONSEM tables ("Average", "Total"):
# they name an operation, not a thing of the table's domain.
KEPT_WORDS = frozenset(
    {
        "total",
        "totals",
        "subtotal",
        "subtotals",
        "sum",
        "average",
        "averages",
        "mean",
        "median",
        "maximum",
        "minimum",
        "max",
        "min",
    }
)
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()


def _token(word: str, attempt: int) -> str:
    """Two capitals and three small letters, like the release's ``AAgj``, from SHA-256 (not
    ``hash()``, which changes between processes)."""
    key = word if attempt == 0 else f"{word}\x00{attempt}"
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    letters = [_UPPER[digest[0] % 26], _UPPER[digest[1] % 26]]
    letters += [_LOWER[b % 26] for b in digest[2:5]]
    return "".join(letters)


def nonsense_mapping(texts: Iterable[str]) -> dict[str, str]:
    """A nonsense token for every word in ``texts``, keyed by the lower-cased word.

    A word's token comes from a hash of the word, so it is the same in every process and in
    every table. The rare token that two words of one mapping would share goes to the first
    in sorted order; the other re-hashes until it has its own, so the mapping stays one to
    one and answers can be mapped back.
    """
    words = {m.group(0).lower() for text in texts for m in _WORD.finditer(text)}
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for word in sorted(words):
        if word in KEPT_WORDS:
            continue
        attempt = 0
        token = _token(word, attempt)
        while token.lower() in taken or token.lower() in words:
            attempt += 1
            token = _token(word, attempt)
        taken.add(token.lower())
        mapping[word] = token
    return mapping


def nonsense_text(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with each word that ``mapping`` knows replaced by its token."""
    return _WORD.sub(lambda m: mapping.get(m.group(0).lower(), m.group(0)), text)


def nonsense_for(question: str, canonical_csv: str) -> tuple[str, str, dict[str, str]]:
    """The question and table with the table's words made nonsense.

    Returns ``(question, canonical_csv, reverse)``. Every word of the table is replaced,
    except the aggregate names in ``KEPT_WORDS``. The question's words are replaced when the
    table has them, so the question still points at the same cells. Its other words ("What
    is the", …) stay, so it is still a question. Numbers stay as they are. ``reverse`` maps
    each token to the word as first written in the table, for ``denonsense``.
    """
    mapping, nonsense_csv, reverse = _table_nonsense(canonical_csv)
    return nonsense_text(question, mapping), nonsense_csv, dict(reverse)


@lru_cache(maxsize=32)
def _table_nonsense(canonical_csv: str) -> tuple[dict[str, str], str, dict[str, str]]:
    """The table's part of ``nonsense_for``, cached: a table's questions come together. The
    cached dicts are never handed out to be changed."""
    mapping = nonsense_mapping([canonical_csv])
    reverse: dict[str, str] = {}
    for match in _WORD.finditer(canonical_csv):
        token = mapping.get(match.group(0).lower())
        if token is not None:
            reverse.setdefault(token, match.group(0))
    return mapping, nonsense_text(canonical_csv, mapping), reverse


def denonsense(answer: str, reverse: Mapping[str, str]) -> str:
    """A model's answer with the nonsense tokens mapped back to the table's words.

    Tokens are matched whole and without regard to case, since models often change it; other
    words and all numbers are left alone.
    """
    lookup = {token.lower(): word for token, word in reverse.items()}
    return _WORD.sub(lambda m: lookup.get(m.group(0).lower(), m.group(0)), answer)


# --- Table text ----------------------------------------------------------------------------


@lru_cache(maxsize=32)
def table_text(canonical_csv: str, table_format: str) -> str:
    """The table serialised for a text prompt. Cached: a table's questions come together,
    and pandas' rendering takes milliseconds."""
    if table_format == "paper":
        return to_pandas_text(canonical_csv)
    if table_format in ("csv", "nonsensical_csv"):
        return plain_csv(read_csv_rows(canonical_csv))
    table = _parsed(canonical_csv)
    if table_format == "html":
        return to_html(table, compact=True)
    if table_format == "markdown":
        return to_markdown(table)
    if table_format == "json":
        return to_json_records(table)
    if table_format == "latex":
        return to_latex(table)
    raise PromptError(f"The table format {table_format!r} has no text rendering")


# The other formats of the same table reuse one parse (``HCT`` is immutable).
_parsed = lru_cache(maxsize=8)(parse_table)

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def image_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _table_png(table: PromptTable) -> bytes:
    if table.image_png is not None:
        if not table.image_png.startswith(_PNG_SIGNATURE):
            raise PromptError("The table's image is not a PNG; convert it before prompting")
        return table.image_png
    return _drawn_png(table.canonical_csv)


@lru_cache(maxsize=8)
def _drawn_png(canonical_csv: str) -> bytes:
    """Cached like ``table_text``: drawing a large table takes a tenth of a second."""
    from hctqa.core.images import render_table_png  # pillow is only needed for images

    return render_table_png(canonical_csv)


def _user_content(
    *, question: str, table: PromptTable, table_format: str
) -> str | list[dict[str, Any]]:
    """The user message's content for one question: a string, or text and image parts."""
    try:
        if table_format == "image":
            text = _IMAGE_USER_TEMPLATE.format(head=INSTRUCTION, question=question)
            url = image_data_url(_table_png(table))
            return [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": url}},
            ]
        csv_text = table.canonical_csv
        if table_format == "nonsensical_csv":
            question, csv_text, _reverse = nonsense_for(question, csv_text)
        head = INSTRUCTION
        if table_format == "paper" and table.source in _HEADING_SOURCES:
            head = "# " + INSTRUCTION
        text = table_text(csv_text, table_format)
        return _USER_TEMPLATE.format(head=head, table=text, question=question)
    except PromptError:
        raise
    except ValueError as exc:  # TableFormatError, or pandas' ParserError on a ragged CSV
        raise PromptError(f"The table cannot be read: {exc}") from None


def _with_system_text(
    content: str | list[dict[str, Any]], system: str
) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return system + SYSTEM_SEPARATOR + content
    first, *rest = content
    return [{**first, "text": system + SYSTEM_SEPARATOR + first["text"]}, *rest]


def check_format_and_style(table_format: str, prompt_style: str) -> None:
    """PromptError naming the choices, for an unknown table format or prompt style."""
    if table_format not in TABLE_FORMATS:
        raise PromptError(
            f"Unknown table format {table_format!r}; choose one of {', '.join(TABLE_FORMATS)}"
        )
    if prompt_style not in PROMPT_STYLES:
        raise PromptError(
            f"Unknown prompt style {prompt_style!r}; choose one of {', '.join(PROMPT_STYLES)}"
        )


def _check(
    question: str, table_format: str, prompt_style: str, example: WorkedExample | None
) -> None:
    check_format_and_style(table_format, prompt_style)
    if prompt_style == "one_shot" and example is None:
        raise PromptError("A one_shot prompt needs a worked example (example=WorkedExample(…))")
    if prompt_style == "zero_shot" and example is not None:
        raise PromptError("A zero_shot prompt takes no example; use prompt_style='one_shot'")
    if not question.strip():
        raise PromptError("The question is empty")
    if example is not None and not example.question.strip():
        raise PromptError("The worked example's question is empty")
    if example is not None and not example.answer.strip():
        raise PromptError("The worked example has no answer")


def prompt_messages(
    *,
    question: str,
    table: PromptTable,
    table_format: str,
    prompt_style: str = "zero_shot",
    example: WorkedExample | None = None,
    system_role: bool = True,
) -> list[dict[str, Any]]:
    """The chat messages for one question, in the released file's shape.

    Zero-shot: ``[system, user]``. One-shot: ``[system, user (example), assistant (its
    answer), user]``. With ``system_role=False`` the system message is left out and its text
    starts the first user message. Raises ``PromptError`` for an unknown format or style, a
    one-shot prompt without an example, an empty question or an unreadable table.
    """
    _check(question, table_format, prompt_style, example)
    turns: list[dict[str, Any]] = []
    if example is not None:
        turns.append(
            {
                "role": "user",
                "content": _user_content(
                    question=example.question, table=example.table, table_format=table_format
                ),
            }
        )
        answer = example.answer
        if table_format == "nonsensical_csv":
            # The example's answer speaks the example table's nonsense, as its question does.
            mapping = nonsense_mapping([example.table.canonical_csv])
            answer = nonsense_text(answer, mapping)
        turns.append({"role": "assistant", "content": answer})
    turns.append(
        {
            "role": "user",
            "content": _user_content(question=question, table=table, table_format=table_format),
        }
    )
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, *turns]
    return messages if system_role else without_system_role(messages)


def without_system_role(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``prompt_messages``' messages as they are without a system role: the system message's
    text starts the first user message (for models that refuse a system message)."""
    system, first, *rest = messages
    return [{**first, "content": _with_system_text(first["content"], system["content"])}, *rest]


def prompt_sha256(messages: list[dict[str, Any]]) -> str:
    """A stable hash of the messages (canonical JSON: sorted keys, no spaces, UTF-8), to key
    a cache of model responses."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PromptRecord:
    """One line of a prompts file, in the released ``prompts.jsonl``'s shape (without ``gt``)."""

    qa_id: str
    table_id: str
    prompt: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return {"qa_id": self.qa_id, "table_id": self.table_id, "prompt": self.prompt}


def table_prompt_records(
    *,
    table_id: str,
    table: PromptTable,
    questions: Iterable[tuple[str, str]],
    table_format: str,
    prompt_style: str = "zero_shot",
    system_role: bool = True,
    example: WorkedExample | None = None,
) -> Iterator[PromptRecord]:
    """The prompt records of one table's questions (``(qa_id, text)`` pairs): what
    ``export_prompts`` writes, and a dataset release's prompt files too."""
    for qa_id, text in questions:
        messages = prompt_messages(
            question=text,
            table=table,
            table_format=table_format,
            prompt_style=prompt_style,
            example=example,
            system_role=system_role,
        )
        yield PromptRecord(qa_id=qa_id, table_id=table_id, prompt=messages)
