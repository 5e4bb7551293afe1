"""The extraction track's baselines on a whole synthetic family: each table drawn to PDF (and
with ``--png`` to PNG, read through OCR), then read back by the platform's own extractor
(through its command's contract) and by pdfplumber's ``extract_tables``, in region and page
mode, and scored as the track scores submissions. Figures are split by the generator's two
looks: ruled (``border: 1px``, text centred) and borderless (text at the top left).

    .venv/bin/python benchmarks/tracks_readback.py [--family Number_of_students] [--limit N] [--png]

Its last line reads ``readback <family> <n> tables: platform pdf region exact <x> teds <x>
(ruled <x>, borderless <x>); page detection <x> teds <x>; pdfplumber region teds <x>``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hctqa.core.extraction.__main__ import MEMORY_MB, PAGE_SECONDS  # noqa: E402
from hctqa.core.extraction.worker import PageRunner  # noqa: E402
from hctqa.core.release import read_synthetic_zip  # noqa: E402
from hctqa.core.tracks.extraction import (  # noqa: E402
    pdfplumber_prediction,
    platform_prediction,
    score_extraction,
    synthetic_items,
)
from hctqa.core.tracks.rendering import ruled_in_html  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="Number_of_students")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--png", action="store_true", help="the PNG items too (OCR: slow)")
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", REPO.parent / "shared" / "data")),
    )
    args = parser.parse_args()
    tables = read_synthetic_zip(args.data / "hctqa-synthetic" / f"{args.family}.zip")
    if args.limit:
        tables = tables[: args.limit]
    folder = Path(tempfile.mkdtemp(prefix="tracks-readback-"))
    items, ruled = [], {}
    for table in tables:
        for item in synthetic_items(
            table_id=table.id,
            hct_html=table.synthetic.hct_html,
            title=args.family.replace("_", " "),
        ):
            if item.inputs["kind"] == "png" and not args.png:
                continue
            for name, data in item.files.items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(data)
            items.append(item)
            ruled[item.id] = ruled_in_html(table.synthetic.hct_html)
    print(
        f"{len(tables)} tables ({sum(ruled.values()) // (4 if args.png else 2)} ruled), "
        f"{len(items)} items in {folder}",
        flush=True,
    )
    figures: dict[str, dict] = {}
    with PageRunner(seconds=PAGE_SECONDS * 3, memory_mb=MEMORY_MB) as runner:
        for name, baseline in (
            ("platform", platform_prediction),
            ("pdfplumber", pdfplumber_prediction),
        ):
            started = time.monotonic()
            predictions = {i.id: baseline(i, folder, runner) for i in items}
            seconds = time.monotonic() - started
            for kind in ("pdf", "png") if args.png else ("pdf",):
                for mode in ("region", "page"):
                    chosen = [
                        i for i in items if i.inputs["kind"] == kind and i.inputs["mode"] == mode
                    ]
                    card = score_extraction(chosen, predictions)
                    looks = {}
                    for look in (True, False):
                        part = [i for i in chosen if ruled[i.id] is look]
                        if part:
                            looks[look] = score_extraction(part, predictions).figures
                    figures[f"{name} {kind} {mode}"] = card.figures
                    shown = {k: round(v, 3) for k, v in card.figures.items()}
                    split = "; ".join(
                        f"{'ruled' if look else 'borderless'} exact {f['exact']:.3f} "
                        f"teds {f['teds']:.3f}"
                        for look, f in looks.items()
                    )
                    print(f"{name:10} {kind} {mode:6} {shown}  ({split})", flush=True)
                    figures[f"{name} {kind} {mode} looks"] = looks
            print(f"{name}: {seconds / len(items):.3f} s an item", flush=True)
    region = figures["platform pdf region"]
    looks = figures["platform pdf region looks"]
    page = figures["platform pdf page"]
    print(
        f"readback {args.family} {len(tables)} tables: platform pdf region exact "
        f"{region['exact']:.3f} teds {region['teds']:.3f} (ruled {looks[True]['exact']:.3f}, "
        f"borderless {looks[False]['exact']:.3f}); page detection {page['detection_recall']:.3f} "
        f"teds {page['teds']:.3f}; pdfplumber region teds "
        f"{figures['pdfplumber pdf region']['teds']:.3f}"
    )


if __name__ == "__main__":
    main()
