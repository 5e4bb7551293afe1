"""A track's items as files a system reads: ``items.jsonl`` (one object per item: ``id``,
the inputs it needs, file paths relative to the folder, and ``gold`` for the splits whose
gold is public) and the files. The ``track_items`` command and releases write them; test
gold never: a caller asking for it is refused.

QA's items are the benchmark's verified questions: ``id``, ``question``, ``table_id`` and
``table`` (the canonical CSV), with ``gold`` the gold answer, which is a perfect response.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.models import Split
from dataset.selectors.prompts import prompt_questions
from plumbing.errors import ApplicationError
from tracks import files, selectors
from tracks.registry import TrackInfo

ITEMS_FILE = "items.jsonl"


@dataclass(frozen=True)
class Written:
    items: int
    files: int
    bytes: int


def _qa_records(split: str, data_scope: str, with_gold: bool) -> Iterator[dict[str, Any]]:
    questions = (
        prompt_questions(split=split, data_scope=data_scope)
        .select_related("table")
        .only("id", "text", "gold_answer", "table__id", "table__canonical_csv")
        .order_by("id")
    )
    for q in questions.iterator(chunk_size=2000):
        record = {
            "id": q.id,
            "question": q.text,
            "table_id": q.table_id,
            "table": q.table.canonical_csv,
        }
        if with_gold:
            record["gold"] = q.gold_answer
        yield record


def item_records(
    info: TrackInfo, *, split: str, with_gold: bool, mode: str = "", data_scope: str = "real"
) -> tuple[list[dict[str, Any]], set[str]]:
    """The records of ``items.jsonl`` and the files they name. Gold of the test split is
    refused here, whoever asks."""
    if with_gold and split not in selectors.PUBLIC_SPLITS:
        raise ApplicationError(
            f"The {split} split's gold is hidden: items of it are written without gold"
        )
    if info.is_qa:
        return list(_qa_records(split, data_scope, with_gold)), set()
    records, named = [], set()
    for row in selectors.items_of(track=info.slug, split=split, mode=mode).iterator(
        chunk_size=1000
    ):
        record = selectors.core_item(row).record(with_gold=with_gold)
        if row.mode:
            record.setdefault("mode", row.mode)
        record["source"] = row.source
        records.append(record)
        named.update(row.files)
    return records, named


def items_write(
    info: TrackInfo,
    *,
    split: str,
    out: Path,
    with_gold: bool,
    mode: str = "",
    data_scope: str = "real",
) -> Written:
    """Write ``out/items.jsonl`` (whole or not at all) and the files it names."""
    records, named = item_records(
        info, split=split, with_gold=with_gold, mode=mode, data_scope=data_scope
    )
    out.mkdir(parents=True, exist_ok=True)
    size = files.copy_out(named, out)
    target = out / ITEMS_FILE
    partial = out / f".{ITEMS_FILE}.{uuid.uuid4().hex}.part"
    with partial.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(partial, target)
    return Written(items=len(records), files=len(named), bytes=size + target.stat().st_size)


def split_has_public_gold(split: str) -> bool:
    return split in (Split.TRAIN, Split.VALIDATION)
