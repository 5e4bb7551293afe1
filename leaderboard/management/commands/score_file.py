"""Score a predictions file against the gold answers in the database."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hctqa.core.predictions import PredictionsError, read_predictions
from hctqa.core.scoring import MODALITIES, evaluate
from leaderboard import selectors
from leaderboard.models import DataScope, EvalSplit
from leaderboard.services.submissions import (
    answers_for_scoring,
    check_matches_split,
    gold_claims_check,
)


class Command(BaseCommand):
    help = (
        "Score a predictions file (JSONL or JSON array, optionally gzipped) with the "
        "benchmark's reference rules. Questions without a prediction count as empty answers; "
        "a file's own gold answers (gt) are compared with the platform's, never used."
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
            with path.open("rb") as handle:
                read = read_predictions(
                    handle,
                    max_bytes=settings.SUBMISSION_MAX_BYTES,
                    known_ids=selectors.known_question_ids(),
                )
        except PredictionsError as exc:
            problems = "".join(f"\n  {p}" for p in exc.problems if len(exc.problems) > 1)
            raise CommandError(f"{path}: {exc}{problems}") from None
        gold = selectors.gold_answers(split=options["split"], data_scope=options["scope"])
        if not gold:
            raise CommandError(
                f"no {options['scope']} questions in split {options['split']}: "
                "import the dataset first"
            )
        try:
            check_matches_split(read.answers, split=options["split"], data_scope=options["scope"])
        except PredictionsError as exc:
            raise CommandError(f"{path}: {exc}") from None
        # Whoever runs this holds the gold answers already: test-split rows are compared too.
        claims = gold_claims_check(read.claimed_gold, gold, test_ids=())
        if claims.get("differ"):
            self.stderr.write(
                f"warning: the file's own gold answers (gt) differ from the platform's on "
                f"{claims['differ']:,} of {claims['compared']:,} questions, e.g. "
                f"{', '.join(claims['examples'])}; they were not used for scoring"
            )
        evaluation = evaluate(gold, answers_for_scoring(read.answers), options["modality"])
        if options["json"]:
            result = evaluation.as_dict()
            if claims:
                result["gold_claims"] = claims
            self.stdout.write(json.dumps(result, indent=1))
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
