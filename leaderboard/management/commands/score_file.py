"""Score a predictions file against the gold answers in the database."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hctqa.core.predictions import PredictionsError, check_known, parse_predictions
from hctqa.core.scoring import MODALITIES, evaluate
from leaderboard import selectors
from leaderboard.models import DataScope, EvalSplit


class Command(BaseCommand):
    help = (
        "Score a predictions file (JSONL or JSON array, optionally gzipped) with the "
        "benchmark's reference rules. Questions without a prediction count as empty answers."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--modality", required=True, choices=MODALITIES)
        parser.add_argument("--split", default=EvalSplit.ALL, choices=EvalSplit.values)
        parser.add_argument("--scope", default=DataScope.REAL, choices=DataScope.values)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        limit = settings.SUBMISSION_MAX_BYTES
        if path.stat().st_size > limit:  # before reading it all into memory
            raise CommandError(
                f"{path}: {path.stat().st_size / 1024 / 1024:.1f} MB, over the "
                f"{limit / 1024 / 1024:.1f} MB limit (SUBMISSION_MAX_BYTES)"
            )
        try:
            predictions = parse_predictions(
                path.read_bytes(), max_bytes=settings.SUBMISSION_MAX_BYTES
            )
            check_known(predictions, selectors.known_question_ids())
        except PredictionsError as exc:
            raise CommandError(f"{path}: {exc}") from None
        gold = selectors.gold_answers(split=options["split"], data_scope=options["scope"])
        if not gold:
            raise CommandError(
                f"no {options['scope']} questions in split {options['split']}: "
                "import the dataset first"
            )
        evaluation = evaluate(gold, predictions, options["modality"])
        if options["json"]:
            self.stdout.write(json.dumps(evaluation.as_dict(), indent=1))
            return
        metrics = (
            ("precision", "recall", "f1", "cc")
            if options["modality"] == "text"
            else ("recall", "cc")
        )
        self.stdout.write(f"{'':10}" + "".join(f"{m:>22}" for m in metrics) + f"{'n':>8}")
        rows = [("overall", evaluation.overall), *evaluation.by_source.items()]
        for name, summary in rows:
            cells = []
            for m in metrics:
                ci = summary.ci[m]
                cells.append(f"{getattr(summary, m):.3f} [{ci.low:.3f}, {ci.high:.3f}]".rjust(22))
            self.stdout.write(f"{name:10}" + "".join(cells) + f"{summary.n:8d}")
        self.stdout.write(f"coverage: {evaluation.coverage:.1%} of {len(gold):,} questions")
