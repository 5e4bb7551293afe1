"""Background work of the ingest app. Tasks take ids and call one service each."""

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
def extract_document(self: object, document_id: int) -> str:
    from ingest.services import document_extract

    return document_extract(document_id=document_id)


@app.task(acks_late=True)
def sweep_documents() -> int:
    from ingest.services import documents_sweep

    return documents_sweep()


@app.task(
    bind=True,
    acks_late=True,
    autoretry_for=(DatabaseError,),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=5,
)
def score_candidate(self: object, candidate_id: int) -> float | None:
    from ingest.services import candidate_score

    return candidate_score(candidate_id=candidate_id)
