"""Core scoring speed on the real sample answers. No database.

1. 100,000 text predictions under each rule version and 100,000 vision predictions (the
   sample answers, repeated), scored one by one. Goal: under 1 s each.
2. Whole evaluations of the 9,835-question text file, with intervals and per-source figures:
   2025-05 alone, 2025-10 alone and both together (``evaluate_all``). Goal: both together
   cost at most 1.5 times one version.
3. The platform's scoring work on that file (split "all", the official test questions
   hidden): the evaluation plus the breakdowns, with the withheld groups worked out, for
   2025-05 alone and for both versions, as a submission's scoring does it. Goal: at most
   1.5 times. (Django is set up for the code's imports; no database is touched.)

    .venv/bin/python benchmarks/scoring.py [--data ../shared/data] [--rounds 9]

This machine is shared, so timings wander from run to run: each measurement is repeated in
interleaved rounds and the median is printed, with the CPU time of this process beside the
wall-clock time (other processes slow the first far less than the second).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hctqa.core.release import parse_qaps, read_bytes  # noqa: E402
from hctqa.core.scoring import evaluate, evaluate_all, score_text, score_vision  # noqa: E402

N = 100_000


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def rounds(works: dict[str, Callable[[], object]], n: int) -> dict[str, tuple[float, float]]:
    """Median wall-clock and CPU seconds of each work, run in interleaved rounds."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in works}
    for _ in range(n):
        for name, work in works.items():
            samples[name].append(timed(work))
    return {
        name: (statistics.median(s[0] for s in got), statistics.median(s[1] for s in got))
        for name, got in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", REPO.parent / "shared" / "data")),
    )
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    tables = parse_qaps(read_bytes(args.data / "hctqa-real" / "qaps.json.gz"))
    gold = {q.id: q.gold_answer for t in tables for q in t.questions}

    def sample(filename: str, key: str) -> dict[str, str]:
        path = args.data / "sample-submissions" / filename
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return {r[key]: r["response"] for r in map(json.loads, f)}

    text = sample("gemma-2-9b-it--text--real.jsonl.gz", "qap_id")
    vision = sample("InternVL2-4B--vision--real.jsonl.gz", "id")

    def repeated(predictions: dict[str, str]) -> list[tuple[str, str]]:
        pairs = [(gold[qid], response) for qid, response in predictions.items()]
        return (pairs * (N // len(pairs) + 1))[:N]

    text_pairs, vision_pairs = repeated(text), repeated(vision)

    def text_05() -> None:
        for g, response in text_pairs:
            score_text(g, response)

    def text_10() -> None:
        for g, response in text_pairs:
            score_text(g, response, rules="2025-10")

    def vision_05() -> None:
        for g, response in vision_pairs:
            score_vision(g, response)

    text_05()  # fills the gold-answer cache, as a running worker has it
    one_by_one = rounds(
        {"text 2025-05": text_05, "text 2025-10": text_10, "vision 2025-05": vision_05},
        max(3, args.rounds // 2),
    )
    for name, (wall, cpu) in one_by_one.items():
        print(
            f"{name:15} {N:,} predictions: {wall:.3f} s ({wall / N * 1e6:.1f} µs each), "
            f"CPU {cpu:.3f} s"
        )

    whole = rounds(
        {
            "2025-05": lambda: evaluate(gold, text, "text"),
            "2025-10": lambda: evaluate(gold, text, "text", rules="2025-10"),
            "both": lambda: evaluate_all(gold, text, "text"),
            "vision": lambda: evaluate(gold, vision, "vision"),
        },
        args.rounds,
    )
    for name, (wall, cpu) in whole.items():
        label = "vision 2025-05" if name == "vision" else f"text {name}"
        print(
            f"one full 9,835-question evaluation, {label:15}: {wall * 1000:5.0f} ms "
            f"(CPU {cpu * 1000:.0f} ms)"
        )
    one = whole["2025-05"]
    print(
        f"both versions together / 2025-05 alone: {whole['both'][0] / one[0]:.2f} wall-clock, "
        f"{whole['both'][1] / one[1]:.2f} CPU (goal: at most 1.5)"
    )
    platform(args, tables, gold, text)


def platform(args: argparse.Namespace, tables: list, gold: dict, text: dict) -> None:
    import tempfile

    os.environ.setdefault("HCTQA_VAR_DIR", tempfile.mkdtemp(prefix="hctqa-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hctqa.settings")
    import django

    django.setup()
    from hctqa.core.disclosure import forget_decisions
    from leaderboard.selectors import QuestionFacts
    from leaderboard.services import compute_breakdowns

    facts = {
        q.id: QuestionFacts(t.id, q.origin, q.template_number, q.query_properties,
                            t.table_properties)
        for t in tables
        for q in t.questions
    }  # fmt: skip
    official = args.data / "hctqa-real" / "official-test-tables.csv"
    test_tables = {line.split(",")[0] for line in official.read_text().split()[1:]}
    hidden = frozenset(q.id for t in tables if t.id in test_tables for q in t.questions)

    # Each round decides the disclosure afresh, as for a new file; a re-scoring of files with
    # the same structure decides once (the last line).
    def one_version() -> None:
        forget_decisions()
        evaluation = evaluate(gold, text, "text")
        compute_breakdowns({"2025-05": evaluation}, facts, hidden=hidden)

    def both_versions() -> None:
        forget_decisions()
        compute_breakdowns(evaluate_all(gold, text, "text"), facts, hidden=hidden)

    def both_again() -> None:
        compute_breakdowns(evaluate_all(gold, text, "text"), facts, hidden=hidden)

    work = rounds({"one": one_version, "both": both_versions}, args.rounds)
    again = rounds({"again": both_again}, args.rounds)["again"]
    for name, (wall, cpu) in work.items():
        label = "2025-05 alone" if name == "one" else "both versions"
        print(
            f"scoring work (evaluation + breakdowns, {len(hidden):,} hidden), {label:13}: "
            f"{wall * 1000:5.0f} ms (CPU {cpu * 1000:.0f} ms)"
        )
    print(
        f"scoring work, both / one: {work['both'][0] / work['one'][0]:.2f} wall-clock, "
        f"{work['both'][1] / work['one'][1]:.2f} CPU (goal: at most 1.5)"
    )
    print(
        f"scoring work, both versions, disclosure already decided for this structure: "
        f"{again[0] * 1000:5.0f} ms (CPU {again[1] * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    main()
