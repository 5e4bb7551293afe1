"""The prompts of the tracks' endpoint baselines, versioned, and strict readers of replies.

As for QA (``hctqa.core.prompts``), a run records which prompts it used: ``PROMPT_VERSION``
names the templates below and ``prompt_fingerprint`` hashes them, so a change to any of
them shows as a new fingerprint even if the version was not bumped.

- **extraction** (vision): the table's image (an item's PNG cropped to its box); the model
  transcribes it as one HTML ``<table>`` with ``rowspan``/``colspan``; ``read_html_reply``
  takes the first ``<table>…</table>`` of the reply and gives ``{"html": ...}``;
- **transformation**: the table in one of the QA text formats; the model writes the
  relational table as CSV with a header row; ``read_csv_reply`` takes the first fenced
  block (or the whole reply) and checks that it is CSV of at least two columns and a row;
- **NL-to-SQL**: the question and the schema; the model writes one SQLite query;
  ``read_sql_reply`` takes the first fenced block (or the whole reply), one statement that
  starts with ``SELECT``, ``WITH`` or ``VALUES``.

A reply that cannot be read raises ``ReplyError``; the run scores that item as missing.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from collections.abc import Mapping
from typing import Any

from hctqa.core.tables import TableFormatError, read_csv_rows
from hctqa.core.tracks.sandbox import QUERY_KEYWORDS, first_keyword

PROMPT_VERSION = "2026-11"
MAX_REPLY_CHARS = 200_000

EXTRACTION_SYSTEM = (
    "You transcribe tables from images into HTML. Reproduce the table's structure exactly: "
    "one <tr> per row, one <td> or <th> per cell, rowspan and colspan for merged cells, the "
    "text of each cell as printed. Return only the <table> element, with no explanation."
)
EXTRACTION_USER = "Transcribe this table as one HTML <table>."
TRANSFORMATION_SYSTEM = (
    "You turn human-centric tables (nested headers, row groups, totals) into relational "
    "tables. Write one row per value of the table, with one column per attribute (each "
    "level of the row and column headers) and a last column Value. Leave out totals, "
    "averages and other aggregates. Return only CSV with a header row, with no explanation."
)
TRANSFORMATION_USER = "Table ({table_format}):\n{table}\n\nThe relational table as CSV:"
SQL_SYSTEM = (
    "You write SQLite queries. Given a question and the schema of one table, return one "
    "SELECT statement that answers the question. Return only the SQL, with no explanation."
)
SQL_USER = "Table {table} with columns:\n{columns}\n\nQuestion: {question}\n\nSQL:"

_FENCE = re.compile(r"```[ \t]*([A-Za-z]*)[ \t]*\n(.*?)(?:```|$)", re.S)
_TABLE = re.compile(r"<table\b.*?</table\s*>", re.S | re.I)


class ReplyError(ValueError):
    """A model's reply that does not hold what the prompt asked for."""


def prompt_fingerprint() -> str:
    """A hash of every template above: it changes exactly when one of them does."""
    templates = [
        PROMPT_VERSION,
        EXTRACTION_SYSTEM,
        EXTRACTION_USER,
        TRANSFORMATION_SYSTEM,
        TRANSFORMATION_USER,
        SQL_SYSTEM,
        SQL_USER,
    ]
    return hashlib.sha256("\x00".join(templates).encode("utf-8")).hexdigest()


# --- Extraction ----------------------------------------------------------------------------


def crop_png(png: bytes, bbox: tuple[float, float, float, float], *, margin: int = 8) -> bytes:
    """The part of a page image inside ``bbox`` (pixels), with a small margin."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        x0, top, x1, bottom = bbox
        box = (
            max(0, int(x0) - margin),
            max(0, int(top) - margin),
            min(image.width, int(x1 + 0.999) + margin),
            min(image.height, int(bottom + 0.999) + margin),
        )
        out = io.BytesIO()
        image.crop(box).save(out, "PNG")
    return out.getvalue()


def extraction_messages(table_png: bytes) -> list[dict[str, Any]]:
    url = "data:image/png;base64," + base64.b64encode(table_png).decode("ascii")
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": EXTRACTION_USER},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        },
    ]


def _checked(reply: Any) -> str:
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyError("The reply is empty")
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyError(f"The reply is over {MAX_REPLY_CHARS:,} characters")
    return reply


def read_html_reply(reply: Any) -> dict[str, str]:
    """``{"html": "<table>…</table>"}``: the reply's first complete table."""
    match = _TABLE.search(_checked(reply))
    if match is None:
        raise ReplyError("The reply holds no complete <table>…</table>")
    return {"html": match.group(0)}


def _fenced(reply: str, languages: tuple[str, ...]) -> str:
    """The first fenced block (of one of ``languages``, or of none named), else the reply."""
    for language, body in _FENCE.findall(reply):
        if not language or language.lower() in languages:
            return body
    return reply


# --- Transformation ------------------------------------------------------------------------


def transformation_messages(table: str, table_format: str) -> list[dict[str, Any]]:
    user = TRANSFORMATION_USER.format(table_format=table_format, table=table)
    return [{"role": "system", "content": TRANSFORMATION_SYSTEM}, {"role": "user", "content": user}]


def read_csv_reply(reply: Any) -> str:
    """The CSV of the reply: a header row and at least one row of two columns or more."""
    text = _fenced(_checked(reply), ("csv",)).strip() + "\n"
    try:
        rows = read_csv_rows(text)
    except TableFormatError as exc:
        raise ReplyError(f"The reply is not CSV: {exc}") from None
    if len(rows) < 2 or len(rows[0]) < 2:
        raise ReplyError("The CSV needs a header row and a row, of two columns at least")
    return text


# --- NL-to-SQL -----------------------------------------------------------------------------


def sql_messages(question: str, schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    lines = []
    for column in schema["columns"]:
        values = column.get("values")
        shown = f" values: {json.dumps(values, ensure_ascii=False)}" if values else ""
        lines.append(f"- {column['name']} ({column['type']}){shown}")
    user = SQL_USER.format(table=schema["table"], columns="\n".join(lines), question=question)
    return [{"role": "system", "content": SQL_SYSTEM}, {"role": "user", "content": user}]


def read_sql_reply(reply: Any) -> str:
    """The one query of the reply, without a trailing semicolon."""
    text = _fenced(_checked(reply), ("sql", "sqlite")).strip()
    keyword = first_keyword(text)
    if keyword.lower() not in QUERY_KEYWORDS:
        raise ReplyError("The reply does not start with a query (SELECT, WITH or VALUES)")
    return text.rstrip().rstrip(";").rstrip()
