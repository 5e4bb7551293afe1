"""Write a track's items of one split to a folder: items.jsonl and the files it names."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dataset.models import Split
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError
from tracks.management.item_set import add_item_set_arguments
from tracks.registry import TRACKS, track
from tracks.services.export import ITEMS_FILE, items_write, split_has_public_gold


class Command(BaseCommand):
    help = (
        "Write DIR/items.jsonl, one JSON object per item of the track and split: id, the "
        "inputs a system needs (file paths relative to DIR for pages and images, which are "
        "written beside it) and, for train and validation only, gold: exactly a perfect "
        "prediction (for extraction, in the cell form). A submission file gives "
        '{"id": ..., "prediction": ...} per item.'
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--track", required=True, choices=list(TRACKS))
        parser.add_argument("--split", required=True, choices=Split.values)
        parser.add_argument("--out", required=True, type=Path, help="the folder to write")
        add_item_set_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        info = track(options["track"])
        out: Path = options["out"]
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out} is a file; give a folder")
        if options["mode"] and not info.modes:
            raise CommandError(f"The {info.name} track has no modes")
        split = options["split"]
        try:
            written = items_write(
                info,
                split=split,
                out=out,
                with_gold=split_has_public_gold(split),
                mode=options["mode"],
                data_scope=options["data_scope"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        if not written.items:
            how = (
                "import the dataset first"
                if info.is_qa
                else "build them first (python manage.py build_track_items)"
            )
            self.stderr.write(f"The {info.name} track has no items in the {split} split: {how}")
        gold = "with gold" if split_has_public_gold(split) else "without gold (hidden)"
        self.stdout.write(
            f"Wrote {counted(written.items, 'item')} {gold} to {out / ITEMS_FILE}, and "
            f"{counted(written.files, 'file')} ({written.bytes / 1024 / 1024:.1f} MB in all)."
        )
