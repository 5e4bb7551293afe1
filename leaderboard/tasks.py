"""Background work for the leaderboard. Tasks take ids and call one service each."""

from __future__ import annotations

from django.conf import settings

from hctqa.celery import RETRY_ON_DATABASE_ERROR, app


# On the "scoring" queue (CELERY_TASK_ROUTES). Past the soft limit the service fails the
# submission with the reason; the hard limit, a little later, kills a task that did not stop.
@app.task(
    **RETRY_ON_DATABASE_ERROR,
    soft_time_limit=settings.SUBMISSION_SCORING_TIME_LIMIT,
    time_limit=settings.SUBMISSION_SCORING_TIME_LIMIT + 30,
)
def score_submission(self: object, submission_id: int) -> str:
    from leaderboard.services import submission_score

    return submission_score(submission_id=submission_id)


# On the "scoring" queue. Each run works for at most RESCORE_SLICE_SECONDS, then queues the
# rest; the limits leave room for one long submission past the end of the slice.
@app.task(
    **RETRY_ON_DATABASE_ERROR,
    soft_time_limit=settings.RESCORE_SLICE_SECONDS + settings.SUBMISSION_SCORING_TIME_LIMIT,
    time_limit=settings.RESCORE_SLICE_SECONDS + settings.SUBMISSION_SCORING_TIME_LIMIT + 30,
)
def rescore_submissions(self: object, rescore_id: int) -> str:
    from leaderboard.services import rescore_run

    return rescore_run(rescore_id=rescore_id)


@app.task(acks_late=True)
def check_question_sets() -> list[int]:
    from leaderboard.services import submissions_check_question_sets

    return submissions_check_question_sets()


@app.task(acks_late=True)
def refresh_property_regression() -> int | None:
    from leaderboard.services import property_regression_refresh

    result = property_regression_refresh()
    return result.pk if result else None


# Routed to the "inference" queue (CELERY_TASK_ROUTES), for the worker beside the GPUs. A
# database error hands the run back to the queue and retries; a dead worker's run is resumed
# by the sweeper (plumbing.tasks.sweep_jobs).
@app.task(**{**RETRY_ON_DATABASE_ERROR, "retry_backoff": 5, "retry_backoff_max": 120})
def run_inference(self: object, run_id: int) -> str:
    from django.conf import settings

    from leaderboard.services import inference_run_execute

    return inference_run_execute(run_id=run_id, time_budget=settings.INFERENCE_SLICE_SECONDS)
