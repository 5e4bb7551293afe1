"""Deterministic train/validation/test splits, assigned per table."""

from __future__ import annotations

import hashlib
from typing import Literal

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")


def split_for_table(table_id: str) -> Split:
    """80/10/10 by a stable hash of the table id.

    SHA-256 rather than ``hash()``, which Python salts per process.
    """
    bucket = int.from_bytes(hashlib.sha256(table_id.encode("utf-8")).digest()[:8], "big") % 10
    if bucket < 8:
        return "train"
    return "validation" if bucket == 8 else "test"
