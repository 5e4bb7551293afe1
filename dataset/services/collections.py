"""Collections: where real tables come from."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from dataset.models import NOT_COLLECTIONS, Collection
from dataset.permissions import ADDING_COLLECTIONS
from hctqa.core.extraction.documents import DEFAULT_LANGUAGE as OCR_DEFAULT_LANGUAGE
from plumbing.errors import ApplicationError


@transaction.atomic
def collection_create(
    *,
    user: Any,
    code: str,
    name: str,
    publisher: str = "",
    url: str = "",
    licence: str = "",
    ocr_language: str = "",
) -> Collection:
    ADDING_COLLECTIONS.check(user)
    collection = Collection(
        code=code.strip(),
        name=name.strip(),
        publisher=publisher.strip(),
        url=url.strip(),
        licence=licence.strip(),
        ocr_language=ocr_language.strip() or OCR_DEFAULT_LANGUAGE,
    )
    if collection.code in NOT_COLLECTIONS:
        raise ApplicationError(
            f"'{collection.code}' is kept for the {collection.code} tables", field="code"
        )
    try:
        collection.full_clean()
    except ValidationError as exc:
        field, problems = next(iter(exc.message_dict.items()))
        raise ApplicationError(f"{field}: {' '.join(problems)}", field=field) from None
    collection.save()
    return collection
