"""Writing a generation to disk in the released layout, all or nothing."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hctqa.core.synthgen.pipeline import ALL_KINDS, Generation


class OutputError(ValueError):
    pass


def write_generation(generation: Generation, out_dir: str | Path, *, force: bool = False) -> int:
    """Write every table's ten files into ``out_dir`` (flat, as in the released zips).

    The files go to a temporary folder beside it first and are moved in only when all are
    written, so a failure leaves ``out_dir`` as it was. A non-empty folder is refused unless
    ``force``. Returns the number of files written.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"Not a folder: {out} exists and is something else")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise OutputError(f"The folder {out} is not empty (use --force to write into it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".synthetic-", dir=out.parent))
    try:
        count = 0
        for table in generation.tables:
            for kind in ALL_KINDS:
                (staging / table.file_name(kind)).write_bytes(table.file_bytes(kind))
                count += 1
        out.mkdir(exist_ok=True)
        for path in staging.iterdir():
            os.replace(path, out / path.name)
        return count
    finally:
        shutil.rmtree(staging, ignore_errors=True)
