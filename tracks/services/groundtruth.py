"""Importing a ground-truth set: documents with table structure drawn by people, in the
ICDAR 2013 Table Competition's format (``NAME.pdf``, ``NAME-reg.xml``, ``NAME-str.xml``;
``hctqa.core.extraction.icdar``). Its tables become extraction items whose gold is the
set's own (``extraction.icdar_items``): a region item per table drawn in one region, a page
item per page all of whose tables are. A set's split unit is the document (the stable hash
of the QA rule): every item of one document shares a split.

Importing a set again replaces its items: those still there keep their results, those gone
are deleted, and the leaderboard scores again what was scored on them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.db import transaction
from lxml import etree

from dataset.models import SOURCE_CODE_PATTERN
from dataset.signals import announce_question_set_change
from hctqa.core.extraction.icdar import read_folder
from hctqa.core.splits import SPLITS
from hctqa.core.tracks.extraction import icdar_items
from hctqa.core.tracks.shared import Item, TrackError, item_splits
from plumbing.errors import ApplicationError
from tracks import files
from tracks.models import RESERVED_SOURCES, GroundTruthSet, Track, TrackItem
from tracks.permissions import IMPORTING_GROUND_TRUTH
from tracks.services.items import item_digest

# A set's documents: at most this many, each PDF at most this large.
MAX_DOCUMENTS = 2000
MAX_PDF_BYTES = 100 * 1024 * 1024


def _checked_code(code: str) -> str:
    code = code.strip()
    if not re.fullmatch(SOURCE_CODE_PATTERN, code) or len(code) > 40:
        raise ApplicationError(
            "The set's code is lower-case letters and digits, words joined by single hyphens, "
            "at most 40 characters (e.g. icdar-eu)",
            field="code",
        )
    if code in RESERVED_SOURCES:
        raise ApplicationError(
            f"{code!r} names the platform's own items; give the set another code", field="code"
        )
    return code


def _given_splits(
    items: list[Item], code: str, document_splits: Mapping[str, str]
) -> dict[str, str]:
    """The split of each item's table where its document's is given."""
    documents = {item.split_key.removeprefix(f"{code}--") for item in items}
    unknown = sorted(set(document_splits) - documents)
    if unknown:
        raise ApplicationError(
            f"The splits name documents the set does not hold: {', '.join(unknown[:5])}"
        )
    bad = sorted({s for s in document_splits.values() if s not in SPLITS})
    if bad:
        raise ApplicationError(f"A split is one of {', '.join(SPLITS)}, not {', '.join(bad)}")
    return {
        item.table_id: document_splits[item.split_key.removeprefix(f"{code}--")]
        for item in items
        if item.split_key.removeprefix(f"{code}--") in document_splits
    }


def ground_truth_import(
    *,
    user: Any | None,
    code: str,
    name: str,
    folder: Path,
    url: str = "",
    licence: str = "",
    description: str = "",
    document_splits: Mapping[str, str] | None = None,
) -> tuple[GroundTruthSet, int]:
    """Import (or import again) the set in ``folder``; returns it and how many scored
    submissions are scored again because its items changed. ``document_splits``: the split
    of some documents (by name, ``eu-001``); the others take the stable hash. ``user`` None:
    the server's operator (the command). Nothing is written when the folder cannot be read
    whole."""
    if user is not None:
        IMPORTING_GROUND_TRUTH.check(user)
    code = _checked_code(code)
    name = name.strip() or code
    if not folder.is_dir():
        raise ApplicationError(f"{folder}: no such folder")
    pdfs = sorted(folder.glob("*.pdf"))
    if len(pdfs) > MAX_DOCUMENTS:
        raise ApplicationError(f"A set holds at most {MAX_DOCUMENTS:,} documents")
    for pdf in pdfs:
        if pdf.stat().st_size > MAX_PDF_BYTES:
            raise ApplicationError(f"{pdf.name} is over {MAX_PDF_BYTES // 1024 // 1024} MB")
    try:
        tables = read_folder(folder)
        items = icdar_items(tables, source=code)
    except (OSError, ValueError, KeyError, TrackError, etree.LxmlError) as exc:
        raise ApplicationError(
            f"{folder} cannot be read as ICDAR 2013 ground truth: {exc}"
        ) from None
    if not items:
        raise ApplicationError(
            f"{folder} holds no table with its structure (NAME.pdf with NAME-reg.xml and "
            "NAME-str.xml)"
        )
    splits = item_splits(items, _given_splits(items, code, document_splits or {}))
    for item in items:
        for relative, data in item.files.items():
            files.write(relative, data)
    with transaction.atomic():
        gt_set, _ = GroundTruthSet.objects.update_or_create(
            code=code,
            defaults={
                "name": name,
                "url": url,
                "licence": licence,
                "description": description,
                "documents": len({t.document for t in tables}),
                "tables": len(tables),
                "imported_by": user if user is not None and user.is_authenticated else None,
            },
        )
        existing = {
            item_id: (pk, digest)
            for pk, item_id, digest in TrackItem.objects.filter(
                ground_truth_set=gt_set
            ).values_list("pk", "item_id", "digest")
        }
        changed = False
        wanted = set()
        for item in items:
            split = splits[item.id]
            digest = item_digest(item, split)
            wanted.add(item.id)
            known = existing.get(item.id)
            if known is not None and known[1] == digest:
                continue
            changed = True
            TrackItem.objects.update_or_create(
                track=Track.EXTRACTION,
                item_id=item.id,
                defaults={
                    "mode": item.inputs["mode"],
                    "split": split,
                    "source": code,
                    "table": None,
                    "ground_truth_set": gt_set,
                    "table_key": item.table_id,
                    "split_key": item.split_key,
                    "inputs": dict(item.inputs),
                    "gold": item.gold,
                    "reference": dict(item.reference),
                    "files": sorted(item.files),
                    "digest": digest,
                },
            )
        gone = [pk for item_id, (pk, _) in existing.items() if item_id not in wanted]
        if gone:
            changed = True
            TrackItem.objects.filter(pk__in=gone).delete()
        rescored = 0
        if changed:
            rescored = announce_question_set_change(
                sender=TrackItem,
                reason=f"the ground-truth set {code} was imported again",
                question_ids=[],
            )
    return gt_set, rescored
