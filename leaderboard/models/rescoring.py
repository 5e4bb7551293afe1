"""Re-scorings: submissions scored again together after their questions changed."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from hctqa.core.wording import counted
from plumbing.jobs import Job, RunStatus


class Rescore(Job):
    """Submissions scored again together because the questions or gold answers they were
    scored on changed: an import that moved splits or changed gold answers, the gold pool,
    a new rules version. A task on the scoring queue works through them; its progress is
    read off the submissions themselves."""

    reason = models.TextField()
    status = models.CharField(
        max_length=9, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    total = models.PositiveIntegerField(default=0, help_text="Submissions it took up.")
    created_at = models.DateTimeField(auto_now_add=True)
    # Lifecycle (plumbing.jobs.Job): the task slice holding it has the lease (a requeued or
    # duplicate message finds another and stops); its queued_at is null when it was never
    # handed to the queue (a data migration made it: the sweeper does that). It never fails
    # and its progress is read off its submissions.
    attempts = None
    error = None
    progress = None

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="rescore_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"re-scoring {self.pk}: {counted(self.total, 'submission')} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (RunStatus.QUEUED, RunStatus.RUNNING)
