"""Say where the latest dataset release is (scripts/run prints it for new users)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.urls import reverse

from hctqa.core.wording import counted
from releases import selectors


class Command(BaseCommand):
    help = "Print the latest release's version and page (or how to cut the first)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--base-url", default="", help="the platform's address, e.g. http://127.0.0.1:8000"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base = options["base_url"].rstrip("/")
        release = selectors.latest_release()
        if release is None:
            self.stdout.write(
                f"Releases: none yet. An admin cuts one at {base}{reverse('releases:list')} or "
                "with: python manage.py cut_release VERSION"
            )
            return
        self.stdout.write(
            f"Latest release: {release.version} "
            f"({counted(release.counts.get('questions', 0), 'question')}), public edition at "
            f"{base}{release.get_absolute_url()}"
        )
