"""Background work of the ingest app. Tasks take ids and call one service each."""

from __future__ import annotations

from hctqa.celery import RETRY_ON_DATABASE_ERROR, app


@app.task(**RETRY_ON_DATABASE_ERROR)
def extract_document(self: object, document_id: int) -> str:
    from ingest.services import document_extract

    return document_extract(document_id=document_id)


@app.task(**RETRY_ON_DATABASE_ERROR)
def score_candidate(self: object, candidate_id: int) -> float | None:
    from ingest.services import candidate_score

    return candidate_score(candidate_id=candidate_id)
