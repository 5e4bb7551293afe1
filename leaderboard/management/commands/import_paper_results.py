"""Seed the leaderboard with the results reported in the HCT-QA paper (Table 1)."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from hctqa.core.reported import ReportedError, parse_paper_table
from leaderboard.services import reported_results_import


class Command(BaseCommand):
    help = "Import paper-table1.csv as leaderboard rows labelled 'reported in paper'. Idempotent."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", type=Path, help="paper-table1.csv")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            results = parse_paper_table(path.read_text(encoding="utf-8"))
        except (ReportedError, UnicodeDecodeError) as exc:
            raise CommandError(f"Nothing was imported. {path}: {exc}") from None
        summary = reported_results_import(results=results)
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(results)} reported rows: {summary.created} created, "
                f"{summary.updated} updated, {summary.unchanged} unchanged."
            )
        )
