"""The items' files under ``TRACK_FILES_ROOT``: synthetic tables drawn to PDF and PNG, the
documents of accepted tables and of imported ground-truth sets. Never served as files;
``track_items`` and releases copy out those of the items they hold. An item names its files
by a path relative to the items folder (``extraction/<name>.pdf``), the same path here."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from plumbing.private_files import PrivateFolder

_FOLDER = PrivateFolder("TRACK_FILES_ROOT", "a track file")
root = _FOLDER.root
path_of = _FOLDER.path_of
write = _FOLDER.write


def exists(relative: str) -> bool:
    with contextlib.suppress(ValueError):
        return path_of(relative).is_file()
    return False


def copy_out(relatives: Iterable[str], folder: Path) -> int:
    """Copy these files into ``folder`` under the same relative paths (hard links where the
    file system allows); how many bytes they hold."""
    total = 0
    for relative in sorted(set(relatives)):
        source = path_of(relative)
        target = (folder / relative).resolve()
        if folder.resolve() not in target.parents:
            raise ValueError(f"not a track file: {relative!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.unlink()
        try:
            os.link(source, target)
        except OSError:
            target.write_bytes(source.read_bytes())
        total += source.stat().st_size
    return total


def remove_unused(used: set[str]) -> int:
    """Delete the files no item names any more; how many."""
    removed = 0
    base = root()
    if not base.is_dir():
        return 0
    for path in base.rglob("*"):
        if path.is_file() and str(path.relative_to(base)) not in used:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    return removed
