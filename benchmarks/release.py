"""Time cutting a release of the whole real release (1,880 tables, 9,835 questions) plus
70,000 synthetic questions (the two released families, copied under new ids). Goal: under
60 s on a 2-core machine.

    .venv/bin/python benchmarks/release.py [--data ../shared/data]

It prints the wall time of each cut, the CPU time of the build and its helper processes,
the files' sizes, and the machine's load average (other work on the machine slows it).
"""

from __future__ import annotations

import dataclasses
import io
import os
import resource
import time

from _setup import import_release, setup

SYNTHETIC_QUESTIONS = 70_000


def synthetic_copies(data) -> list:
    """The released synthetic families copied under new ids until they hold 70,000 questions."""
    from hctqa.core.release import read_synthetic_zip

    families = []
    for name in ("Number_of_students.zip", "Number_of_accidents.zip"):
        families += read_synthetic_zip(data / "hctqa-synthetic" / name)
    tables, total, copy = [], 0, 0
    while total < SYNTHETIC_QUESTIONS:
        for t in families:
            new_id = f"{t.id}-copy{copy}"
            questions = tuple(
                dataclasses.replace(q, id=q.id.replace(t.id, new_id, 1)) for q in t.questions
            )[: SYNTHETIC_QUESTIONS - total]
            synthetic = dataclasses.replace(
                t.synthetic,
                questions_sql={
                    k.replace(t.id, new_id, 1): v for k, v in t.synthetic.questions_sql.items()
                },
            )
            tables.append(
                dataclasses.replace(t, id=new_id, questions=questions, synthetic=synthetic)
            )
            total += len(questions)
            if total >= SYNTHETIC_QUESTIONS:
                break
        copy += 1
    return tables


def folder_size(path) -> int:
    seen, size = set(), 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            st = os.stat(os.path.join(root, name))
            if st.st_ino not in seen:  # hard links shared by both editions count once
                seen.add(st.st_ino)
                size += st.st_size
    return size


def main() -> None:
    args = setup(__doc__ or "")
    from django.conf import settings
    from django.core.management import call_command

    from dataset.models import Question, Table
    from dataset.services import release_import

    print("importing the real release and 70,000 synthetic questions (not timed) …")
    import_release(args.data)
    release_import(tables=synthetic_copies(args.data))
    print(
        f"tables {Table.objects.count():,}, verified questions "
        f"{Question.objects.filter(status='verified').count():,} "
        f"(synthetic {Question.objects.filter(table__source='synthetic').count():,})"
    )
    print(f"helper processes: {settings.RELEASE_BUILD_PROCESSES}")
    for version in ("2026.11", "2026.12"):
        load = os.getloadavg()[0]
        wall = time.perf_counter()
        cpu = time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        call_command("cut_release", version, stdout=io.StringIO())
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        helpers = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
        size = folder_size(settings.RELEASES_ROOT / version)
        folder = settings.RELEASES_ROOT / version
        archives = ", ".join(
            f"{e} {(folder / e / f'hctqa-{version}-{e}.tar.gz').stat().st_size / 1e6:,.0f} MB"
            for e in ("public", "full")
        )
        print(
            f"cut {version}: {wall:.1f} s wall; CPU {cpu:.1f} s in the build, {helpers:.1f} s "
            f"in its helpers; {size / 1e6:,.0f} MB on disk (both editions; the one download: "
            f"{archives}); load average {load:.1f} before, {os.getloadavg()[0]:.1f} after"
        )


if __name__ == "__main__":
    main()
