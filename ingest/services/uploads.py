"""Uploads: a document's file received, judged by its bytes and kept, then queued for the
ingest worker; the collections the ``ingest`` command names.

The upload request only receives, hashes and stores the file, judging it by its bytes (size,
kind, a PDF's end marker, seen before): nothing in it parses a PDF or HTML, which can take
INGEST_PAGE_SECONDS and would hold a web worker. Opening the file is the ingest worker's job
(``extraction.document_extract``); a file it cannot open is refused there, on the document's
page."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from dataset.models import (
    Collection,
    Table,
)
from hctqa.core.extraction import documents as docs
from hctqa.core.extraction.images import PNG, image_format
from hctqa.core.hidden_text import without_hidden
from hctqa.core.wording import counted
from ingest import files
from ingest import jobs as ingest_jobs
from ingest.models import (
    Document,
    DocumentKind,
    DocumentStatus,
)
from ingest.permissions import INGESTING
from plumbing.errors import ApplicationError


class UploadRefused(ApplicationError):
    """An upload that is not ingested; ``code`` names the case (``duplicate``, ``encrypted``,
    ``too_large``, …)."""

    def __init__(self, code: str, message: str, *, document: Document | None = None) -> None:
        super().__init__(message, field="file")
        self.code = code
        self.document = document


# --- Collections (made by dataset.services.collection_create) -----------------------------


def collection_find(*, name: str) -> Collection:
    """A collection by its code or its name (as the command takes it)."""
    found = Collection.objects.filter(Q(code=name) | Q(name__iexact=name)).first()
    if found is None:
        known = ", ".join(Collection.objects.order_by("code").values_list("code", flat=True))
        raise ApplicationError(
            f"no collection {name!r}; collections: {known or 'none'}. Create one at "
            "/ingest/collections/new/ or in the admin.",
            field="collection",
        )
    return found


# --- Uploads ----------------------------------------------------------------------------------
# The upload request only receives, hashes and stores the file, judging it by its bytes (size,
# kind, a PDF's end marker, seen before): nothing in it parses a PDF or HTML, which can take
# INGEST_PAGE_SECONDS and would hold a web worker. Opening the file is the ingest worker's job
# (``document_extract``); a file it cannot open is refused there, on the document's page.


@dataclass(frozen=True)
class Received:
    path: Path
    sha256: str
    size: int
    head: bytes
    tail: bytes


_HEAD_BYTES = 4096
_TAIL_BYTES = 2048


def _receive(chunks: Iterable[bytes]) -> Received:
    """The upload written to a private temporary file, at most INGEST_MAX_BYTES of it."""
    limit = settings.INGEST_MAX_BYTES
    path = files.incoming()
    digest = hashlib.sha256()
    size = 0
    head = tail = b""
    try:
        with open(path, "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise UploadRefused(
                        "too_large",
                        f"This file is larger than the limit of {counted(limit, 'byte')} "
                        "(INGEST_MAX_BYTES); split the document, or ask an admin to raise it.",
                    )
                if len(head) < _HEAD_BYTES:
                    head += chunk[: _HEAD_BYTES - len(head)]
                tail = (tail + chunk)[-_TAIL_BYTES:]
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size == 0:
        path.unlink(missing_ok=True)
        raise UploadRefused("empty", "This file is empty.")
    return Received(path, digest.hexdigest(), size, head, tail)


def _remembered_refusal(sha256: str) -> None:
    """The same bytes as a file the ingest worker refused lately: refused again at once, with
    the reason it had, and not read again (a refused file sent in a loop costs nothing)."""
    since = timezone.now() - timedelta(seconds=settings.INGEST_REFUSED_MEMORY_SECONDS)
    refused = (
        Document.objects.select_related("collection")
        .filter(sha256=sha256, status=DocumentStatus.REFUSED, finished_at__gte=since)
        .order_by("-finished_at")
        .first()
    )
    if refused is not None:
        raise UploadRefused(
            refused.refused_code,
            f"{refused.message} (This same file was refused as document "
            f"{refused.collection.code}--{refused.number} on "
            f"{refused.finished_at:%Y-%m-%d %H:%M} UTC; it is not read again for now.)",
            document=refused,
        )


def _duplicate(sha256: str) -> None:
    existing = (
        Document.objects.select_related("collection")
        .filter(sha256=sha256)
        .exclude(status=DocumentStatus.REFUSED)
        .first()
    )
    if existing is not None:
        raise UploadRefused(
            "duplicate",
            f"This file was already ingested as document {existing.collection.code}--"
            f"{existing.number} ({existing.file_name}, {existing.collection.name}); it is not "
            "ingested again.",
            document=existing,
        )


def _kind_of(received: Received) -> str:
    """PDF, HTML or a PNG/JPEG image by the first bytes; a PDF must end with its end marker.
    No parsing: a picture is decoded by the ingest worker."""
    try:
        kind = docs.sniff(received.head)
        if kind == DocumentKind.PDF:
            docs.check_pdf_bytes_end(received.tail)
    except docs.DocumentError as exc:
        raise UploadRefused(exc.code, exc.message) from None
    return kind


def _suffix(kind: str, head: bytes) -> str:
    if kind == DocumentKind.IMAGE:
        return "png" if image_format(head) == PNG else "jpg"
    return kind


def _next_document_number(collection: Collection) -> int:
    """After the collection's documents and the document numbers of its existing table ids
    (the release's tables are ``psa--<document>--<n>`` too)."""
    used = Document.objects.filter(collection=collection).aggregate(n=Max("number"))["n"] or 0
    prefix = f"{collection.code}--"
    for table_id in Table.objects.filter(id__startswith=prefix).values_list("id", flat=True):
        number = table_id[len(prefix) :].split("--", 1)[0]
        if number.isdigit():
            used = max(used, int(number))
    return used + 1


def document_upload(
    *,
    user: Any,
    collection: Collection,
    file_name: str,
    chunks: Iterable[bytes],
    enqueue: bool = True,
) -> Document:
    """Keep an uploaded file and queue it for the ingest worker; or refuse it, keeping nothing.

    Refused here, each with its own message (``UploadRefused.code``): over the byte limit,
    empty, neither PDF, HTML nor a PNG or JPEG image by content (another picture format is
    named), a PDF cut short, a file already ingested (which says which document it is), and a
    file the worker refused within INGEST_REFUSED_MEMORY_SECONDS (with that refusal's reason).
    What needs the file opened (encrypted, damaged, too many pages, a web page without a
    table, a picture over INGEST_MAX_IMAGE_PIXELS, truncated or damaged) is refused by the
    worker, on the document's page.
    """
    if user is not None:  # None: the ingest command, run by whoever runs the server
        INGESTING.check(user)
    received = _receive(chunks)
    stored = ""
    try:
        _remembered_refusal(received.sha256)
        _duplicate(received.sha256)
        kind = _kind_of(received)
        name = without_hidden(Path(file_name or "document").name)[:255] or "document"
        stored = f"documents/{received.sha256}.{_suffix(kind, received.head)}"
        target = files.path_of(stored)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(received.path, target)
        with transaction.atomic():
            locked = Collection.objects.select_for_update().get(pk=collection.pk)
            document = Document.objects.create(
                collection=locked,
                number=_next_document_number(locked),
                kind=kind,
                file_name=name,
                sha256=received.sha256,
                size_bytes=received.size,
                stored_path=stored,
                uploaded_by=user,
                queued_at=timezone.now(),
            )
            if enqueue:
                transaction.on_commit(lambda: ingest_jobs.enqueue_extraction(document.pk))
    except IntegrityError:
        # The same file, uploaded at the same moment by someone else, won the race.
        files.remove(stored)
        _duplicate(received.sha256)
        raise
    except BaseException:
        received.path.unlink(missing_ok=True)
        if stored:
            files.remove(stored)
        raise
    return document
