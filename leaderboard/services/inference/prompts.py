"""What a run sends: each question's messages, built exactly as the prompt export builds them,
the fingerprint of the prompt templates a run records, and the key its answers are cached
under."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from dataset.models import Question, Table
from dataset.selectors import table_png
from hctqa.core.prompts import (
    PromptError,
    PromptTable,
    WorkedExample,
    prompt_messages,
    prompt_sha256,
    without_system_role,
)
from hctqa.core.tracks.prompts import prompt_fingerprint as track_prompt_templates
from hctqa.core.tracks.rendering import region_png
from leaderboard.models import InferenceRun, TableFormat
from tracks import files as track_files
from tracks.models import TrackItem
from tracks.registry import run_messages, track
from tracks.selectors import core_item

_SAMPLE_TABLE = PromptTable("Region,2019,__\n__,Male,Female\nNorth,1,2\n", source="psa")
_SAMPLE_EXAMPLE = WorkedExample("How many in the North?", "{3}", _SAMPLE_TABLE)


def prompt_format_fingerprint(*, table_format: str, prompt_style: str, system_role: bool) -> str:
    """The hash of a fixed sample prompt in this format and style: it changes exactly when the
    prompt templates do, so a run records which version of the prompts it used."""
    messages = prompt_messages(
        question="Which region has 2 women?",
        table=_SAMPLE_TABLE,
        table_format=table_format,
        prompt_style=prompt_style,
        example=_SAMPLE_EXAMPLE if prompt_style == "one_shot" else None,
        system_role=system_role,
    )
    return prompt_sha256(messages)


def cache_key(
    *,
    model: str,
    base_url: str,
    prompt_hash: str,
    temperature: float,
    max_tokens: int,
    scope: str,
) -> str:
    """``scope``: whose credential the answer is made under (``ChatTarget.cache_scope``)."""
    if not scope:
        raise ValueError("A cached answer belongs to a credential")
    payload = {
        "v": 2,
        "model": model,
        "base_url": base_url.rstrip("/"),
        "prompt": prompt_hash,
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
        "scope": scope,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class ImageUnreadable(Exception):
    """A table's own image that the executing worker cannot read: drawing the table instead
    would send other prompts than the export shows, so the run stops."""


@dataclass(frozen=True)
class Prompt:
    """What a run sends for one question or item (``key``), or why it cannot be asked."""

    key: str
    messages: list[dict[str, Any]] | None
    error: str = ""


class RunPrompts:
    """Builds each question's messages; tables are read a chunk at a time and the last few
    are kept, since a table's questions come together."""

    KEEP = 64

    def __init__(self, run: InferenceRun) -> None:
        self.run = run
        self._tables: OrderedDict[str, PromptTable] = OrderedDict()
        self._examples = self._load_examples(run.config.get("example_question_ids") or [])

    def _prompt_table(self, table: Table) -> PromptTable:
        image = None
        if self.run.table_format == TableFormat.IMAGE:
            image = table_png(table)
            if image is None and table.image:
                raise ImageUnreadable(
                    f"The image of table {table.pk} ({table.image.name}) cannot be read where "
                    "the run executes: give the inference worker the same MEDIA_ROOT as the "
                    "web server, then resume the run"
                )
        return PromptTable(canonical_csv=table.canonical_csv, image_png=image, source=table.source)

    def _load_examples(self, ids: list[str]) -> list[tuple[str, WorkedExample]]:
        if self.run.prompt_style != "one_shot":
            return []
        by_id = {
            q.pk: q
            for q in Question.objects.filter(pk__in=ids)
            .select_related("table")
            .only("id", "text", "gold_answer", "table")
        }
        missing = [qid for qid in ids if qid not in by_id]
        if missing or not ids:
            raise PromptError(
                f"The worked example {', '.join(missing) or '(none)'} is gone; start a new run"
            )
        return [
            (
                by_id[qid].table_id,
                WorkedExample(
                    question=by_id[qid].text,
                    answer=by_id[qid].gold_answer,
                    table=self._prompt_table(by_id[qid].table),
                ),
            )
            for qid in ids
        ]

    def load(self, table_ids: set[str]) -> None:
        wanted = [t for t in table_ids if t not in self._tables]
        if wanted:
            fields = ["id", "canonical_csv", "source", "image"]
            for table in Table.objects.filter(pk__in=wanted).only(*fields):
                self._tables[table.pk] = self._prompt_table(table)
        for t in table_ids:
            self._tables.move_to_end(t)
        while len(self._tables) > max(self.KEEP, len(table_ids)):
            self._tables.popitem(last=False)

    def messages_for(self, chunk: list[tuple[str, str, str]]) -> list[Prompt]:
        """Each question's messages (key, text, table id), or why it cannot be asked."""
        self.load({table_id for _, _, table_id in chunk})
        out = []
        for key, text, table_id in chunk:
            try:
                out.append(Prompt(key, self.messages(text, table_id)))
            except PromptError as exc:
                out.append(Prompt(key, None, f"The prompt cannot be built: {exc}"))
        return out

    def messages(self, text: str, table_id: str) -> list[dict[str, Any]]:
        example = None
        if self._examples:
            # Never the question's own table as its example.
            example = next((ex for t, ex in self._examples if t != table_id), self._examples[-1][1])
        return prompt_messages(
            question=text,
            table=self._tables[table_id],
            table_format=self.run.table_format,
            prompt_style=self.run.prompt_style,
            example=example,
            system_role=self.run.system_role,
        )


class TrackRunPrompts:
    """Builds each item's messages for a run on a track beside QA, from the track's
    versioned prompts (``hctqa.core.tracks.prompts``); a vision run sends the item's table
    region as a PNG (``rendering.region_png``)."""

    def __init__(self, run: InferenceRun) -> None:
        self.run = run
        self.info = track(run.track)
        self._file: tuple[str, bytes] | None = None

    def _read(self, relative: str) -> bytes:
        # A document's items come together (ids in order): its file is read once.
        if self._file is None or self._file[0] != relative:
            self._file = (relative, track_files.path_of(relative).read_bytes())
        return self._file[1]

    def _messages(self, row: TrackItem) -> list[dict[str, Any]]:
        item = core_item(row)
        image = None
        if self.info.vision:
            inputs = item.inputs
            image = region_png(
                self._read(inputs["file"]),
                kind=inputs["kind"],
                page=int(inputs["page"]),
                bbox=tuple(inputs["bbox"]),
            )
        messages = run_messages(self.info, item, table_format=self.run.table_format, image=image)
        return messages if self.run.system_role else without_system_role(messages)

    def messages_for(self, chunk: list[tuple[str, str, str]]) -> list[Prompt]:
        rows = TrackItem.objects.in_bulk([int(key) for key, _, _ in chunk])
        out = []
        for key, _, _ in chunk:
            row = rows.get(int(key))
            if row is None:
                out.append(Prompt(key, None, "The item is gone"))
                continue
            try:
                out.append(Prompt(key, self._messages(row)))
            except (OSError, ValueError, KeyError) as exc:
                out.append(Prompt(key, None, f"The prompt cannot be built: {exc}"))
        return out


def track_prompt_fingerprint(*, track_slug: str, table_format: str, system_role: bool) -> str:
    """The hash of a track run's prompts: the track prompts' fingerprint (every template),
    the format sent and the system role."""
    return hashlib.sha256(
        f"{track_prompt_templates()}:{track_slug}:{table_format}:{system_role}".encode()
    ).hexdigest()
