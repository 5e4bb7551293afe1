"""Requeue or fail submissions stuck in the queue or in scoring, and delete kept uploads that
have expired (the worker's beat does this every minute; this command is for setups without
beat)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from leaderboard.services import kept_uploads_expire, submission_sweep


class Command(BaseCommand):
    help = (
        "Requeue or fail submissions stuck past SUBMISSION_STUCK_AFTER_SECONDS; delete expired "
        "kept uploads."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        result = submission_sweep()
        expired = kept_uploads_expire()
        self.stdout.write(
            f"requeued: {result.requeued or 'none'}; failed: {result.failed or 'none'}; "
            f"kept uploads expired: {expired}"
        )
