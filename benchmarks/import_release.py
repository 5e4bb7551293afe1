"""Time the import of the whole real release (1,880 tables, 9,835 questions) into an empty
database, then a second, no-op run. Goal: under 20 s on a 2-core machine.

    .venv/bin/python benchmarks/import_release.py [--data ../shared/data]
"""

from __future__ import annotations

import io
import time

from _setup import setup


def main() -> None:
    args = setup(__doc__ or "")
    from django.core.management import call_command

    from dataset.models import Question, Table

    real = args.data / "hctqa-real"
    command = [
        "import_hctqa",
        "--qaps",
        str(real / "qaps.json.gz"),
        "--csvs",
        str(real / "csvs.tar.gz"),
    ]
    figures = []
    for label in ("first import (empty database)", "second import (no changes)"):
        start = time.perf_counter()
        call_command(*command, stdout=io.StringIO())
        figures.append((label, time.perf_counter() - start))
    print(f"tables {Table.objects.count():,}, questions {Question.objects.count():,}")
    for label, seconds in figures:
        print(f"{label}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
