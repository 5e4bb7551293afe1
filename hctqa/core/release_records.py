"""Every record a dataset release holds for a run of tables, in both editions. Pure: the
caller writes the bytes.

``render_chunk`` takes tables (in id order) with their questions and returns, for each file
of the release it adds to, the bytes to append, keyed ``(edition, path)``:

- ``hf/data/<split>.jsonl``: a record per question (``dataset_card.QUESTION_FEATURES``), with
  the columns the benchmark's own scripts read (``dataset_type``, ``prompt``,
  ``prompt_without_system``, ``answer``);
- ``hf/tables/<split>.jsonl``: a record per table (``dataset_card.TABLE_FEATURES``);
- ``prompts/<format>.jsonl.gz``: the prompt lines ``export_prompts`` writes, as one gzip
  member (concatenated members are one gzip file);
- ``alpaca/<file>.json``: alpaca records, each preceded by ``",\\n"`` (the writer drops the
  first and adds the brackets of the JSON array);
- ``tables.tar.gz``: tar entries (canonical CSV, HTML, a synthetic table's relational table)
  as one gzip member; the writer ends the archive with ``TAR_END``.

Files shared by both editions are keyed ``full``; the public edition gets its own copy only
of what differs: the test split's files, with gold answers, SQL and relational tables empty.

The demo tables (made up to try the platform) are never released: a chunk holding one is
refused.
"""

from __future__ import annotations

import json
import tarfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hctqa.core import alpaca, taxonomy
from hctqa.core.dataset_card import properties_record
from hctqa.core.prompts import (
    TABLE_FORMATS,
    PromptTable,
    table_prompt_records,
    table_text,
    without_system_role,
)

FULL, PUBLIC = "full", "public"
WITHHELD_SPLIT = "test"
# Every table format but the image: its prompts carry the table's PNG in every question's
# prompt, hundreds of megabytes for what hf/images/ holds once.
PROMPT_FORMATS = tuple(f for f in TABLE_FORMATS if f != "image")
# The benchmark's alpaca files hold the paper's prompt (pandas' text rendering).
ALPACA_FORMAT = "paper"
# What the benchmark's scripts filter on: ``dataset_type`` of real and of synthetic tables.
REAL_DATASET_TYPE = "realWorldHCTs"
SYNTHETIC_DATASET_TYPE = "syntheticHCTs"
# Made-up tables for trying the platform: never the benchmark's.
NEVER_RELEASED_SOURCES = frozenset({"demo"})
# A tar archive ends with two empty blocks.
TAR_END = b"\0" * 1024
_GZIP_LEVEL = 1  # prompts compress tenfold even so, and fast


class RecordError(ValueError):
    """A table that cannot be made into records; ``table_id`` names it."""

    def __init__(self, table_id: str, message: str) -> None:
        super().__init__(f"table {table_id}: {message}")
        self.table_id = table_id
        self.message = message


@dataclass(frozen=True)
class TableRow:
    id: str
    source: str
    split: str
    canonical_csv: str
    table_properties: Mapping[str, Any]
    collection: str = ""
    relational_csv: str = ""
    image: str = ""  # the image's path in the Hugging Face folder, or ""
    stem: str = ""  # the table's file name in the archive (its id when that is safe)
    # Shown beside the table; never in a prompt, which stays the paper's byte for byte.
    title: str = ""
    notes: str = ""

    @property
    def is_synthetic(self) -> bool:
        return self.source == "synthetic"

    @property
    def dataset_type(self) -> str:
        return SYNTHETIC_DATASET_TYPE if self.is_synthetic else REAL_DATASET_TYPE


@dataclass(frozen=True)
class QuestionRow:
    id: str
    text: str
    gold_answer: str
    origin: str
    template_number: int | None
    sql: str
    query_properties: Mapping[str, Any]


Key = tuple[str, str]


def chat_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Chat messages as one string, as the benchmark's ``prompt`` columns hold them: JSON,
    which Python's ``eval`` (what the benchmark's scripts call) and ``json.loads`` both turn
    back into the same list. Non-ASCII characters stay as they are: JSON's ``\\u`` escapes of
    characters beyond the BMP are surrogate pairs, which ``eval`` would not join again."""
    return json.dumps(messages, ensure_ascii=False)


def question_record(
    q: QuestionRow,
    t: TableRow,
    table_properties: dict[str, Any],
    prompt: Sequence[Mapping[str, Any]],
    *,
    withheld: bool,
) -> dict[str, Any]:
    """A question's record; ``prompt`` is its paper prompt (``[system, user]``)."""
    return {
        "question_id": q.id,
        "table_id": t.id,
        "source": t.source,
        "collection": t.collection or t.source,
        "split": t.split,
        "dataset_type": t.dataset_type,
        "origin": q.origin,
        "template_number": q.template_number,
        "question": q.text,
        "answer": "" if withheld else q.gold_answer,
        "prompt": chat_text(prompt),
        "prompt_without_system": chat_text(without_system_role(list(prompt))),
        "sql": "" if withheld else q.sql,
        "query_properties": properties_record(taxonomy.QUERY_PROPERTIES, q.query_properties),
        "table": t.canonical_csv,
        "table_title": t.title,
        "table_notes": t.notes,
        "table_properties": table_properties,
        "image": t.image,
    }


def table_record(
    t: TableRow, table_properties: dict[str, Any], questions: int, *, withheld: bool
) -> dict[str, Any]:
    return {
        "table_id": t.id,
        "source": t.source,
        "collection": t.collection or t.source,
        "split": t.split,
        "table": t.canonical_csv,
        "table_title": t.title,
        "table_notes": t.notes,
        "table_properties": table_properties,
        "image": t.image,
        "relational_table": "" if withheld else t.relational_csv,
        "questions": questions,
    }


def html_document(title: str, table_html: str) -> str:
    """A table's HTML rendering as a page of its own."""
    safe = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{safe}</title>"
        "<style>table{border-collapse:collapse}th,td{border:1px solid #999;padding:2px 6px}"
        "th{background:#eef}</style></head>\n<body>\n"
        f"{table_html}\n</body></html>\n"
    )


def tar_header(name: str, size: int, *, mtime: int, directory: bool = False) -> bytes:
    """The header of a regular file (or a folder) of a tar archive, owned by nobody in
    particular, so that the same files make the same archive."""
    info = tarfile.TarInfo(name)
    info.size = 0 if directory else size
    info.mtime = mtime
    info.mode = 0o755 if directory else 0o644
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    return info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="strict")


def tar_padding(size: int) -> bytes:
    """What follows a file's data in a tar archive, up to the next 512-byte block."""
    return b"\0" * (-size % 512)


def tar_entry(name: str, data: bytes, *, mtime: int) -> bytes:
    """One regular file of a tar archive: its header and its data padded to 512 bytes."""
    return tar_header(name, len(data), mtime=mtime) + data + tar_padding(len(data))


def archive_name(version: str, edition: str) -> str:
    """The file name of an edition's one download: its Hugging Face folder as a .tar.gz."""
    return f"hctqa-{version}-{edition}.tar.gz"


def gzip_member(data: bytes) -> bytes:
    compressor = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def _dumps(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


class _Out:
    def __init__(self) -> None:
        self.parts: dict[Key, list[str]] = {}
        self.binary: dict[Key, list[bytes]] = {}

    def add(self, key: Key, text: str) -> None:
        self.parts.setdefault(key, []).append(text)

    def add_bytes(self, key: Key, data: bytes) -> None:
        self.binary.setdefault(key, []).append(data)


def render_chunk(
    items: Sequence[tuple[TableRow, Sequence[QuestionRow]]], *, archive_mtime: int
) -> dict[Key, bytes]:
    """Every release file's share of these tables and questions (see the module's help).

    Raises ``RecordError`` naming a table that cannot be read or prompted.
    """
    out = _Out()
    for t, questions in items:
        if t.source in NEVER_RELEASED_SOURCES:
            raise RecordError(t.id, f"{t.source} tables are never released")
        try:
            _render_table(out, t, questions, archive_mtime=archive_mtime)
        except ValueError as exc:  # PromptError, or TableFormatError from the HTML rendering
            raise RecordError(t.id, str(exc)) from None
    result: dict[Key, bytes] = {}
    for key, parts in out.parts.items():
        data = "".join(parts).encode("utf-8")
        result[key] = gzip_member(data) if key[1].endswith(".gz") else data
    for key, chunks in out.binary.items():
        result[key] = gzip_member(b"".join(chunks))
    return result


def _render_table(
    out: _Out, t: TableRow, questions: Sequence[QuestionRow], *, archive_mtime: int
) -> None:
    withhold = t.split == WITHHELD_SPLIT
    table_properties = properties_record(taxonomy.TABLE_PROPERTIES, t.table_properties)
    html = html_document(t.id, table_text(t.canonical_csv, "html")).encode("utf-8")
    csv_bytes = t.canonical_csv.encode("utf-8")
    stem = t.stem or t.id
    for edition in (FULL, PUBLIC):
        key = (edition, "tables.tar.gz")
        out.add_bytes(key, tar_entry(f"tables/csv/{stem}.csv", csv_bytes, mtime=archive_mtime))
        out.add_bytes(key, tar_entry(f"tables/html/{stem}.html", html, mtime=archive_mtime))
        if t.relational_csv and not (edition == PUBLIC and withhold):
            out.add_bytes(
                key,
                tar_entry(
                    f"tables/relational/{stem}.csv",
                    t.relational_csv.encode("utf-8"),
                    mtime=archive_mtime,
                ),
            )
    tables_file = f"hf/tables/{t.split}.jsonl"
    out.add(
        (FULL, tables_file),
        _dumps(table_record(t, table_properties, len(questions), withheld=False)),
    )
    if withhold:
        out.add(
            (PUBLIC, tables_file),
            _dumps(table_record(t, table_properties, len(questions), withheld=True)),
        )
    if not questions:
        return

    pairs = [(q.id, q.text) for q in questions]
    prompt_table = PromptTable(canonical_csv=t.canonical_csv, source=t.source)
    paper: list[list[dict[str, Any]]] = []
    for table_format in PROMPT_FORMATS:
        key = (FULL, f"prompts/{table_format}.jsonl.gz")
        for record in table_prompt_records(
            table_id=t.id, table=prompt_table, questions=pairs, table_format=table_format
        ):
            # json.dumps' defaults: the lines export_prompts writes.
            out.add(key, json.dumps(record.as_json()) + "\n")
            if table_format == ALPACA_FORMAT:
                paper.append(record.prompt)

    data_file = f"hf/data/{t.split}.jsonl"
    variants = alpaca.VARIANTS if not t.is_synthetic else ("real_and_synthetic",)
    for q, prompt in zip(questions, paper, strict=True):
        out.add(
            (FULL, data_file),
            _dumps(question_record(q, t, table_properties, prompt, withheld=False)),
        )
        for variant in variants:
            path = f"alpaca/{alpaca.file_name(variant, t.split)}"
            record = alpaca.alpaca_record(prompt, q.gold_answer)
            out.add((FULL, path), ",\n" + json.dumps(record, ensure_ascii=False))
            if withhold:
                record = alpaca.alpaca_record(prompt, "")
                out.add((PUBLIC, path), ",\n" + json.dumps(record, ensure_ascii=False))
        if withhold:
            out.add(
                (PUBLIC, data_file),
                _dumps(question_record(q, t, table_properties, prompt, withheld=True)),
            )
