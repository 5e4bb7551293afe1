"""Writes to the dataset, by subject. Callers import from here: the apps built on the
dataset create tables and questions through these, never by writing the models themselves."""

from dataset.services.collections import collection_create
from dataset.services.imports import ImportSummary, release_import, release_splits
from dataset.services.questions import NewQuestion, new_question_ids, questions_add
from dataset.services.tables import table_create

__all__ = [
    "collection_create",
    "ImportSummary",
    "NewQuestion",
    "new_question_ids",
    "questions_add",
    "release_import",
    "release_splits",
    "table_create",
]
