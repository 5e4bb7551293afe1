"""Server time and query count of the leaderboard with 1,000 public scored submissions (half
on all questions, half on the test split; text ones scored under both rules versions), 50
stale ones being scored again (listed apart) and the paper's rows. Goal: under 150 ms and
a constant number of queries (two: the ranked page with its count, the stale list).

    .venv/bin/python benchmarks/leaderboard_page.py
"""

from __future__ import annotations

import random
import statistics
import time

from _setup import setup

REPEAT = 30


def main() -> None:
    setup(__doc__ or "")
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections, connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from leaderboard.models import Score, Submission
    from tests.factories import UserFactory

    rng = random.Random(7)
    owners = [UserFactory(username=f"bench-owner-{i}", role="researcher") for i in range(20)]
    rows = []
    for i in range(1050):
        rows.append(
            Submission(
                owner=owners[i % 20],
                model_name=f"model-{i:04d}",
                organisation=f"lab-{i % 37}",
                parameters_billions=rng.choice([1.5, 7, 8, 13, 34, 70, 72, 405]),
                weights=rng.choice(["open", "closed"]),
                modality=rng.choice(["text", "text", "vision"]),
                table_format=rng.choice(["paper", "csv", "html", "markdown"]),
                split=rng.choice(["all", "test"]),
                data_scope="real",
                status="scored" if i < 1000 else "queued",
                stale=i >= 1000,
                progress=100,
            )
        )
    submissions = Submission.objects.bulk_create(rows)
    scores = []
    for s in submissions:
        for rules in ("2025-05", "2025-10") if s.modality == "text" else ("2025-05",):
            recall = rng.random()
            scores.append(
                Score(
                    submission=s,
                    rules=rules,
                    n_questions=950,
                    coverage=1.0,
                    precision=rng.random(),
                    recall=recall,
                    recall_low=max(0, recall - 0.03),
                    recall_high=min(1, recall + 0.03),
                    f1=rng.random(),
                    cc=recall * 0.8,
                    recall_psa=rng.random(),
                    recall_pak=rng.random(),
                    recall_census=rng.random(),
                    recall_arxiv=rng.random(),
                )
            )
    Score.objects.bulk_create(scores)
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    client = Client(HTTP_HOST="localhost")
    pages = [
        ("text board, first page", "/leaderboard/"),
        ("text board, page 3", "/leaderboard/?page=3"),
        ("text board, sorted by census recall", "/leaderboard/?sort=census"),
        ("text board, filtered + searched", "/leaderboard/?size_class=small&weights=open&q=lab-1"),
        ("text board, htmx sort", "/leaderboard/?sort=-precision"),
        ("text board, test split, 2025-10", "/leaderboard/?split=test&rules=2025-10"),
        ("vision board", "/leaderboard/vision/"),
        ("export, json (all rows)", "/leaderboard/text/export.json"),
        ("API, test split, 2025-10", "/api/leaderboard/?split=test&rules=2025-10"),
    ]
    print(f"{Submission.objects.count():,} submissions")
    print(f"{'page':40} {'queries':>7} {'median':>9} {'p95':>9}")
    for label, url in pages:
        headers = {"HX-Request": "true"} if "htmx" in label else {}
        client.get(url, headers=headers)
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url, headers=headers).status_code == 200
        queries = len(ctx.captured_queries)
        times = []
        for _ in range(REPEAT):
            start = time.perf_counter()
            client.get(url, headers=headers)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p95 = times[int(REPEAT * 0.95) - 1]
        print(f"{label:40} {queries:7d} {statistics.median(times):7.1f}ms {p95:7.1f}ms")


if __name__ == "__main__":
    main()
