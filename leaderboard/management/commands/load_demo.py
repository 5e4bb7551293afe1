"""Load the generated demo tables and the demo users (one per role)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from annotation.management.commands.import_hctqa import report_summary
from annotation.services import release_import
from hctqa.accounts.services import demo_users_ensure
from hctqa.core.demo import demo_tables


class Command(BaseCommand):
    help = "Load the demo dataset (generated HCTs with questions) and one demo user per role."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-users", action="store_true", help="load the tables only")

    def handle(self, *args: Any, **options: Any) -> None:
        summary = release_import(tables=demo_tables())
        report_summary(self, summary)
        if not options["no_users"]:
            users = demo_users_ensure()
            self.stdout.write("Demo logins (username / password, role):")
            for username, password, role in users:
                self.stdout.write(f"  {username} / {password}  ({role})")
