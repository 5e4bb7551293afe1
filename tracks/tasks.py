"""Background work for the tracks. Tasks take ids and call one service each; builds whose
worker went away are failed by the one sweep of every job kind (``plumbing.tasks.sweep_jobs``,
``tracks.jobs``)."""

from __future__ import annotations

from hctqa.celery import RETRY_ON_DATABASE_ERROR, app


# On the "builds" queue (CELERY_TASK_ROUTES): drawing every synthetic table takes a minute
# or two, and the baselines after it as long again.
@app.task(**RETRY_ON_DATABASE_ERROR)
def build_track_items(self: object, build_id: int) -> dict | None:
    from plumbing.errors import ApplicationError
    from tracks.services.builds import item_build_run

    try:
        counts = item_build_run(build_id=build_id)
    except ApplicationError as exc:
        return {"failed": exc.message}
    return counts.as_dict() if counts else None
