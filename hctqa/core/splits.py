"""Train/validation/test splits, assigned per table: by a stable hash of the table id, or by a
splits file (the benchmark's official test split) with the rest split by the same hash."""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")
# Tables a splits file does not name go to train and validation in this ratio: the 80/10
# of the hash split without its test tenth (1,504 : 188 tables for the real release).
TRAIN_PER_VALIDATION = 8
SPLITS_FILE_MAX_BYTES = 10 * 1024 * 1024


def _hash(table_id: str) -> int:
    # SHA-256 rather than ``hash()``, which Python salts per process.
    return int.from_bytes(hashlib.sha256(table_id.encode("utf-8")).digest()[:8], "big")


def split_for_table(table_id: str) -> Split:
    """80/10/10 by a stable hash of the table id."""
    bucket = _hash(table_id) % 10
    if bucket < 8:
        return "train"
    return "validation" if bucket == 8 else "test"


def split_rest_by_hash(table_ids: Collection[str]) -> dict[str, Split]:
    """Train and validation for tables a splits file leaves out, exactly 8 : 1: the tables in
    the order of their stable hash, the first eight ninths to train. The same tables always
    get the same splits, whatever order they come in."""
    ordered = sorted(table_ids, key=lambda t: (_hash(t), t))
    n_train = round(len(ordered) * TRAIN_PER_VALIDATION / (TRAIN_PER_VALIDATION + 1))
    return {t: ("train" if i < n_train else "validation") for i, t in enumerate(ordered)}


class SplitsFileError(ValueError):
    """A splits file that cannot be used; the message names the line."""


@dataclass(frozen=True)
class SplitRow:
    """One ``id,split`` row of a splits file: a table id or a question id."""

    id: str
    split: Split
    line: int


def read_splits_file(data: bytes) -> list[SplitRow]:
    """The rows of a splits file: CSV, ``table_id,split`` and/or ``question_id,split`` rows, an
    optional header row (its second cell is ``split``), blank lines ignored."""
    if len(data) > SPLITS_FILE_MAX_BYTES:
        raise SplitsFileError(
            f"The file is over {SPLITS_FILE_MAX_BYTES // 1024 // 1024} MB: a splits file has one "
            "short line per table or question"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SplitsFileError(f"Not UTF-8 text (byte {exc.start})") from None
    rows: list[SplitRow] = []
    seen: dict[str, int] = {}
    for number, cells in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in cells]
        if not any(cells):
            continue
        if len(cells) != 2:
            raise SplitsFileError(f"Line {number}: expected two cells, id and split")
        identifier, split = cells
        if not rows and split.lower() == "split":
            continue  # the header
        if split not in SPLITS:
            raise SplitsFileError(
                f"Line {number}: the split should be one of {', '.join(SPLITS)}, not {split!r}"
            )
        if identifier in seen:
            raise SplitsFileError(
                f"Line {number}: {identifier} is named again (first on line {seen[identifier]})"
            )
        seen[identifier] = number
        rows.append(SplitRow(identifier, split, number))  # type: ignore[arg-type]
    if not rows:
        raise SplitsFileError("The file names no table or question")
    return rows


def assign_splits(
    questions_by_table: Mapping[str, Collection[str]],
    *,
    given: Mapping[str, str | None],
    rows: Sequence[SplitRow] | None = None,
) -> dict[str, Split]:
    """The split of each table of an import.

    Without ``rows``: the split the input gives (``given``), else the 80/10/10 hash. With a
    splits file's ``rows``: the split the file names for the table or for any of its
    questions (a table's questions share its split), else the split the input gives, else
    train or validation by ``split_rest_by_hash``. An id the import does not hold, a table
    named twice with different splits, or a file contradicting the input is refused.
    """
    if rows is None:
        return {t: given.get(t) or split_for_table(t) for t in questions_by_table}  # type: ignore[misc]
    table_of = {q: t for t, questions in questions_by_table.items() for q in questions}
    named: dict[str, tuple[Split, SplitRow]] = {}
    for row in rows:
        table = row.id if row.id in questions_by_table else table_of.get(row.id)
        if table is None:
            raise SplitsFileError(
                f"Line {row.line}: {row.id} is neither a table nor a question of the release "
                "being imported"
            )
        if table in named and named[table][0] != row.split:
            first = named[table][1]
            raise SplitsFileError(
                f"Line {row.line} puts table {table} in {row.split} ({row.id}), but line "
                f"{first.line} puts it in {first.split} ({first.id}): a table's questions share "
                "its split"
            )
        named.setdefault(table, (row.split, row))
        if given.get(table) and given[table] != row.split:
            raise SplitsFileError(
                f"Line {row.line} puts table {table} in {row.split}, but the release gives it "
                f"the {given[table]} split"
            )
    out: dict[str, Split] = {t: split for t, (split, _) in named.items()}
    rest = []
    for table in questions_by_table:
        if table in out:
            continue
        if given.get(table):
            out[table] = given[table]  # type: ignore[assignment]
        else:
            rest.append(table)
    out.update(split_rest_by_hash(rest))
    return {t: out[t] for t in questions_by_table}
