"""Import synthetic HCT-QA families: HCT (CSV and HTML), relational table, template questions."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dataset.reporting import write_and_report
from hctqa.core.release import ReleaseError, read_synthetic


class Command(BaseCommand):
    help = (
        "Import one or more synthetic families from their zip files or folders of generated "
        "files. Idempotent and all-or-nothing."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "zips", nargs="+", type=Path, help="e.g. Number_of_students.zip, or a folder"
        )
        parser.add_argument(
            "--check", action="store_true", help="validate the files and write nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tables = []
        try:
            for path in options["zips"]:
                if not path.is_file() and not path.is_dir():
                    raise CommandError(f"{path}: no such file or folder")
                self.stdout.write(f"Reading {path} …")
                tables.extend(read_synthetic(path))
        except ReleaseError as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        write_and_report(self, tables, check_only=options["check"])
