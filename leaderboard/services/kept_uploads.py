"""Predictions files kept between two tries of the submission form.

When a form comes back with problems that are not the file's own (a blank field, a split
the file does not answer), the file is kept so the researcher does not choose it again:
in private storage (never served), for its owner only, found by an unguessable token
that the form carries in a hidden field, at most ``KEPT_PER_USER`` per user, and for
``SUBMISSION_KEPT_UPLOAD_SECONDS``; the sweeper deletes what has expired.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timedelta
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.files.base import File
from django.db import transaction
from django.utils import timezone

from leaderboard.models import KeptUpload

# A user trying the form in several tabs keeps one file per tab, up to this many.
KEPT_PER_USER = 3


def _delete_files(names: list[str]) -> None:
    storage = KeptUpload._meta.get_field("file").storage
    for name in names:
        storage.delete(name)


@transaction.atomic
def kept_upload_save(*, owner: Any, upload: File) -> KeptUpload | None:
    """Keep ``upload`` for ``owner``'s next try; None when it is too large to keep."""
    if upload.size is None or upload.size > settings.SUBMISSION_MAX_BYTES:
        return None
    older = list(KeptUpload.objects.filter(owner=owner).order_by("-created_at", "-id"))
    dropped = older[KEPT_PER_USER - 1 :]
    KeptUpload.objects.filter(pk__in=[k.pk for k in dropped]).delete()
    names = [k.file.name for k in dropped]
    transaction.on_commit(lambda: _delete_files(names))
    kept = KeptUpload(
        token=secrets.token_urlsafe(32),
        owner=owner,
        name=PurePath(upload.name or "predictions").name[:255],
        size=upload.size,
        expires_at=timezone.now() + timedelta(seconds=settings.SUBMISSION_KEPT_UPLOAD_SECONDS),
    )
    upload.seek(0)
    # A name of our own: the researcher's file name is only shown, never used as a path.
    kept.file.save(uuid.uuid4().hex, upload, save=False)
    kept.save()
    return kept


def kept_upload_get(*, owner: Any, token: str) -> KeptUpload | None:
    """The file ``owner`` kept under ``token``, if it has not expired."""
    if not token:
        return None
    return KeptUpload.objects.filter(
        owner=owner, token=token, expires_at__gt=timezone.now()
    ).first()


@transaction.atomic
def kept_upload_discard(*, kept: KeptUpload) -> None:
    KeptUpload.objects.filter(pk=kept.pk).delete()
    name = kept.file.name
    transaction.on_commit(lambda: _delete_files([name]))


@transaction.atomic
def kept_uploads_expire(*, now: datetime | None = None) -> int:
    """Delete the kept files past their time; returns how many."""
    expired = KeptUpload.objects.filter(expires_at__lte=now or timezone.now())
    names = list(expired.values_list("file", flat=True))
    expired.delete()
    transaction.on_commit(lambda: _delete_files(names))
    return len(names)
