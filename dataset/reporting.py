"""What the import commands print: progress (a redrawn bar on a terminal, a line per quarter
in logs), what the files hold, and what the import changed."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, OutputWrapper

from dataset.services import ImportSummary, release_import
from hctqa.core.release import (
    ReleaseTable,
    question_counts,
)
from hctqa.core.splits import SplitRow
from hctqa.core.wording import counted


class ProgressLine:
    def __init__(self, label: str, out: OutputWrapper) -> None:
        self.label = label
        self.out = out
        self.tty = out.isatty()
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 if total == 0 else done * 100 // total
        step = percent if self.tty else percent // 25 * 25
        if step == self._last:
            return
        self._last = step
        bar = "#" * (percent // 5) + "-" * (20 - percent // 5)
        text = f"{self.label} [{bar}] {percent:3d}% ({done:,}/{total:,})"
        if self.tty:
            self.out.write("\r" + text, ending="\n" if done >= total else "")
        else:
            self.out.write(text)


def write_and_report(
    command: BaseCommand,
    tables: list[ReleaseTable],
    *,
    check_only: bool,
    dry_run: bool = False,
    split_rows: list[SplitRow] | None = None,
) -> None:
    """What every import command does once its files are read and valid."""
    report_release(command.stdout, tables)
    if check_only:
        command.stdout.write(
            command.style.SUCCESS("The files are valid; nothing was written (--check).")
        )
        return
    summary = release_import(
        tables=tables,
        split_rows=split_rows,
        dry_run=dry_run,
        progress=ProgressLine("Checking" if dry_run else "Writing", command.stdout),
    )
    report_summary(command, summary)


def report_release(out: Any, tables: list[ReleaseTable]) -> None:
    counts = question_counts(tables)
    sources = Counter(t.source for t in tables)
    parts = [counted(counts["questions"], "question")]
    for origin, label in (
        ("human", "human-written"),
        ("model", "model-generated"),
        ("synthetic", "synthetic"),
    ):
        if counts[origin]:
            parts.append(f"{counts[origin]:,} {label}")
    out.write(f"  {counted(counts['tables'], 'table')}; " + ", ".join(parts))
    out.write("  by source: " + ", ".join(f"{s} {n:,}" for s, n in sources.most_common()))


def report_summary(command: BaseCommand, summary: ImportSummary) -> None:
    out = command.stdout
    if summary.dry_run:
        out.write("Dry run: what this import would do.")
    if not summary.changed:
        out.write(
            command.style.SUCCESS(
                "Nothing changed: the database already holds these "
                f"{counted(summary.tables_unchanged, 'table')} and "
                f"{counted(summary.questions_unchanged, 'question')}."
            )
        )
    else:
        out.write(
            f"Tables: {summary.tables_created:,} created, {summary.tables_updated:,} updated, "
            f"{summary.tables_unchanged:,} unchanged."
        )
        out.write(
            f"Questions: {summary.questions_created:,} created, "
            f"{summary.questions_updated:,} updated, {summary.questions_unchanged:,} unchanged."
        )
        if summary.release_labels_written:
            out.write(
                f"Release labels (one annotation per table): "
                f"{summary.release_labels_written:,} added or changed."
            )
    report_changes(command, summary)
    if summary.dry_run:
        out.write(command.style.SUCCESS("Nothing was written (--dry-run)."))
    elif summary.changed:
        out.write(command.style.SUCCESS("Import complete."))
    if summary.inconsistent_tables:
        shown = ", ".join(summary.inconsistent_tables[:10])
        more = len(summary.inconsistent_tables) - 10
        out.write(
            command.style.WARNING(
                f"Note: {counted(len(summary.inconsistent_tables), 'table')} "
                f"{'carries' if len(summary.inconsistent_tables) == 1 else 'carry'} release labels "
                f"that break the table-property consistency rules (kept as released): {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
        )


def report_changes(command: BaseCommand, summary: ImportSummary) -> None:
    """Splits and gold answers that change, and the scored submissions that affects."""
    out = command.stdout
    verb = "would move" if summary.dry_run else "moved"
    if summary.split_moves:
        moves = ", ".join(f"{n:,} {move}" for move, n in summary.split_moves.items())
        out.write(
            f"Splits: {counted(sum(summary.split_moves.values()), 'table')} "
            f"({counted(summary.questions_moved, 'question')}) {verb}: {moves}; "
            f"e.g. {', '.join(summary.moved_examples)}."
        )
    if summary.gold_changed:
        change = "would change" if summary.dry_run else "changed"
        out.write(
            f"Gold answers: {summary.gold_changed:,} {change}, e.g. "
            f"{', '.join(summary.gold_examples)}."
        )
    if summary.splits:
        out.write(
            "Imported tables by split: "
            + ", ".join(
                f"{split} {counted(tables, 'table')} / {counted(questions, 'question')}"
                for split, (tables, questions) in summary.splits.items()
            )
        )
    if summary.affected_submissions:
        if summary.dry_run:
            tail = "they would be marked stale and scored again."
        else:
            tail = (
                "they are marked stale (unranked) and queued to be scored again on the scoring "
                "queue; see /leaderboard/rescores/."
            )
        out.write(
            command.style.WARNING(
                f"Scored submissions affected: {summary.affected_submissions:,}; {tail}"
            )
        )
    elif summary.split_moves or summary.gold_changed:
        out.write("Scored submissions affected: none.")
