"""What the three new tracks share: items, submission files, per-item results, splits.

A **track** is a task with its own items, gold, submission format and scorer. QA is the
first; ``TRACKS`` are the three this package adds. Every track speaks the same shapes:

- an ``Item``: its id, the inputs a system is given (JSON-ready, with the files they name),
  its gold (exactly a perfect prediction) and what else the scorer reads (``reference``);
- a submission: JSON lines ``{"id": ..., "prediction": ...}`` (``read_submission``);
- a ``Scorecard``: the track's figures over all items and one ``ItemResult`` per item, with
  the reason when an item scored 0 for a cause other than a wrong answer.

An item's split is its table's split (``item_splits``), so that no track's public gold gives
away another track's hidden gold.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from hctqa.core.predictions import PredictionsError, read_predictions
from hctqa.core.splits import SPLITS, Split, split_for_table
from hctqa.core.wording import counted

Track = Literal["extraction", "transformation", "sql"]
TRACKS: tuple[Track, ...] = ("extraction", "transformation", "sql")

# The longest prediction one item may take, in characters (a string prediction) or, for the
# extraction track's objects, as a JSON record (16 times this, see ``predictions``).
MAX_PREDICTION_CHARS: dict[Track, int] = {
    "extraction": 256 * 1024,
    "transformation": 256 * 1024,
    "sql": 20_000,
}
DEFAULT_MAX_BYTES = 200 * 1024 * 1024

# Why an item scored 0 other than by being wrong. The scorers of every track use these codes.
REASON_MISSING = "missing"  # the submission has no prediction for the item (or null)
REASON_INVALID = "invalid"  # the prediction cannot be read (bad cells, HTML, CSV, SQL text)


class TrackError(ValueError):
    """Input a track function cannot work with (a table, an option); the message says why."""


class PredictionError(ValueError):
    """One prediction that cannot be scored. ``code`` is one of the ``REASON_*`` codes (or the
    SQL sandbox's); the message is what the item's result records."""

    def __init__(self, message: str, code: str = REASON_INVALID) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Item:
    """One item of a track.

    - ``inputs``: what a system is given, JSON-ready; file inputs name a path relative to
      the items folder, and ``files`` holds their bytes under those paths;
    - ``gold``: exactly the prediction that scores 1 on every figure;
    - ``reference``: what else the scorer reads (the relational table of an NL-to-SQL item,
      its gold answer); hidden exactly like ``gold``;
    - ``table_id``: the dataset table the item is made from; ``split_key``: the unit a split
      is drawn for (the table, or the document for a page of real documents);
    - ``source``: where the item and its gold come from (``synthetic``, ``icdar``,
      ``accepted``), so that a board can show figures per source.
    """

    id: str
    track: Track
    table_id: str
    inputs: Mapping[str, Any]
    gold: Any
    reference: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, bytes] = field(default_factory=dict)
    split_key: str = ""
    source: str = "synthetic"

    def record(self, *, with_gold: bool) -> dict[str, Any]:
        """The item's line of ``items.jsonl``: ``id``, its inputs, and ``gold`` if asked (for
        train and validation only)."""
        out: dict[str, Any] = {"id": self.id, **self.inputs}
        if with_gold:
            out["gold"] = self.gold
        return out


@dataclass(frozen=True)
class ItemResult:
    """One item's figures. ``reason`` is empty when the prediction was scored as given, else
    a ``REASON_*`` (or sandbox) code with ``message`` saying what happened; such an item
    scores 0. ``detail`` holds what a result page shows (an executed result, counts)."""

    id: str
    figures: Mapping[str, float]
    reason: str = ""
    message: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, **self.figures}
        if self.reason:
            out["reason"] = self.reason
            out["message"] = self.message
        if self.detail:
            out["detail"] = dict(self.detail)
        return out


@dataclass(frozen=True)
class Scorecard:
    """A submission scored on one track: ``figures`` under the names ``score_track`` prints,
    over ``n`` items; ``results`` per item, in the items' order."""

    track: Track
    n: int
    figures: Mapping[str, float]
    results: Mapping[str, ItemResult]
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def reasons(self) -> dict[str, int]:
        """How many items scored 0 for each reason (a missing prediction, a broken limit)."""
        return dict(Counter(r.reason for r in self.results.values() if r.reason))

    def as_dict(self) -> dict[str, Any]:
        """``{"n": ..., <figures>..., "reasons": {...}}``: what ``score_track`` prints."""
        return {"n": self.n, **self.figures, **self.extra, "reasons": self.reasons}


def mean(values: Iterable[float]) -> float:
    """The mean, 0 for no values (a track with no items scores 0)."""
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


# --- Submission files ----------------------------------------------------------------------


def read_submission(
    source: bytes | IO[bytes],
    *,
    track: Track,
    known_ids: Collection[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> dict[str, Any]:
    """Item id → prediction, from a submission file: JSON lines (or a JSON array, gzipped or
    not) of ``{"id": ..., "prediction": ...}``, read by the QA board's reader with its limits.

    A prediction is a string (transformation: CSV text; NL-to-SQL: SQL text), an object
    (extraction: cells or HTML, see ``extraction``), or null (no prediction). A file that
    breaks the format is refused whole with ``PredictionsError``; a prediction whose content
    cannot be read is scored 0 later, with the reason, and the rest of the file is scored.
    """
    if track not in TRACKS:
        raise TrackError(f"Unknown track {track!r}; choose one of {', '.join(TRACKS)}")
    read = read_predictions(
        source,
        max_bytes=max_bytes,
        max_answer_chars=MAX_PREDICTION_CHARS[track],
        known_ids=known_ids,
        objects=track == "extraction",
    )
    if track == "extraction":
        strings = sorted(k for k, v in read.answers.items() if isinstance(v, str))
        if strings:
            shown = ", ".join(strings[:5])
            raise PredictionsError(
                f"{counted(len(strings), 'prediction')} of the extraction track "
                f"{'is a string' if len(strings) == 1 else 'are strings'}, e.g. {shown}: a "
                'prediction is an object, {"cells": [...]}, {"html": "<table>…"} or '
                '{"tables": [...]} for a whole page'
            )
    return read.answers


# --- Splits --------------------------------------------------------------------------------

# From public to hidden: a page holding tables of several splits takes the most hidden one.
_HIDDENNESS = {split: rank for rank, split in enumerate(SPLITS)}


def item_splits(
    items: Iterable[Item], table_splits: Mapping[str, Split] | None = None
) -> dict[str, Split]:
    """The split of each item: its table's split where ``table_splits`` gives it (the QA
    split of the dataset's tables), else the stable 80/10/10 hash of its ``split_key``
    (``splits.split_for_table``, the rule the QA tables follow).

    Every item drawn from one split key (a document's pages and tables) takes the most hidden
    split among its tables (test over validation over train): a page's gold shows every table
    on it, so a page with a test table is a test item, and no public gold of any track holds
    a hidden table.
    """
    items = list(items)
    table_splits = table_splits or {}
    by_key: dict[str, Split] = {}
    for item in items:
        key = item.split_key or item.table_id
        split = table_splits.get(item.table_id) or split_for_table(key)
        known = by_key.get(key)
        if known is None or _HIDDENNESS[split] > _HIDDENNESS[known]:
            by_key[key] = split
    return {item.id: by_key[item.split_key or item.table_id] for item in items}
