"""Requeue or fail submissions stuck in the queue or in scoring (the worker's beat does this
every minute; this command is for setups without beat)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from leaderboard.services import submission_sweep


class Command(BaseCommand):
    help = "Requeue or fail submissions stuck past SUBMISSION_STUCK_AFTER_SECONDS."

    def handle(self, *args: Any, **options: Any) -> None:
        result = submission_sweep()
        self.stdout.write(
            f"requeued: {result.requeued or 'none'}; failed: {result.failed or 'none'}"
        )
