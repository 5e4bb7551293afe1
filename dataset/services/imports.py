"""Importing releases and synthetic families: tables and questions created or updated, all or
nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count

from dataset.models import Question, SyntheticTable, Table
from dataset.signals import (
    announce_question_set_change,
    announce_release_labels,
    decided_table_properties,
)
from hctqa.core import taxonomy
from hctqa.core.release import ReleaseQuestion, ReleaseTable
from hctqa.core.splits import SPLITS, SplitRow, assign_splits
from hctqa.core.wording import counted

# Called as progress(done, total) while rows are written.
Progress = Callable[[int, int], None]

_BATCH = 500


@dataclass
class ImportSummary:
    tables_created: int = 0
    tables_updated: int = 0
    tables_unchanged: int = 0
    questions_created: int = 0
    questions_updated: int = 0
    questions_unchanged: int = 0
    # The release's own labels, kept as one annotation per table, that were added or changed
    # (a resolved table keeps its resolution as its properties, so only these show it).
    release_labels_written: int = 0
    inconsistent_tables: list[str] = field(default_factory=list)
    # Tables already here whose split changes, by "from → to", and the questions on them.
    split_moves: dict[str, int] = field(default_factory=dict)
    questions_moved: int = 0
    moved_examples: list[str] = field(default_factory=list)
    # Questions already here whose gold answer changes.
    gold_changed: int = 0
    gold_examples: list[str] = field(default_factory=list)
    # Scored leaderboard submissions whose questions or gold answers this changes (told by
    # the receivers of question_set_changed): marked stale and queued to be scored again.
    affected_submissions: int = 0
    # The imported tables by split afterwards: split → (tables, questions).
    splits: dict[str, tuple[int, int]] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(
            self.tables_created
            + self.tables_updated
            + self.questions_created
            + self.questions_updated
            + self.release_labels_written
        )


_TABLE_FIELDS = ("source", "split", "canonical_csv", "image_url", "table_properties")
_QUESTION_FIELDS = (
    "table_id",
    "text",
    "gold_answer",
    "origin",
    "template_number",
    "sql",
    "query_properties",
    "status",
)
_SYNTHETIC_FIELDS = ("family", "hct_csv", "hct_html", "relational_csv")


def _table_values(record: ReleaseTable, split: str) -> dict[str, object]:
    return {
        "source": record.source,
        "split": split,
        "canonical_csv": record.canonical_csv,
        "image_url": record.image_url,
        "table_properties": record.table_properties,
    }


def _question_values(table_id: str, record: ReleaseQuestion) -> dict[str, object]:
    return {
        "table_id": table_id,
        "text": record.text,
        "gold_answer": record.gold_answer,
        "origin": record.origin,
        "template_number": record.template_number,
        "sql": record.sql,
        "query_properties": record.query_properties,
        # Release questions were all verified by people; synthetic answers come from SQL.
        "status": Question.Status.VERIFIED,
    }


def _plan(
    model: type, records: dict[str, dict[str, object]], fields: Sequence[str], key: str = "pk"
) -> tuple[list[object], list[object], int]:
    """Split records into rows to create, rows to update and a count left as they are."""
    existing = {
        row[0]: row[1:]
        for row in model.objects.filter(**{f"{key}__in": list(records)}).values_list(key, *fields)
    }
    to_create, to_update, unchanged = [], [], 0
    for pk, values in records.items():
        current = existing.get(pk)
        row = model(**{key: pk}, **values)
        if current is None:
            to_create.append(row)
        elif tuple(values[f] for f in fields) != current:
            to_update.append(row)
        else:
            unchanged += 1
    return to_create, to_update, unchanged


# How many ids a summary names as examples.
_EXAMPLES = 5


def release_splits(
    tables: Sequence[ReleaseTable], split_rows: Sequence[SplitRow] | None = None
) -> dict[str, str]:
    """Each table's split: from the splits file's rows if given, else the input's own
    ``split``, else the stable hash (``hctqa.core.splits.assign_splits``). Raises
    ``SplitsFileError`` for a file that does not fit the tables."""
    return assign_splits(
        {t.id: [q.id for q in t.questions] for t in tables},
        given={t.id: t.split for t in tables},
        rows=split_rows,
    )


def _record_changes(
    summary: ImportSummary, table_rows: dict[str, dict], question_rows: dict[str, dict]
) -> list[str]:
    """Note the tables moving split and the gold answers changing, before they are written;
    the ids of the questions whose split or gold answer changes."""
    current = dict(Table.objects.filter(pk__in=list(table_rows)).values_list("pk", "split"))
    moved = {
        t: (current[t], row["split"])
        for t, row in table_rows.items()
        if t in current and current[t] != row["split"]
    }
    summary.split_moves = dict(sorted(Counter(f"{a} → {b}" for a, b in moved.values()).items()))
    summary.moved_examples = sorted(moved)[:_EXAMPLES]
    moved_questions = list(
        Question.objects.filter(table_id__in=list(moved)).values_list("pk", flat=True)
    )
    summary.questions_moved = len(moved_questions)
    gold_now = Question.objects.filter(pk__in=list(question_rows)).values_list("pk", "gold_answer")
    regold = sorted(q for q, gold in gold_now if question_rows[q]["gold_answer"] != gold)
    summary.gold_changed = len(regold)
    summary.gold_examples = regold[:_EXAMPLES]
    return moved_questions + regold


def _reason(summary: ImportSummary) -> str:
    parts = []
    if summary.split_moves:
        moves = ", ".join(f"{n:,} {move}" for move, n in summary.split_moves.items())
        parts.append(f"tables moved split ({moves})")
    if summary.gold_changed:
        parts.append(f"{counted(summary.gold_changed, 'gold answer')} changed")
    if summary.questions_created:
        parts.append(f"{counted(summary.questions_created, 'question')} added")
    if summary.questions_updated and not parts:
        parts.append(f"{counted(summary.questions_updated, 'question')} updated")
    return "release import: " + ("; ".join(parts) or "tables updated")


@transaction.atomic
def release_import(
    *,
    tables: Sequence[ReleaseTable],
    split_rows: Sequence[SplitRow] | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportSummary:
    """Create or update release tables and their questions, all or nothing.

    Records already in the database with the same content are left alone, so importing the
    same release twice changes nothing. Tables and questions not in ``tables`` are kept.
    ``split_rows`` (a splits file) assigns splits (see ``release_splits``). When the import
    changes which questions are scored or their gold answers, ``question_set_changed`` is
    sent in the same transaction and the summary says how many scored submissions that
    affects. ``dry_run`` does all of it and then rolls it back: the summary says what would
    change, and nothing is written.
    """
    summary = ImportSummary(dry_run=dry_run)
    splits = release_splits(tables, split_rows)
    table_rows = {t.id: _table_values(t, splits[t.id]) for t in tables}
    # Properties people decided (an adjudicated resolution), not the release's, stay.
    for table_id, decided in decided_table_properties(sender=Table, table_ids=table_rows).items():
        table_rows[table_id]["table_properties"] = decided
    question_rows = {q.id: _question_values(t.id, q) for t in tables for q in t.questions}
    synthetic_rows = {
        t.id: {f: getattr(t.synthetic, f) for f in _SYNTHETIC_FIELDS}
        for t in tables
        if t.synthetic is not None
    }
    summary.inconsistent_tables = [
        t.id for t in tables if taxonomy.check(taxonomy.TABLE_PROPERTIES, t.table_properties)
    ]
    changed_questions = _record_changes(summary, table_rows, question_rows)

    t_create, t_update, summary.tables_unchanged = _plan(Table, table_rows, _TABLE_FIELDS)
    q_create, q_update, summary.questions_unchanged = _plan(
        Question, question_rows, _QUESTION_FIELDS
    )
    s_create, s_update, _ = _plan(SyntheticTable, synthetic_rows, _SYNTHETIC_FIELDS, "table_id")
    # A table whose synthetic generator files alone changed is an updated table too.
    touched = {t.id for t in t_create} | {t.id for t in t_update}
    synthetic_only = {s.table_id for s in s_create + s_update} - touched
    summary.tables_created = len(t_create)
    summary.tables_updated = len(t_update) + len(synthetic_only)
    summary.tables_unchanged -= len(synthetic_only)
    summary.questions_created, summary.questions_updated = len(q_create), len(q_update)

    steps: list[tuple[str, type, list[object], Sequence[str]]] = [
        ("create", Table, t_create, ()),
        ("update", Table, t_update, _TABLE_FIELDS),
        ("create", SyntheticTable, s_create, ()),
        ("update", SyntheticTable, s_update, _SYNTHETIC_FIELDS),
        ("create", Question, q_create, ()),
        ("update", Question, q_update, _QUESTION_FIELDS),
    ]
    total = sum(len(rows) for _, _, rows, _ in steps)
    done = 0
    for action, model, rows, fields in steps:
        for start in range(0, len(rows), _BATCH):
            batch = rows[start : start + _BATCH]
            if action == "create":
                model.objects.bulk_create(batch)
            else:
                model.objects.bulk_update(batch, list(fields))
            done += len(batch)
            if progress is not None:
                progress(done, total)
    summary.release_labels_written = announce_release_labels(
        sender=Table, properties={t.id: t.table_properties for t in tables}
    )
    if summary.split_moves or summary.gold_changed or q_create or q_update:
        summary.affected_submissions = announce_question_set_change(
            sender=Table, reason=_reason(summary), question_ids=changed_questions
        )
    counts = (
        Question.objects.filter(table_id__in=list(table_rows))
        .values("table__split")
        .annotate(n=Count("pk"))
        .order_by()
    )
    questions_by_split = {row["table__split"]: row["n"] for row in counts}
    tables_by_split = Counter(row["split"] for row in table_rows.values())
    summary.splits = {
        split: (tables_by_split[split], questions_by_split.get(split, 0))
        for split in SPLITS
        if tables_by_split[split]
    }
    if dry_run:
        transaction.set_rollback(True)
    return summary
