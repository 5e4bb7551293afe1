"""Run the benchmark's synthetic generator: write the released layout, or import it."""

from __future__ import annotations

import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.services import synthetic_generate, synthetic_generation_tables, synthetic_params
from dataset.reporting import ProgressLine, report_summary
from dataset.services import release_import
from hctqa.core.synthgen.output import OutputError, write_generation
from hctqa.core.synthgen.pipeline import Generation
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError

_STAGE_LABELS = {"tables": "Tables   ", "questions": "Questions", "nonsense": "Nonsense "}


class Command(BaseCommand):
    help = (
        "Generate synthetic families from the generator's parameter files, in the released "
        "layout (<family>_set<i>_<j>_DB.csv, …, _NONSEM variants), into a folder or the database."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--params", type=Path, required=True, help="folder of PARAM_*.json")
        parser.add_argument(
            "--family",
            action="append",
            default=[],
            help="e.g. Number_of_students (repeatable; default: every family)",
        )
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--out", type=Path, help="write the files into this folder")
        target.add_argument("--import", dest="do_import", action="store_true", help="import them")
        parser.add_argument("--force", action="store_true", help="write into a non-empty folder")
        parser.add_argument(
            "--workers", type=int, default=1, help="processes for questions and _NONSEM files"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out: Path | None = options["out"]
        if out is not None and out.is_dir() and any(out.iterdir()) and not options["force"]:
            raise CommandError(f"{out}: the folder is not empty (use --force to write into it)")
        bars: dict[str, ProgressLine] = {}

        def progress(stage: str, done: int, total: int) -> None:
            bar = bars.setdefault(stage, ProgressLine(_STAGE_LABELS.get(stage, stage), self.stdout))
            bar(done, total)

        started = time.monotonic()
        try:
            params = synthetic_params(options["params"])
            if not 1 <= options["workers"] <= 16:
                raise ApplicationError("--workers should be between 1 and 16")
            generation = synthetic_generate(
                params=params,
                families=options["family"],
                progress=progress,
                workers=options["workers"],
            )
        except ApplicationError as exc:
            raise CommandError(f"Nothing was generated. {exc.message}") from None
        elapsed = time.monotonic() - started
        self.report(generation, elapsed)
        if out is not None:
            try:
                count = write_generation(generation, out, force=options["force"])
            except OutputError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(self.style.SUCCESS(f"Wrote {counted(count, 'file')} to {out}."))
            return
        try:
            tables = synthetic_generation_tables(generation)
        except ApplicationError as exc:
            raise CommandError(f"Nothing was imported. {exc.message}") from None
        summary = release_import(tables=tables, progress=ProgressLine("Writing", self.stdout))
        report_summary(self, summary)

    def report(self, generation: Generation, elapsed: float) -> None:
        tables = len(generation.tables)
        self.stdout.write(
            f"Generated {counted(tables, 'table')} and "
            f"{counted(generation.question_count, 'question')} in "
            f"{elapsed:.1f} s ({tables / elapsed if elapsed else 0:.1f} tables/s)."
        )
        for family, layouts in generation.tables_per_family_and_layout().items():
            self.stdout.write(f"  {family}: {counted(sum(layouts.values()), 'table')}")
            for layout, count in sorted(layouts.items()):
                self.stdout.write(f"    {count:5,}  {layout}")
        per_template = generation.questions_per_template()
        self.stdout.write(
            "  Questions per template: "
            + ", ".join(f"T{k} {v:,}" for k, v in sorted(per_template.items()))
        )
