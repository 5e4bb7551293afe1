"""The one lifecycle of the platform's background jobs."""

from __future__ import annotations

from django.db import models


class RunStatus(models.TextChoices):
    """The states of a run (question generation, synthetic generation, inference, a
    re-scoring): queued, running, then done, failed or cancelled."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
