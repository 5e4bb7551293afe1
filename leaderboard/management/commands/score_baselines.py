"""Make the platform's baselines' predictions on the tracks and score them onto the boards."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from leaderboard import services
from leaderboard.services.baselines import BASELINES, baselines_run, describe_track_score
from plumbing.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Run the platform's baselines on the tracks' items (extraction: the platform's "
        "extractor and pdfplumber's extract_tables, in both modes; transformation: the "
        "unpivot) and put them on the boards, replacing their earlier rows. Run it again after "
        "the items change. By default they are scored here; --queue leaves that to a worker."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--track", action="append", choices=sorted({b.track for b in BASELINES})
        )
        parser.add_argument(
            "--split",
            default="test",
            choices=["test", "validation", "train"],
            help="test (default): the boards' split",
        )
        parser.add_argument("--limit", type=int, help="only the first N items of each (a check)")
        parser.add_argument("--queue", action="store_true", help="leave the scoring to a worker")

    def handle(self, *args: Any, **options: Any) -> None:
        last: dict[str, int] = {}

        def report(label: str, number: int, total: int) -> None:
            step = max(1, total // 10)
            if number == total or number - last.get(label, 0) >= step:
                last[label] = number
                self.stdout.write(f"{label}: {number:,} of {total:,} items")

        try:
            made = baselines_run(
                tracks=options["track"],
                split=options["split"],
                limit=options["limit"],
                report=report,
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        if not made:
            raise CommandError(
                "No items to run the baselines on: build the items first (build_track_items)"
            )
        for submission in made:
            if not options["queue"]:
                services.submission_score(submission_id=submission.pk)
                submission.refresh_from_db()
            self.stdout.write(describe_track_score(submission))
