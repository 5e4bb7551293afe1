"""Generate all seven synthetic families at the paper's scale, then import them.

    .venv/bin/python benchmarks/synthetic_generation.py [--data ../shared/data] [--workers 2]

Goals: generation (4,666 tables, 67,558 questions, with the _NONSEM files) under 5 minutes on
a 2-core machine, and the import of the result under 1 minute. Prints tables per second, the
counts per family against the specification's reconstruction, and the import time.
"""

from __future__ import annotations

import io
import os
import resource
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

    from dataset.models import Question, Table
    from hctqa.core.synthgen.output import write_generation
    from hctqa.core.synthgen.params import read_params
    from hctqa.core.synthgen.pipeline import RELEASE_NONSEM_OFFSETS, generate, parallel_questions

    params = read_params(args.data / "hctqa-synthetic")
    stages: dict[str, tuple[float, float]] = {}  # first report: wall, own CPU

    def progress(stage: str, done: int, total: int) -> None:
        stages.setdefault(stage, (time.perf_counter(), time.process_time()))

    started = time.perf_counter()
    cpu = time.process_time()
    generation = generate(
        params,
        nonsense_offsets=RELEASE_NONSEM_OFFSETS,
        question_runner=parallel_questions(workers, progress),
        progress=progress,
        workers=workers,
    )
    seconds = time.perf_counter() - started
    own_cpu = time.process_time() - cpu
    workers_cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    tables = len(generation.tables)
    print(
        f"generated {tables:,} tables, {generation.question_count:,} questions (+ _NONSEM) "
        f"in {seconds:.1f} s with {workers} workers: {tables / seconds:.1f} tables/s"
    )
    print(
        f"  CPU: main process {own_cpu:.1f} s, question workers {workers_cpu:.1f} s in all "
        f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    marks = sorted(stages.items(), key=lambda kv: kv[1][0])
    for (name, (wall, _)), nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt[1][0] if nxt else time.perf_counter()
        print(f"  stage {name:10} from {wall - started:6.1f} s, {end - wall:6.1f} s wall")
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
        start_cpu = time.process_time()
        call_command("import_synthetic", str(out), stdout=io.StringIO())
        print(
            f"import_synthetic of the folder: {time.perf_counter() - start:.1f} s wall, "
            f"{time.process_time() - start_cpu:.1f} s CPU "
            f"({Table.objects.count():,} tables, {Question.objects.count():,} questions; "
            f"load average {os.getloadavg()[0]:.1f})"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
