"""Background work for the leaderboard. Tasks take ids and call one service each."""

from __future__ import annotations

from django.db import DatabaseError

from hctqa.celery import app


@app.task(
    bind=True,
    acks_late=True,
    autoretry_for=(DatabaseError,),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=5,
)
def score_submission(self: object, submission_id: int) -> str:
    from leaderboard.services import submission_score

    return submission_score(submission_id=submission_id)


@app.task(acks_late=True)
def sweep_submissions() -> dict[str, list[int]]:
    from leaderboard.services import submission_sweep

    result = submission_sweep()
    return {"requeued": result.requeued, "failed": result.failed}


@app.task(acks_late=True)
def refresh_property_regression() -> int | None:
    from leaderboard.services import property_regression_refresh

    result = property_regression_refresh()
    return result.pk if result else None
