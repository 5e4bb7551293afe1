"""Publish a release's edition to a dataset repository on the Hugging Face Hub."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from hctqa.core.wording import counted
from plumbing.errors import ApplicationError
from releases.models import Edition
from releases.services import HF_TOKEN_VARIABLE, release_push_run, release_push_start


class Command(BaseCommand):
    help = (
        "Upload an edition's Hugging Face folder to ORG/NAME on the Hub as one commit, tagged "
        f"with the version. The token is read from {HF_TOKEN_VARIABLE}; HF_ENDPOINT names "
        "another Hub."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("version", help="the release, e.g. 2026.11")
        parser.add_argument("--repo", required=True, help="the dataset repository, ORG/NAME")
        parser.add_argument("--edition", default=Edition.PUBLIC, choices=Edition.values)
        parser.add_argument(
            "--allow-full-edition",
            action="store_true",
            help="push the full edition (it holds the test split's gold answers) to a private "
            "repository",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            push = release_push_start(
                user=None,
                version=options["version"],
                repo=options["repo"],
                edition=options["edition"],
                allow_full_edition=options["allow_full_edition"],
                enqueue=False,
            )
        except ApplicationError as exc:
            raise CommandError(f"Not pushed: {exc.message}") from None
        self.stdout.write(
            f"Pushing release {push.release.version} ({push.edition} edition) to {push.repo} …"
        )
        try:
            done = release_push_run(push_id=push.pk, report=self.stdout.write)
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        if done is None:
            raise CommandError("Not pushed: a worker took the push")
        removed = (
            f", {counted(done.removed, 'file')} of the previous state removed"
            if done.removed
            else ""
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Pushed {counted(done.files, 'file')} as one commit{removed}, tagged "
                f"{done.release.version}: {done.commit_url}"
            )
        )
