"""The sweeps worker's task: every job kind the apps registered (``plumbing.jobs``)."""

from __future__ import annotations

from typing import Any

from hctqa.celery import app


# On the "sweeps" queue, every SWEEP_EVERY_SECONDS (beat): a job whose worker died is queued
# again within a minute, whatever its kind.
@app.task(acks_late=True)
def sweep_jobs() -> dict[str, Any]:
    from plumbing.jobs import sweep_all

    return sweep_all()
