"""What a dataset release froze, and how two releases differ.

A release is named by a version: a calendar version (``2026.11``, or ``2026.11.2`` for a
second one that month) or a semantic version (``1.4.0``, ``2.0.0-rc.1``). Both are safe as
folder names and in URLs.

``Snapshot`` is the part of a release the next one is compared with: each table's split and
each question's table and gold answer (as a SHA-256, so the snapshot never holds an answer).
``changelog`` lists, by id, the tables and questions added and removed, the gold answers
changed and the tables whose split changed.

``question_set_sha256`` names a set of questions with their gold answers. A leaderboard
submission scored on exactly the questions of a release, for its split and data scope, is
recorded as scored on that release.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hctqa.core.splits import SPLITS

_CALENDAR = re.compile(r"\d{4}\.(0[1-9]|1[0-2])(\.[1-9]\d*)?")
_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)?")
VERSION_MAX_LENGTH = 40
# The splits and data scopes a leaderboard submission is scored on; "real" is every source
# but "synthetic" and "demo" (the release's four and every collection ingested since), as the
# scorer selects them (leaderboard.selectors.benchmark_questions). The demo tables (made up to
# try the platform) are a scope of their own: demo scores never share a board with the
# benchmark's.
SCORING_SPLITS = (*SPLITS, "all")
SCORING_SCOPES = ("real", "synthetic", "demo")


def scope_of(source: str) -> str:
    return source if source in ("synthetic", "demo") else "real"


class VersionError(ValueError):
    """A release version that is neither a calendar nor a semantic version."""


def check_version(version: str) -> str:
    """The version, trimmed, or ``VersionError`` saying what a version looks like."""
    version = version.strip()
    if not version:
        raise VersionError("Give the release a version, e.g. 2026.11 or 1.0.0")
    if len(version) > VERSION_MAX_LENGTH:
        raise VersionError(f"A version has at most {VERSION_MAX_LENGTH} characters")
    if not (_CALENDAR.fullmatch(version) or _SEMVER.fullmatch(version)):
        raise VersionError(
            f"Not a version: {version!r}; use a calendar version (2026.11, or 2026.11.2 for "
            "another that month) or a semantic version (1.4.0, 2.0.0-rc.1)"
        )
    return version


def gold_sha256(answer: str) -> str:
    return hashlib.sha256(answer.encode("utf-8")).hexdigest()


def question_set_sha256(gold: Mapping[str, str]) -> str:
    """A name for a set of questions and their gold answers: the SHA-256 of the sorted
    ``[id, answer]`` pairs as compact JSON. Any added, removed or re-answered question
    changes it."""
    pairs = sorted(gold.items())
    text = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FrozenQuestion:
    """A question as a release holds it, with what the counts and digests group by."""

    id: str
    table_id: str
    source: str
    split: str
    origin: str
    gold_answer: str


def question_set_digests(questions: Iterable[FrozenQuestion]) -> dict[str, str]:
    """``question_set_sha256`` of each split (and "all") and data scope that has questions,
    keyed ``"<split>/<scope>"``, e.g. ``"test/real"``."""
    sets: dict[str, dict[str, str]] = {}
    for q in questions:
        scope = scope_of(q.source)
        for split in (q.split, "all"):
            sets.setdefault(f"{split}/{scope}", {})[q.id] = q.gold_answer
    return {key: question_set_sha256(gold) for key, gold in sorted(sets.items())}


def release_counts(
    tables: Iterable[tuple[str, str]], questions: Iterable[FrozenQuestion]
) -> dict[str, Any]:
    """Counts of tables (``(source, split)`` pairs) and questions per source, split and origin,
    and questions per source and split together."""
    table_list = list(tables)
    question_list = list(questions)
    by_source_split: dict[str, dict[str, int]] = {}
    for q in question_list:
        row = by_source_split.setdefault(q.source, {})
        row[q.split] = row.get(q.split, 0) + 1
    return {
        "tables": len(table_list),
        "questions": len(question_list),
        "tables_by_source": _sorted_counts(source for source, _ in table_list),
        "tables_by_split": _sorted_counts(split for _, split in table_list),
        "questions_by_source": _sorted_counts(q.source for q in question_list),
        "questions_by_split": _sorted_counts(q.split for q in question_list),
        "questions_by_origin": _sorted_counts(q.origin for q in question_list),
        "questions_by_source_and_split": {k: by_source_split[k] for k in sorted(by_source_split)},
    }


def _sorted_counts(values: Iterable[str]) -> dict[str, int]:
    counts = Counter(values)
    return {key: counts[key] for key in sorted(counts)}


# --- Snapshots and changelogs --------------------------------------------------------------


class SnapshotError(ValueError):
    """A stored snapshot that cannot be read."""


@dataclass(frozen=True)
class Snapshot:
    """``tables``: table id → split. ``questions``: question id → (table id, gold SHA-256)."""

    tables: Mapping[str, str]
    questions: Mapping[str, tuple[str, str]]

    @classmethod
    def of(cls, tables: Mapping[str, str], questions: Iterable[FrozenQuestion]) -> Snapshot:
        return cls(
            tables=dict(tables),
            questions={q.id: (q.table_id, gold_sha256(q.gold_answer)) for q in questions},
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "tables": dict(sorted(self.tables.items())),
            "questions": {k: list(v) for k, v in sorted(self.questions.items())},
        }

    @classmethod
    def from_json(cls, data: Any) -> Snapshot:
        try:
            tables = {str(k): str(v) for k, v in data["tables"].items()}
            questions = {str(k): (str(v[0]), str(v[1])) for k, v in data["questions"].items()}
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise SnapshotError(f"Not a release snapshot ({exc!r})") from None
        return cls(tables=tables, questions=questions)


@dataclass(frozen=True)
class SplitChange:
    table_id: str
    before: str
    after: str


CHANGE_KINDS = (
    "tables_added",
    "tables_removed",
    "questions_added",
    "questions_removed",
    "gold_changed",
    "splits_changed",
)


@dataclass(frozen=True)
class Changelog:
    """What changed since ``previous`` (a version; None for the first release)."""

    previous: str | None
    tables_added: tuple[str, ...] = ()
    tables_removed: tuple[str, ...] = ()
    questions_added: tuple[str, ...] = ()
    questions_removed: tuple[str, ...] = ()
    gold_changed: tuple[str, ...] = ()
    splits_changed: tuple[SplitChange, ...] = ()

    def counts(self) -> dict[str, int]:
        return {kind: len(getattr(self, kind)) for kind in CHANGE_KINDS}

    def as_json(self, *, limit: int | None = None) -> dict[str, Any]:
        """The changelog as JSON; with ``limit``, each list cut to its first ``limit`` ids
        (``counts`` still gives the full numbers)."""
        out: dict[str, Any] = {"previous": self.previous, "counts": self.counts()}
        for kind in CHANGE_KINDS:
            items = getattr(self, kind)[:limit] if limit is not None else getattr(self, kind)
            if kind == "splits_changed":
                out[kind] = [
                    {"table_id": c.table_id, "before": c.before, "after": c.after} for c in items
                ]
            else:
                out[kind] = list(items)
        return out


def changelog(
    previous: Snapshot | None, current: Snapshot, *, previous_version: str | None
) -> Changelog:
    """The changes from ``previous`` to ``current``, every list sorted by id. A question whose
    table's split changed is not listed again: its split is its table's."""
    before = previous or Snapshot(tables={}, questions={})
    old_tables, new_tables = before.tables, current.tables
    old_questions, new_questions = before.questions, current.questions
    return Changelog(
        previous=previous_version if previous is not None else None,
        tables_added=tuple(sorted(new_tables.keys() - old_tables.keys())),
        tables_removed=tuple(sorted(old_tables.keys() - new_tables.keys())),
        questions_added=tuple(sorted(new_questions.keys() - old_questions.keys())),
        questions_removed=tuple(sorted(old_questions.keys() - new_questions.keys())),
        gold_changed=tuple(
            sorted(
                qid
                for qid in new_questions.keys() & old_questions.keys()
                if new_questions[qid][1] != old_questions[qid][1]
            )
        ),
        splits_changed=tuple(
            SplitChange(tid, old_tables[tid], new_tables[tid])
            for tid in sorted(new_tables.keys() & old_tables.keys())
            if old_tables[tid] != new_tables[tid]
        ),
    )


def sha256sums(files: Mapping[str, str]) -> str:
    """A ``sha256sum -c`` file: ``<hash>  <path>`` per file, sorted by path."""
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(files.items()))
