"""Background work for the dataset. Tasks take ids and call one service each."""

from __future__ import annotations

from hctqa.celery import RETRY_ON_DATABASE_ERROR, app


@app.task(**RETRY_ON_DATABASE_ERROR)
def generate_questions(self: object, run_id: int) -> str:
    from annotation.services import generation_run_execute

    return generation_run_execute(run_id=run_id)


@app.task(acks_late=True)
def release_expired_leases() -> int:
    from annotation.services import leases_release_expired

    return leases_release_expired()


@app.task(**RETRY_ON_DATABASE_ERROR)
def synthetic_generation(self: object, run_id: int) -> str:
    from annotation.services import synthetic_run_execute

    return synthetic_run_execute(run_id=run_id)
