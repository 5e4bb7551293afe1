"""Score a predictions file against the gold answers in the database."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hctqa.core.predictions import PredictionsError, read_predictions
from hctqa.core.scoring import (
    DEFAULT_RULES,
    MODALITIES,
    RULES,
    check_rules,
    evaluate,
    is_gpt_model,
    model_name_from_filename,
)
from hctqa.core.wording import counted, percent
from leaderboard import selectors
from leaderboard.models import DataScope, EvalSplit
from leaderboard.services import check_matches_split, gold_claims_check


class Command(BaseCommand):
    help = (
        "Score a predictions file (JSONL or JSON array, optionally gzipped) with the "
        "benchmark's reference rules (2025-05 by default, or 2025-10 for text). Questions "
        "without a prediction count as empty answers; a file's own gold answers (gt) are "
        "compared with the platform's, never used."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--modality", required=True, choices=MODALITIES)
        parser.add_argument("--split", default=EvalSplit.ALL, choices=EvalSplit.values)
        parser.add_argument("--scope", default=DataScope.REAL, choices=DataScope.values)
        parser.add_argument(
            "--rules",
            default=DEFAULT_RULES,
            choices=RULES,
            help="the reference scorer's version (2025-10 has no vision rules)",
        )
        parser.add_argument(
            "--model-name",
            help="the name that decides 2025-10's GPT rule (default: the file's name up to "
            "the first --, as the reference takes it)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        try:
            rules = check_rules(options["rules"], options["modality"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        model_name = options["model_name"]
        if model_name is None:
            model_name = model_name_from_filename(path.name)
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
                f"No {options['scope']} questions in split {options['split']}: "
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
                f"{claims['differ']:,} of {counted(claims['compared'], 'question')}, e.g. "
                f"{', '.join(claims['examples'])}; they were not used for scoring"
            )
        # Null answers stay None: the empty answer under 2025-05, left out under 2025-10.
        evaluation = evaluate(
            gold, read.answers, options["modality"], rules=rules, model_name=model_name
        )
        if options["json"]:
            result = {**evaluation.as_dict(), "model_name": model_name}
            if claims:
                result["gold_claims"] = claims
            self.stdout.write(json.dumps(result, indent=1))
            return
        gpt = rules == "2025-10" and is_gpt_model(model_name)
        self.stdout.write(
            f"rules {rules}, model name {model_name!r}"
            + (" (GPT: label:number values split in the overall figures)" if gpt else "")
        )
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
        self.stdout.write(
            f"coverage: {percent(evaluation.coverage)}% of {counted(len(gold), 'question')}"
        )
        if rules == "2025-10":
            self.stdout.write(
                f"left out of the averages: {counted(evaluation.excluded, 'answer')} "
                "(null, or starting with 'no answer' or 'error')"
            )
