from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings


@pytest.fixture(autouse=True)
def _ingest_files(tmp_path: Path) -> Iterator[Path]:
    """Each test its own private files and media."""
    with override_settings(INGEST_FILES_ROOT=tmp_path / "ingest", MEDIA_ROOT=tmp_path / "media"):
        yield tmp_path / "ingest"
