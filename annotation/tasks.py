"""Background work for the dataset. Tasks take ids and call one service each."""

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
def generate_questions(self: object, run_id: int) -> str:
    from annotation.services import generation_run_execute

    return generation_run_execute(run_id=run_id)


@app.task(acks_late=True)
def release_expired_leases() -> int:
    from annotation.services import leases_release_expired

    return leases_release_expired()


@app.task(
    bind=True,
    acks_late=True,
    autoretry_for=(DatabaseError,),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=5,
)
def synthetic_generation(self: object, run_id: int) -> str:
    from annotation.services import synthetic_run_execute

    return synthetic_run_execute(run_id=run_id)
