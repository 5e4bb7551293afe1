"""Make every track's items from the dataset (in the foreground, or queued for a worker)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from plumbing.errors import ApplicationError
from tracks.services.builds import item_build_run, item_build_start


class Command(BaseCommand):
    help = (
        "Make the extraction, transformation and NL-to-SQL items from the dataset: the "
        "synthetic tables (drawn to PDF and PNG), their questions with SQL, and the accepted "
        "tables of ingested documents. Only what changed is written; submissions scored on "
        "items that changed are scored again. Ground-truth sets are imported apart "
        "(import_ground_truth)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--queue", action="store_true", help="queue it for a worker instead of building here"
        )
        parser.add_argument(
            "--track",
            action="append",
            choices=["extraction", "transformation", "sql"],
            help="only this track's items (repeat for several; in the foreground only)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["track"] and options["queue"]:
            raise CommandError("A queued build makes every track's items; drop --track")
        try:
            build = item_build_start(user=None, enqueue=options["queue"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        if options["queue"]:
            self.stdout.write(f"Queued build {build.pk}.")
            return

        def report(percent: int, stage: str) -> None:
            self.stdout.write(f"{percent:3d}% {stage}")

        try:
            counts = item_build_run(build_id=build.pk, report=report, tracks=options["track"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        if counts is None:
            raise CommandError("Another worker took the build")
        tracks = ", ".join(f"{t} {n:,}" for t, n in sorted(counts.by_track.items()))
        self.stdout.write(
            f"Items: {tracks or 'none'}; {counts.created:,} created, {counts.updated:,} "
            f"updated, {counts.deleted:,} deleted, {counts.unchanged:,} unchanged."
        )
        if counts.skipped:
            self.stderr.write(
                f"{len(counts.skipped):,} could not be made into items, e.g.: "
                + "; ".join(counts.skipped[:5])
            )
        if counts.rescored:
            self.stdout.write(f"{counts.rescored:,} scored submissions are scored again.")
