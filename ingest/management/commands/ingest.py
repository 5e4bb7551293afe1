"""python manage.py ingest PATH... --collection NAME [--user NAME] [--enqueue]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from hctqa.core.wording import counted
from ingest import services
from ingest.models import Document, DocumentStatus
from plumbing.errors import ApplicationError

_CHUNK = 1024 * 1024


def _chunks(path: Path) -> Any:
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk


class Command(BaseCommand):
    help = (
        "Ingest PDFs, saved web pages and PNG/JPEG images into a collection: each file is "
        "checked, kept, and opened and its tables extracted (here, by the ingest task's own "
        "code, or by the ingest worker with --enqueue)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--collection", required=True, help="its code or name")
        parser.add_argument("--user", help="recorded as the uploader (default: none)")
        parser.add_argument(
            "--enqueue", action="store_true", help="leave extraction to the ingest worker"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            collection = services.collection_find(name=options["collection"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']!r}")
        failures = 0
        for path in options["paths"]:
            if not path.is_file():
                self.stderr.write(f"{path}: no such file")
                failures += 1
                continue
            try:
                document = services.document_upload(
                    user=user,
                    collection=collection,
                    file_name=path.name,
                    chunks=_chunks(path),
                    enqueue=options["enqueue"],
                )
            except services.UploadRefused as exc:
                self.stderr.write(f"{path}: {exc.message}")
                failures += exc.code != "duplicate"
                continue
            name = f"{collection.code}--{document.number}"
            if options["enqueue"]:
                self.stdout.write(f"{path}: document {name}, queued")
                continue
            # Read here, in this process: the shared worker's budget and turns do not apply.
            services.document_extract(document_id=document.pk, shared=False)
            document.refresh_from_db()
            if document.status == DocumentStatus.REFUSED:
                self.stderr.write(f"{path}: {document.message}")
                failures += 1
                continue
            self.stdout.write(self._summary(path, name, document.pk))
        if failures:
            raise CommandError(f"{counted(failures, 'file')} not ingested")

    def _summary(self, path: Path, name: str, document_id: int) -> str:
        document = Document.objects.get(pk=document_id)
        candidates = list(document.candidates.values_list("strategy", flat=True))
        kinds = ", ".join(f"{candidates.count(k)} {k}" for k in sorted(set(candidates)))
        line = (
            f"{path}: document {name}, {counted(document.page_count or 0, 'page')}, "
            f"{counted(len(candidates), 'table candidate')}" + (f" ({kinds})" if kinds else "")
        )
        if document.message:
            line += f"\n  {document.message}"
        return line
