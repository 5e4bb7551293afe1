"""Import the real HCT-QA release: tables, table properties, questions and gold answers."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dataset.reporting import write_and_report
from dataset.services import release_splits
from hctqa.core.release import ReleaseError, parse_qaps, read_bytes, read_csvs_tar
from hctqa.core.splits import SplitsFileError, read_splits_file


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
