"""Scoring a full extraction-track submission: 5,000 items (the released synthetic tables
drawn to PDF and PNG in region and page mode, and the ICDAR 2013 EU set's tables and pages,
cycled under new ids), each predicted with damage (changed texts, a lost row, a cell merged
into its neighbour, boxes moved, a tenth missing), so that nearly every item needs its TEDS
computed in full.

    .venv/bin/python benchmarks/tracks_extraction.py [--items 5000] [--data ../shared/data]

Goal: under 60 s for 5,000 items. It also prints the time the reference TEDS
(``extraction.metrics.teds``, APTED) takes on a sample of the same pairs, and what drawing a
synthetic table to PDF and PNG costs in a worker. Its last line reads
``extraction <n> items (<t> tables) scored in <s> s; teds <x> teds_struct <x> adj_f1 <x>
exact <x> detection <x>; reference TEDS <s> s per table``.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hctqa.core.extraction import metrics  # noqa: E402
from hctqa.core.extraction.icdar import read_folder  # noqa: E402
from hctqa.core.release import read_synthetic_zip  # noqa: E402
from hctqa.core.tracks.extraction import (  # noqa: E402
    compare_tables,
    icdar_items,
    read_table,
    score_extraction,
    synthetic_items,
)
from hctqa.core.tracks.shared import Item  # noqa: E402

FAMILIES = ("Number_of_students", "Number_of_accidents")


def damaged_table(table: dict, rng: random.Random) -> dict:
    out = copy.deepcopy(table)
    cells = out["cells"]
    for cell in cells:
        if rng.random() < 0.15:
            cell["text"] = cell["text"] + rng.choice(["x", " 1", ""])[: rng.randint(0, 2)]
    if cells and rng.random() < 0.4:
        lost = rng.randrange(out["rows"])
        out["cells"] = cells = [c for c in cells if c["row"] != lost]
    if cells and rng.random() < 0.4:
        cell = rng.choice(cells)
        cell["colspan"] = cell.get("colspan", 1) + 1
    return out


def prediction(item: Item, rng: random.Random) -> dict | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return item.gold
    if item.inputs["mode"] == "region":
        return damaged_table(item.gold, rng)
    tables = []
    for table in item.gold["tables"]:
        if rng.random() < 0.1:
            continue  # missed
        moved = damaged_table(table, rng)
        x0, top, x1, bottom = table["bbox"]
        shift = rng.uniform(0, 0.3) * (bottom - top)
        moved["bbox"] = [x0, top + shift, x1, bottom + shift]
        tables.append(moved)
    if rng.random() < 0.2:
        tables.append({"bbox": [1, 1, 50, 20], "cells": [{"row": 0, "col": 0, "text": "x"}]})
    return {"tables": tables}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", REPO.parent / "shared" / "data")),
    )
    args = parser.parse_args()

    base: list[Item] = []
    started = time.monotonic()
    drawn = 0
    for family in FAMILIES:
        for table in read_synthetic_zip(args.data / "hctqa-synthetic" / f"{family}.zip"):
            base += synthetic_items(
                table_id=table.id,
                hct_html=table.synthetic.hct_html,
                title=family.replace("_", " "),
            )
            drawn += 1
    draw_seconds = time.monotonic() - started
    base += icdar_items(read_folder(args.data / "icdar2013-eu"))
    print(
        f"{len(base):,} distinct items ({drawn} synthetic tables drawn to PDF and PNG in "
        f"{draw_seconds:.1f} s, {draw_seconds / drawn * 1000:.0f} ms a table)",
        flush=True,
    )
    rng = random.Random(2026)
    items: list[Item] = []
    predictions: dict[str, dict | None] = {}
    for k in range(args.items):
        item = base[k % len(base)]
        copy_of = Item(
            id=f"{item.id}#{k // len(base)}",
            track=item.track,
            table_id=item.table_id,
            inputs=item.inputs,
            gold=item.gold,
            source=item.source,
        )
        items.append(copy_of)
        predictions[copy_of.id] = prediction(item, rng)
    compare_tables.cache_clear()
    started, cpu = time.monotonic(), time.process_time()
    card = score_extraction(items, predictions)
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    cache = compare_tables.cache_info()
    print(
        f"scored {card.n:,} items ({card.extra['tables']:,} true tables, {cache.misses:,} "
        f"table comparisons computed, {cache.hits:,} from the cache) in {seconds:.1f} s "
        f"({cpu:.1f} s of CPU: a loaded machine inflates the first)"
    )
    print({k: round(v, 4) for k, v in card.figures.items()}, card.reasons)

    # The reference TEDS on a sample of the same pairs.
    sample = [i for i in items if i.inputs["mode"] == "region" and predictions[i.id]][:40]
    from hctqa.core.tracks.teds import teds

    started = time.monotonic()
    reference = []
    for item in sample:
        truth = metrics.competition_form(read_table(item.gold))
        found = metrics.competition_form(read_table(predictions[item.id]))
        reference.append((metrics.teds(found, truth, count_root=False), found, truth))
    per_table = (time.monotonic() - started) / len(sample)
    worst = max(abs(teds(f, t, count_root=False) - r) for r, f, t in reference)
    print(
        f"reference TEDS (APTED) on {len(sample)} of the same pairs: {per_table:.3f} s a table; "
        f"the largest difference from the fast TEDS: {worst:.1e}"
    )
    print(
        f"extraction {card.n} items ({card.extra['tables']} tables) scored in {seconds:.1f} s "
        f"({cpu:.1f} s CPU); "
        f"teds {card.figures['teds']:.3f} teds_struct {card.figures['teds_struct']:.3f} "
        f"adj_f1 {card.figures['adj_f1']:.3f} exact {card.figures['exact']:.3f} detection "
        f"{card.figures['detection_recall']:.3f}; reference TEDS {per_table:.3f} s per table"
    )


if __name__ == "__main__":
    main()
