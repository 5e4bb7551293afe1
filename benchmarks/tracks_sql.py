# ruff: noqa: E501, S608 - the hostile statements are long, and SQL built from strings on purpose
"""The NL-to-SQL track's sandbox under load: every released synthetic question's gold SQL
(10,065 statements), then a file of 1,000 hostile statements, each scored through the track's
own path (the submission reader, then ``score_sql``).

    .venv/bin/python benchmarks/tracks_sql.py [--data ../shared/data] [--honest N] [--hostile N]

Goals: 10,000 statements in under 60 s; 1,000 hostile statements in under 60 s with every
statement accounted for (a result or a reason per item) and the sandbox still serving
honest statements afterwards. Its last line reads
``sql honest <n> in <s> s; hostile <n> in <s> s, accounted <n>, reasons <...>; still serving <bool>``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hctqa.core.release import read_synthetic_zip  # noqa: E402
from hctqa.core.tracks.sandbox import DEFAULT_LIMITS, SqlSandbox  # noqa: E402
from hctqa.core.tracks.shared import read_submission  # noqa: E402
from hctqa.core.tracks.sql import score_sql, sql_items  # noqa: E402
from tests.hostile_sql import hostile_statements  # noqa: E402

FAMILIES = ("Number_of_students", "Number_of_accidents")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", REPO.parent / "shared" / "data")),
    )
    parser.add_argument("--honest", type=int, default=10_000)
    parser.add_argument("--hostile", type=int, default=1_000)
    args = parser.parse_args()

    items = []
    for family in FAMILIES:
        for table in read_synthetic_zip(args.data / "hctqa-synthetic" / f"{family}.zip"):
            items += sql_items(table)
    print(f"{len(items):,} NL-to-SQL items; limits: {DEFAULT_LIMITS}", flush=True)

    honest = items[: args.honest]
    with SqlSandbox() as sandbox:
        started = time.monotonic()
        card = score_sql(honest, {i.id: i.gold for i in honest}, sandbox=sandbox)
        honest_seconds = time.monotonic() - started
        steps = max(r.detail["steps"] for r in card.results.values())
        print(
            f"honest: {len(honest):,} gold statements in {honest_seconds:.1f} s "
            f"({honest_seconds / len(honest) * 1000:.2f} ms each); execution accuracy "
            f"{card.figures['execution_accuracy']:.4f}, recall {card.figures['recall']:.4f}; "
            f"the most steps one took: {steps:,} (limit {DEFAULT_LIMITS.steps:,})",
            flush=True,
        )

        attacks = list(itertools.islice(itertools.cycle(hostile_statements()), args.hostile))
        chosen = items[: args.hostile]
        lines = [
            json.dumps({"id": item.id, "prediction": sql})
            for item, (_kind, sql) in zip(chosen, attacks, strict=True)
        ]
        data = "\n".join(lines).encode("utf-8")
        before = sandbox.started
        started = time.monotonic()
        predictions = read_submission(data, track="sql", known_ids={i.id for i in chosen})
        hostile_card = score_sql(chosen, predictions, sandbox=sandbox)
        hostile_seconds = time.monotonic() - started
        accounted = sum(1 for r in hostile_card.results.values() if r.reason or r.detail)
        by_kind: dict[str, Counter[str]] = {}
        seconds_by_kind: Counter[str] = Counter()
        for item, (kind, _sql) in zip(chosen, attacks, strict=True):
            result = hostile_card.results[item.id]
            by_kind.setdefault(kind, Counter())[result.reason or "ran"] += 1
            seconds_by_kind[kind] += float(result.detail.get("seconds", 0.0))
        for kind, reasons in by_kind.items():
            print(f"  {kind:20} {dict(reasons)}  {seconds_by_kind[kind]:.2f} s in the sandbox")
        check = honest[:200]
        still = score_sql(check, {i.id: i.gold for i in check}, sandbox=sandbox)
        serving = still.figures["execution_accuracy"] == 1.0
        print(
            f"hostile: {len(chosen):,} statements in {hostile_seconds:.1f} s; "
            f"{accounted:,} accounted for; execution accuracy "
            f"{hostile_card.figures['execution_accuracy']:.3f}; sandbox children started: "
            f"{sandbox.started - before}; 200 honest statements afterwards all right: {serving}"
        )
    print(
        f"sql honest {len(honest)} in {honest_seconds:.1f} s; hostile {len(chosen)} in "
        f"{hostile_seconds:.1f} s, accounted {accounted}, reasons {hostile_card.reasons}; "
        f"still serving {serving}"
    )


if __name__ == "__main__":
    main()
