"""The tracks through the platform: items built from the real data, then submissions checked
at upload (``submission_create``, what a page or the API does in the request) and scored by
the worker's own service (``submission_score``: reading the stored file, the core scorer,
intervals, breakdowns, disclosure, saving the per-item results), each timed.

    .venv/bin/python benchmarks/tracks_platform.py [--data ../shared/data] [--items 5000]

It imports both released synthetic families and the ICDAR 2013 EU set, builds every track's
items (drawing the 698 synthetic tables to PDF and PNG), then, in a throwaway database whose
synthetic tables are all moved to the train split (so one split holds enough items), scores:

- an extraction submission of ``--items`` region items and one of ``--items`` whole-page
  items (the real items, repeated under new ids past their number), each prediction damaged
  as ``benchmarks/tracks_extraction.py`` damages it, a tenth missing;
- every released question's gold SQL (10,065 statements) as one NL-to-SQL submission;
- a file of 1,000 hostile statements (``tests/hostile_sql.py``), then an honest file right
  after, in the same process.

Goals (issue 28): 5,000 extraction items in under 60 s; 10,000 statements in under 60 s;
1,000 hostile statements in under 60 s, every one accounted for, the worker still serving.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _setup import setup  # noqa: E402


def _arguments(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--items", type=int, default=5000)


def main() -> None:
    args = setup(__doc__.splitlines()[0], _arguments)
    import itertools

    from django.core.files.base import ContentFile
    from tracks_extraction import prediction

    from dataset.models import Table
    from dataset.services import release_import
    from hctqa.core.extraction.icdar import read_folder
    from hctqa.core.release import read_synthetic_zip
    from hctqa.core.tracks.extraction import compare_tables, icdar_items
    from leaderboard import services
    from leaderboard.models import ItemResult, Submission, TrackScore
    from leaderboard.services.submissions import predictions_file
    from tests.factories import UserFactory
    from tests.hostile_sql import hostile_statements
    from tracks.models import TrackItem
    from tracks.selectors import core_item
    from tracks.services.groundtruth import ground_truth_import
    from tracks.services.items import items_build

    started = time.monotonic()
    tables = []
    for family in ("Number_of_students", "Number_of_accidents"):
        tables += read_synthetic_zip(args.data / "hctqa-synthetic" / f"{family}.zip")
    release_import(tables=tables)
    Table.objects.filter(source="synthetic").update(split="train")
    folder = args.data / "icdar2013-eu"
    documents = {i.split_key.removeprefix("icdar--") for i in icdar_items(read_folder(folder))}
    ground_truth_import(
        user=None,
        code="icdar",
        name="ICDAR 2013 (EU half)",
        folder=folder,
        document_splits=dict.fromkeys(documents, "train"),
    )
    print(
        f"imported {len(tables)} synthetic tables and the ICDAR EU set in "
        f"{time.monotonic() - started:.1f} s",
        flush=True,
    )
    started = time.monotonic()
    counts = items_build()
    print(
        f"built the items in {time.monotonic() - started:.1f} s: {counts.by_track}; "
        f"{len(counts.skipped)} skipped",
        flush=True,
    )

    researcher = UserFactory(username="bench", role="researcher")

    def submit(
        track: str, mode: str, predictions: dict, name: str
    ) -> tuple[Submission, float, float]:
        data = services.SubmissionInput(
            model_name=name,
            weights="open",
            modality="text",
            table_format="other",
            split="train",
            data_scope="",
            track=track,
            mode=mode,
        )
        upload = ContentFile(predictions_file(predictions, qa=False), name="p.jsonl.gz")
        t0 = time.monotonic()
        submission = services.submission_create(owner=researcher, data=data, predictions=upload)
        checked = time.monotonic() - t0
        t0 = time.monotonic()
        services.submission_score(submission_id=submission.pk)
        scored = time.monotonic() - t0
        submission.refresh_from_db()
        assert submission.status == "scored", submission.error
        return submission, checked, scored

    # Extraction: the real items, repeated under new ids up to --items a mode.
    rng = random.Random(2026)
    for mode in ("region", "page"):
        base = list(TrackItem.objects.filter(track="extraction", mode=mode, split="train"))
        copies = []
        for k in range(len(base), args.items):
            row = base[k % len(base)]
            copies.append(
                TrackItem(
                    track="extraction",
                    item_id=f"{row.item_id}#{k // len(base)}",
                    mode=mode,
                    split="train",
                    source=row.source,
                    table_id=row.table_id,
                    ground_truth_set_id=row.ground_truth_set_id,
                    table_key=row.table_key,
                    split_key=row.split_key,
                    inputs=row.inputs,
                    gold=row.gold,
                    reference=row.reference,
                    files=row.files,
                    digest=row.digest,
                )
            )
        TrackItem.objects.bulk_create(copies, batch_size=1000)
        rows = list(TrackItem.objects.filter(track="extraction", mode=mode, split="train"))
        predictions = {row.item_id: prediction(core_item(row), rng) for row in rows}
        compare_tables.cache_clear()
        submission, checked, scored = submit("extraction", mode, predictions, f"damaged {mode}")
        score = TrackScore.objects.get(submission=submission)
        shown = {k: round(v, 3) for k, v in score.figures.items()}
        print(
            f"extraction ({mode}): {len(rows):,} items checked at upload in {checked:.1f} s, "
            f"scored by the worker's service in {scored:.1f} s; {shown}; {score.reasons}",
            flush=True,
        )

    sql = dict(TrackItem.objects.filter(track="sql", split="train").values_list("item_id", "gold"))
    submission, checked, scored = submit("sql", "", sql, "gold SQL")
    figures = TrackScore.objects.get(submission=submission).figures
    print(
        f"NL-to-SQL: {len(sql):,} gold statements checked at upload in {checked:.1f} s, scored "
        f"in {scored:.1f} s; {figures}",
        flush=True,
    )
    ids = sorted(sql)[:1000]
    attacks = itertools.cycle(hostile_statements())
    hostile = {item_id: next(attacks)[1] for item_id in ids}
    submission, checked, scored = submit("sql", "", hostile, "hostile")
    results = ItemResult.objects.filter(submission=submission, item__item_id__in=ids)
    reasons = Counter(results.values_list("reason", flat=True))
    accounted = sum(reasons.values())
    honest = {k: sql[k] for k in sorted(sql)[1000:1200]}
    after, _, after_seconds = submit("sql", "", honest, "honest after")
    still = TrackScore.objects.get(submission=after).n > 0 and ItemResult.objects.filter(
        submission=after, figures__execution_accuracy=1.0
    ).count() == len(honest)
    print(
        f"hostile: 1,000 statements checked at upload in {checked:.1f} s, scored in "
        f"{scored:.1f} s, accounted {accounted:,}, reasons {dict(reasons.most_common())}; an "
        f"honest file of {len(honest)} right after: all right {still} ({after_seconds:.1f} s)",
        flush=True,
    )


if __name__ == "__main__":
    main()
