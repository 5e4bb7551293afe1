"""Write the model prompt of every benchmark question to a JSONL file."""

from __future__ import annotations

import json
import os
import tempfile
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dataset.selectors.prompts import PROMPT_SCOPES, PROMPT_SPLITS, prompt_records
from hctqa.core.prompts import PROMPT_STYLES, TABLE_FORMATS, PromptError
from hctqa.core.wording import counted


def _file_mode() -> int:
    """What open() would have given the file: mkstemp makes it private."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class Command(BaseCommand):
    help = (
        "Write one JSON line per verified question: qa_id, table_id and prompt (the chat "
        "messages, shaped like the release's prompts.jsonl). The file appears whole or not "
        "at all."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--format", required=True, choices=TABLE_FORMATS)
        parser.add_argument("--out", required=True, type=Path, help="the JSONL file to write")
        parser.add_argument("--split", default="all", choices=PROMPT_SPLITS)
        parser.add_argument("--scope", default="real", choices=PROMPT_SCOPES)
        parser.add_argument("--style", default="zero_shot", choices=PROMPT_STYLES)
        parser.add_argument(
            "--no-system-role",
            action="store_true",
            help="for models without a system role: the system text starts the user message",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out: Path = options["out"]
        folder = out.parent.resolve()
        if not folder.is_dir():
            raise CommandError(f"{out}: the folder {folder} does not exist")
        if out.is_dir():
            raise CommandError(f"{out} is a folder; give a file name")
        try:
            records = prompt_records(
                table_format=options["format"],
                split=options["split"],
                data_scope=options["scope"],
                prompt_style=options["style"],
                system_role=not options["no_system_role"],
            )
        except PromptError as exc:
            raise CommandError(str(exc)) from None
        try:
            # Written beside the target and renamed over it at the end, so a failure part
            # way leaves the old file (or no file), never half a file.
            handle, temp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise CommandError(f"{out}: cannot write in {folder} ({exc.strerror})") from None
        count = 0
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as f:
                for record in records:
                    # json.dumps' defaults are the release file's own spacing and escaping.
                    f.write(json.dumps(record.as_json()) + "\n")
                    count += 1
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temp, _file_mode())
            os.replace(temp, out)
        except PromptError as exc:
            os.unlink(temp)
            raise CommandError(f"Nothing was written. {exc}") from None
        except BaseException:
            os.unlink(temp)
            raise
        self.stdout.write(self.style.SUCCESS(f"Wrote {counted(count, 'prompt')} to {out}."))
