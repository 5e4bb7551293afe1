"""Import a ground-truth set in the ICDAR 2013 format as extraction items."""

from __future__ import annotations

import csv
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from hctqa.core.wording import counted
from plumbing.errors import ApplicationError
from tracks.models import TrackItem
from tracks.services.groundtruth import ground_truth_import


def _read_splits(path: Path) -> dict[str, str]:
    if not path.is_file() or path.stat().st_size > 1024 * 1024:
        raise CommandError(f"{path}: no such file, or over 1 MB")
    out = {}
    for number, row in enumerate(csv.reader(path.read_text("utf-8").splitlines()), start=1):
        if not row or row[0].strip().lower() == "document":
            continue
        if len(row) != 2:
            raise CommandError(f"{path}, line {number}: document,split")
        out[row[0].strip()] = row[1].strip()
    return out


class Command(BaseCommand):
    help = (
        "Import a folder of documents with human-drawn table structure in the ICDAR 2013 "
        "Table Competition's format (NAME.pdf, NAME-reg.xml, NAME-str.xml) as extraction "
        "items of a ground-truth set. Importing the same code again replaces its items."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("folder", type=Path)
        parser.add_argument("--code", required=True, help="e.g. icdar-eu: starts its item ids")
        parser.add_argument("--name", default="", help="e.g. 'ICDAR 2013 (EU half)'")
        parser.add_argument("--url", default="")
        parser.add_argument("--licence", default="")
        parser.add_argument(
            "--splits",
            type=Path,
            help="a CSV of document,split lines (eu-001,test): those documents' split; the "
            "others take the stable hash of their name",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        document_splits = _read_splits(options["splits"]) if options["splits"] else None
        try:
            gt_set, rescored = ground_truth_import(
                user=None,
                code=options["code"],
                name=options["name"],
                folder=options["folder"],
                url=options["url"],
                licence=options["licence"],
                document_splits=document_splits,
            )
        except ApplicationError as exc:
            raise CommandError(f"Nothing was imported. {exc.message}") from None
        items = TrackItem.objects.filter(ground_truth_set=gt_set)
        by_split = ", ".join(
            f"{split} {items.filter(split=split).count():,}"
            for split in ("train", "validation", "test")
        )
        self.stdout.write(
            f"{gt_set.name} ({gt_set.code}): {counted(gt_set.documents, 'document')}, "
            f"{counted(gt_set.tables, 'table')}, {counted(items.count(), 'item')} ({by_split})."
        )
        if rescored:
            self.stdout.write(f"{rescored:,} scored submissions are scored again.")
