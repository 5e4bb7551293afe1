"""Private files of the ingest app under ``INGEST_FILES_ROOT``: the uploaded documents, page
images and crops. Never served as files; views that check permissions stream them."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from django.conf import settings


def root() -> Path:
    return Path(settings.INGEST_FILES_ROOT)


def path_of(relative: str) -> Path:
    """The file's path; a name that would leave the root is refused."""
    base = root().resolve()
    path = (base / relative).resolve()
    if base not in path.parents:
        raise ValueError(f"not an ingest file: {relative!r}")
    return path


def write(relative: str, data: bytes) -> None:
    """Write the whole file or nothing: a temporary name first, then renamed into place."""
    path = path_of(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
    partial.write_bytes(data)
    os.replace(partial, path)


def read(relative: str) -> bytes:
    return path_of(relative).read_bytes()


def remove(relative: str) -> None:
    with contextlib.suppress(FileNotFoundError, ValueError):
        path_of(relative).unlink()


def incoming() -> Path:
    """A fresh name for an upload being received."""
    folder = root() / "incoming"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{uuid.uuid4().hex}.part"
