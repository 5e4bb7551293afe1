"""Generate all seven synthetic families at the paper's scale, then import them.

    .venv/bin/python benchmarks/synthetic_generation.py [--data ../shared/data] [--workers 2]

Goals: generation (4,666 tables, 67,558 questions, with the _NONSEM files) under 5 minutes on
a 2-core machine, and the import of the result under 1 minute. Prints tables per second, the
counts per family against the specification's reconstruction, and the import time.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from pathlib import Path

from _setup import setup

EXPECTED = {  # SYNTHETIC.md §9: tables, questions
    "Evolution_of_pollution_in_percent": (888, 12877),
    "Number_of_students": (234, 3361),
    "Number_of_graduations": (552, 7976),
    "Food_import-export_in_tons": (835, 12107),
    "Weather_statistics": (830, 12024),
    "Number_of_accidents": (464, 6704),
    "Number_of_constructions": (863, 12509),
}


def main() -> None:
    workers = int(os.environ.get("SYNTHETIC_WORKERS", "2"))
    args = setup(__doc__ or "")
    from django.core.management import call_command

    from annotation.models import Question, Table
    from hctqa.core.synthgen.output import write_generation
    from hctqa.core.synthgen.params import read_params
    from hctqa.core.synthgen.pipeline import RELEASE_NONSEM_OFFSETS, generate, parallel_questions

    params = read_params(args.data / "hctqa-synthetic")
    started = time.perf_counter()
    cpu = time.process_time()
    generation = generate(
        params,
        nonsense_offsets=RELEASE_NONSEM_OFFSETS,
        question_runner=parallel_questions(workers),
    )
    seconds = time.perf_counter() - started
    tables = len(generation.tables)
    print(
        f"generated {tables:,} tables, {generation.question_count:,} questions (+ _NONSEM) "
        f"in {seconds:.1f} s with {workers} workers: {tables / seconds:.1f} tables/s "
        f"(main process CPU {time.process_time() - cpu:.1f} s)"
    )
    ok = True
    for family, (want_tables, want_questions) in EXPECTED.items():
        got_tables = sum(1 for t in generation.tables if t.family == family)
        got_questions = sum(len(t.questions) for t in generation.tables if t.family == family)
        same = (got_tables, got_questions) == (want_tables, want_questions)
        ok &= same
        verdict = "ok" if same else "DIFFERENT"
        print(f"  {family:35} {got_tables:5} tables {got_questions:6} questions {verdict}")
    print(f"  totals equal the reconstruction (4,666 / 67,558): {ok}")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "synthetic"
        files = write_generation(generation, out)
        print(f"wrote {files:,} files")
        start = time.perf_counter()
        call_command("import_synthetic", str(out), stdout=io.StringIO())
        print(
            f"import_synthetic of the folder: {time.perf_counter() - start:.1f} s "
            f"({Table.objects.count():,} tables, {Question.objects.count():,} questions)"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
