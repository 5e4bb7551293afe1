"""Writes of the ingest app, by seam: ``uploads`` (a file received and queued), ``extraction``
(the worker reading its pages into candidates) and ``review`` (editors correcting, accepting
or rejecting candidates). Callers import from here; the web pages, the API, the ``ingest``
command and the Celery tasks all go through these."""

from ingest.services.extraction import (
    BLANK_MESSAGE,
    NO_TABLE_MESSAGE,
    NO_TEXT_MESSAGE,
    NO_TEXT_READ_MESSAGE,
    candidate_score,
    document_extract,
    documents_sweep,
)
from ingest.services.review import (
    MAX_CELL_CHARS,
    MAX_EDIT_POSITIONS,
    MAX_IMAGE_BYTES,
    DraftResult,
    EditState,
    candidate_accept,
    candidate_draft_save,
    candidate_draw,
    candidate_image_attach,
    candidate_reextract,
    candidate_reject,
    edit_state,
)
from ingest.services.uploads import UploadRefused, collection_find, document_upload

__all__ = [
    "BLANK_MESSAGE",
    "MAX_CELL_CHARS",
    "MAX_EDIT_POSITIONS",
    "MAX_IMAGE_BYTES",
    "NO_TABLE_MESSAGE",
    "NO_TEXT_MESSAGE",
    "NO_TEXT_READ_MESSAGE",
    "DraftResult",
    "EditState",
    "UploadRefused",
    "candidate_accept",
    "candidate_draft_save",
    "candidate_draw",
    "candidate_image_attach",
    "candidate_reextract",
    "candidate_reject",
    "candidate_score",
    "collection_find",
    "document_extract",
    "document_upload",
    "documents_sweep",
    "edit_state",
]
