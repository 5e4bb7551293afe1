"""A folder of private files that a setting names (``INGEST_FILES_ROOT``,
``TRACK_FILES_ROOT``): files are named by a path relative to it, never leave it, are written
whole or not at all, and are never served as files (views that check permissions stream
them)."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from django.conf import settings


class PrivateFolder:
    def __init__(self, setting: str, what: str) -> None:
        self.setting = setting
        self.what = what  # "an ingest file": what a path outside the folder is not

    def root(self) -> Path:
        return Path(getattr(settings, self.setting))

    def path_of(self, relative: str) -> Path:
        """The file's path; a name that would leave the root is refused."""
        base = self.root().resolve()
        path = (base / relative).resolve()
        if base not in path.parents:
            raise ValueError(f"not {self.what}: {relative!r}")
        return path

    def write(self, relative: str, data: bytes) -> None:
        """Write the whole file or nothing: a temporary name first, then renamed into place."""
        path = self.path_of(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
        partial.write_bytes(data)
        os.replace(partial, path)

    def read(self, relative: str) -> bytes:
        return self.path_of(relative).read_bytes()

    def remove(self, relative: str) -> None:
        with contextlib.suppress(FileNotFoundError, ValueError):
            self.path_of(relative).unlink()
