"""Full comparison with the released synthetic families: every table, every file kind.

    .venv/bin/python benchmarks/synthetic_release_check.py [DATA_DIR]

Generates Number_of_students and Number_of_accidents from the release's parameter files and
compares all 698 tables' ten files with the zips byte for byte (students' _NONSEM files with
the documented offset of 3,596 draws), then prints the match count per file kind.
"""

from __future__ import annotations

import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hctqa.core.synthgen.params import read_params  # noqa: E402
from hctqa.core.synthgen.pipeline import ALL_KINDS, RELEASE_NONSEM_OFFSETS, generate  # noqa: E402

FAMILIES = ("Number_of_students", "Number_of_accidents")


def main() -> int:
    data = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    folder = data / "hctqa-synthetic"
    started = time.monotonic()
    generation = generate(read_params(folder), FAMILIES, nonsense_offsets=RELEASE_NONSEM_OFFSETS)
    print(f"generated {len(generation.tables)} tables in {time.monotonic() - started:.1f} s")
    failed = False
    for family in FAMILIES:
        archive = zipfile.ZipFile(folder / f"{family}.zip")
        released = {n for n in archive.namelist() if n.endswith("_HCT.csv")}
        ours = [t for t in generation.tables if t.family == family]
        matches: Counter[str] = Counter()
        names = set(archive.namelist())
        for table in ours:
            for kind in ALL_KINDS:
                name = table.file_name(kind)
                matches[kind] += name in names and archive.read(name) == table.file_bytes(kind)
        released_ids = {name.rsplit("_HCT", 1)[0] for name in released}
        same_ids = {t.id for t in ours} == released_ids
        print(f"{family}: {len(ours)} tables, {len(released)} released, same ids: {same_ids}")
        for kind in ALL_KINDS:
            print(f"  {kind:18} {matches[kind]:4}/{len(released)}")
            failed |= matches[kind] != len(released)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
