"""Cut a dataset release in the foreground."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from hctqa.core.wording import counted
from plumbing.errors import ApplicationError
from releases import selectors
from releases.services import release_build_run, release_build_start


class Command(BaseCommand):
    help = (
        "Build a dataset release now: both editions, every format. The last line printed is "
        "the path of the public edition's Hugging Face folder."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("version", help="e.g. 2026.11 or 1.0.0")
        parser.add_argument("--title", help="defaults to 'HCT-QA VERSION'")
        parser.add_argument("--notes", default="", help="what is new, for the release page")
        parser.add_argument(
            "--user", help="the admin to record as cutting it (default: nobody, the operator)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = self._user(options["user"])
        version = options["version"]
        try:
            build = release_build_start(
                user=user,
                version=version,
                title=options["title"] or f"HCT-QA {version.strip()}",
                notes=options["notes"],
                enqueue=False,
            )
            self.stdout.write(f"Building release {build.version} …")
            last = [-1]

            def report(percent: int, stage: str) -> None:
                if percent // 10 != last[0] // 10 or percent == 100:
                    last[0] = percent
                    self.stdout.write(f"{percent:3d}% {stage}")

            release = release_build_run(build_id=build.pk, report=report)
        except ApplicationError as exc:
            raise CommandError(f"No release was made: {exc.message}") from None
        if release is None:
            raise CommandError("No release was made: the build was taken by a worker")
        counts = release.counts
        self.stdout.write(
            self.style.SUCCESS(
                f"Release {release.version}: {counted(counts['questions'], 'question')} on "
                f"{counted(counts['tables'], 'table')}, in {release.build_seconds:.1f} s."
            )
        )
        self.stdout.write(str(selectors.release_folder(release) / "public" / "hf"))

    def _user(self, username: str | None) -> Any:
        """The named admin, or None: whoever runs manage.py on the server may cut a release."""
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}")
        if not selectors.can_cut_release(user):
            raise CommandError(f"{username} is not an admin; only admins cut releases")
        return user
