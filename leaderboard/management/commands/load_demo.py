"""Load the generated demo tables, one demo user per role and a few scored demo submissions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from accounts.services import demo_users_ensure
from annotation.services import demo_generated_questions_ensure
from dataset.reporting import report_summary
from dataset.services import release_import
from hctqa.core.demo import demo_tables
from hctqa.core.wording import counted
from leaderboard.demo import demo_submissions_ensure


class Command(BaseCommand):
    help = (
        "Load the demo dataset (generated HCTs with questions), one demo user per role, and "
        "demo submissions on the leaderboard."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-users", action="store_true", help="load the tables only")

    def handle(self, *args: Any, **options: Any) -> None:
        tables = demo_tables()
        summary = release_import(tables=tables)
        report_summary(self, summary)
        proposed = demo_generated_questions_ensure(table_ids=[t.id for t in tables])
        if proposed:
            self.stdout.write(
                f"Model-generated demo questions waiting for verification: {proposed}"
            )
        if options["no_users"]:
            return
        users = demo_users_ensure()
        submissions = demo_submissions_ensure(owner=User.objects.get(username="researcher"))
        self.stdout.write(
            "Demo submissions: "
            + ", ".join(
                f"{s.model_name} (recall {score.recall:.2f})"
                for s in submissions
                if (score := s.score_for()) is not None and score.recall is not None
            )
        )
        self.stdout.write("Demo logins (username / password, role):")
        for login in users:
            self.stdout.write(f"  {login.line()}")
        limit = counted(settings.SUBMISSION_DAILY_TEST_LIMIT, "test-split submission")
        self.stdout.write(f"  researcher's demo submissions do not use up its {limit} a day.")
