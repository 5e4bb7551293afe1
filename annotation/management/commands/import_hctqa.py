"""Import the real HCT-QA release: tables, table properties, questions and gold answers."""

from __future__ import annotations

from argparse import ArgumentParser
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._progress import ProgressLine
from annotation.services import ImportSummary, release_import, release_splits
from hctqa.core.release import (
    ReleaseError,
    ReleaseTable,
    parse_qaps,
    question_counts,
    read_bytes,
    read_csvs_tar,
)
from hctqa.core.splits import SplitRow, SplitsFileError, read_splits_file
from hctqa.core.wording import counted


class Command(BaseCommand):
    help = (
        "Import the HCT-QA release from qaps.json(.gz), optionally taking each table's raw "
        "canonical CSV from csvs.tar.gz. Idempotent and all-or-nothing."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--qaps", required=True, type=Path, help="qaps.json or qaps.json.gz")
        parser.add_argument(
            "--csvs",
            type=Path,
            help="csvs.tar.gz: take each table's canonical CSV from here, byte for byte",
        )
        parser.add_argument(
            "--splits",
            type=Path,
            help="a CSV of table_id,split and/or question_id,split rows (the official test "
            "split, say): the tables it names get those splits; the rest go to train and "
            "validation, 8 : 1, by a stable hash",
        )
        parser.add_argument(
            "--check", action="store_true", help="validate the files and write nothing"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="show what would change (tables moving split, gold answers, scored "
            "submissions affected) and write nothing",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        qaps: Path = options["qaps"]
        csvs: Path | None = options["csvs"]
        splits: Path | None = options["splits"]
        for path in (qaps, csvs, splits):
            if path is not None and path.is_dir():
                raise CommandError(
                    f"{path} is a folder: give the file in it, e.g. --qaps {path}/qaps.json.gz "
                    f"--csvs {path}/csvs.tar.gz"
                )
            if path is not None and not path.is_file():
                raise CommandError(f"{path}: no such file")
        try:
            raw_csvs = None
            if csvs is not None:
                self.stdout.write(f"Reading {csvs} …")
                raw_csvs = read_csvs_tar(csvs)
                self.stdout.write(f"  {len(raw_csvs):,} CSV files")
            self.stdout.write(f"Reading {qaps} …")
            tables = parse_qaps(read_bytes(qaps), raw_csvs=raw_csvs)
            split_rows = None
            if splits is not None:
                split_rows = read_splits_file(splits.read_bytes())
                release_splits(tables, split_rows)  # checked before anything is written
        except ReleaseError as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        except SplitsFileError as exc:
            raise CommandError(f"Nothing was imported. {splits}: {exc}") from None
        write_and_report(
            self,
            tables,
            check_only=options["check"],
            dry_run=options["dry_run"],
            split_rows=split_rows,
        )


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
