"""Score a submission file on a track's items of a public split, storing nothing."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dataset.models import Split
from hctqa.core.predictions import PredictionsError
from tracks.management.item_set import add_item_set_arguments
from tracks.registry import TRACKS, track
from tracks.services.scoring import score_file


class Command(BaseCommand):
    help = (
        'Score a submission file (JSON lines {"id", "prediction"}, or a JSON array, '
        "gzipped or not) on a track's items of the train or validation split and print one "
        "JSON object: n and the track's figures (extraction: teds, teds_struct, adj_f1, "
        "exact, and with whole-page items detection_recall and false_positives; "
        "transformation: row_f1, row_precision, row_recall, exact; sql: execution_accuracy, "
        "recall; qa: recall, precision, f1, cc). Nothing is stored. The test split's gold is "
        "hidden: submit to the board for it."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--track", required=True, choices=list(TRACKS))
        parser.add_argument(
            "--split",
            required=True,
            choices=Split.values,
            help="train or validation (the test split is refused: its gold is hidden)",
        )
        add_item_set_arguments(parser)
        parser.add_argument("--model-name", default="", help="decides 2025-10's GPT rule")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        info = track(options["track"])
        split = options["split"]
        if split == Split.TEST:
            raise CommandError(
                "The test split's gold is hidden, here too: score on train or validation, or "
                "submit to the board for the test split"
            )
        if options["mode"] and not info.modes:
            raise CommandError(f"The {info.name} track has no modes")
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        limit = settings.SUBMISSION_MAX_BYTES
        if path.stat().st_size > limit:
            raise CommandError(
                f"{path}: {path.stat().st_size / 1024 / 1024:.1f} MB, over the "
                f"{limit / 1024 / 1024:.1f} MB limit (SUBMISSION_MAX_BYTES); gzip it"
            )
        try:
            with path.open("rb") as handle:
                result = score_file(
                    info,
                    handle,
                    split=split,
                    mode=options["mode"],
                    data_scope=options["data_scope"],
                    model_name=options["model_name"],
                )
        except PredictionsError as exc:
            problems = "".join(f"\n  {p}" for p in exc.problems if len(exc.problems) > 1)
            raise CommandError(f"{path}: {exc}{problems}") from None
        self.stdout.write(json.dumps(result, indent=1, ensure_ascii=False))
