"""Re-scoring after a split change: 1,000 test-split submissions (each the gemma sample's
answers to the whole release) scored on the hash split, then the official test split
imported. The import marks them stale; one worker (this process, running the re-scoring
task's service slice after slice) scores them all again on the 992 official test questions,
under both rules versions. Goal: under 2 minutes.

    .venv/bin/python benchmarks/rescoring.py [--data ../shared/data] [--submissions 1000]
"""

from __future__ import annotations

import io
import shutil
import sys
import time

from _setup import import_release, setup


def main() -> None:
    count = 1000
    if "--submissions" in sys.argv:
        at = sys.argv.index("--submissions")
        count = int(sys.argv[at + 1])
        del sys.argv[at : at + 2]
    args = setup(__doc__ or "")
    from django.conf import settings
    from django.core.management import call_command
    from django.db import transaction
    from django.db.models import Count
    from django.utils import timezone

    from leaderboard import tasks
    from leaderboard.models import Rescore, Status, Submission
    from leaderboard.services import current_question_sets, rescore_run
    from tests.factories import UserFactory

    # This process is the one worker: nothing is sent to a queue.
    tasks.rescore_submissions.delay = tasks.refresh_property_regression.delay = lambda *a: None

    start = time.perf_counter()
    import_release(args.data)  # the hash split
    print(f"release imported (hash split) in {time.perf_counter() - start:.1f} s")
    # One stored file for all of them: the gemma sample, every question of the release.
    stored = settings.PRIVATE_FILES_ROOT / "predictions" / "bench"
    stored.mkdir(parents=True, exist_ok=True)
    sample = args.data / "sample-submissions" / "gemma-2-9b-it--text--real.jsonl.gz"
    shutil.copy(sample, stored / "gemma.jsonl.gz")
    owner = UserFactory(username="bench-owner", role="researcher")
    digest = current_question_sets()["test/real"]
    now = timezone.now()
    Submission.objects.bulk_create(
        Submission(
            owner=owner,
            model_name=f"gemma-{i:04d}",
            weights="open",
            parameters_billions=9,
            modality="text",
            table_format="paper",
            split="test",
            data_scope="real",
            status=Status.SCORED,
            progress=100,
            scored_at=now,
            question_set_sha256=digest,
            predictions="predictions/bench/gemma.jsonl.gz",
        )
        for i in range(count)
    )
    official = args.data / "hctqa-real" / "official-test-tables.csv"
    out = io.StringIO()
    start = time.perf_counter()
    with transaction.atomic():
        call_command(
            "import_hctqa",
            "--qaps",
            str(args.data / "hctqa-real" / "qaps.json.gz"),
            "--csvs",
            str(args.data / "hctqa-real" / "csvs.tar.gz"),
            "--splits",
            str(official),
            stdout=out,
        )
    print(f"import_hctqa --splits: {time.perf_counter() - start:.1f} s")
    print("  " + next(line for line in out.getvalue().splitlines() if "affected" in line))
    rescore = Rescore.objects.get()
    start, cpu = time.perf_counter(), time.process_time()
    slices = 0
    while Rescore.objects.filter(pk=rescore.pk, status="queued").exists():
        rescore_run(rescore_id=rescore.pk)
        slices += 1
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    states = dict(Submission.objects.values_list("status").annotate(n=Count("pk")).order_by())
    one = Submission.objects.filter(status=Status.SCORED).first()
    score = one.score_for() if one else None
    print(
        f"re-scored {count:,} submissions on the official test split in {took:.1f} s "
        f"({took / count * 1000:.0f} ms each; CPU of this process {cpu:.1f} s), {slices} "
        f"slices of {settings.RESCORE_SLICE_SECONDS} s; states: {states}; goal: under 120 s"
    )
    if score:
        newer = one.score_for("2025-10")
        print(
            f"  each now: {score.n_questions} questions, recall {score.recall:.4f} (2025-05), "
            f"{newer.recall:.4f} (2025-10, {newer.excluded} left out)"
        )


if __name__ == "__main__":
    main()
