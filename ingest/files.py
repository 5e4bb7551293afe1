"""Private files of the ingest app under ``INGEST_FILES_ROOT``: the uploaded documents, page
images and crops. Never served as files; views that check permissions stream them."""

from __future__ import annotations

import uuid
from pathlib import Path

from plumbing.private_files import PrivateFolder

_FOLDER = PrivateFolder("INGEST_FILES_ROOT", "an ingest file")
root = _FOLDER.root
path_of = _FOLDER.path_of
write = _FOLDER.write
read = _FOLDER.read
remove = _FOLDER.remove


def incoming() -> Path:
    """A fresh name for an upload being received."""
    folder = root() / "incoming"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{uuid.uuid4().hex}.part"
