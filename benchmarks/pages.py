"""Server time and query count of the dataset list and table pages with the whole release
loaded. Goals: at most 10 queries whatever the data size, under 100 ms server time.

Server time is measured in-process through Django's test client (request in, response out,
no network), 30 requests per page after a warm-up; the figures are median and p95.

    .venv/bin/python benchmarks/pages.py [--data ../shared/data]
"""

from __future__ import annotations

import statistics
import time

from _setup import import_release, setup

REPEAT = 30


def main() -> None:
    args = setup(__doc__ or "")
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections, connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from dataset.models import Table
    from tests.factories import UserFactory

    import_release(args.data)
    biggest = max(Table.objects.only("id", "canonical_csv"), key=lambda t: len(t.canonical_csv))
    test_table = Table.objects.filter(split="test").order_by("id").first()
    pages = [
        ("dataset, first page", "/dataset/"),
        ("dataset, page 20", "/dataset/?page=20"),
        (
            "dataset, source + property + human",
            "/dataset/?source=psa&table_property=row_group_label&has_human_question=yes",
        ),
        ("dataset, text search", "/dataset/?q=Total"),
        ("dataset, htmx fragment", "/dataset/?split=test"),
        ("table page, pak--1--726", "/tables/pak--1--726/"),
        (f"table page, largest ({biggest.id})", f"/tables/{biggest.id}/"),
        (f"table page, test split ({test_table.id})", f"/tables/{test_table.id}/"),
        ("api table list", "/api/tables/?source=census"),
    ]
    # Keep one connection across requests, as the test runner does, so queries can be counted.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    anonymous = Client(HTTP_HOST="localhost")
    annotator = Client(HTTP_HOST="localhost")
    annotator.force_login(UserFactory(username="bench-annotator", role="annotator"))
    print(f"{'page':55} {'client':10} {'queries':>7} {'median':>9} {'p95':>9}")
    for label, url in pages:
        for who, client in (("anonymous", anonymous), ("annotator", annotator)):
            headers = {"HX-Request": "true"} if "htmx" in label else {}
            client.get(url, headers=headers)  # warm-up
            with CaptureQueriesContext(connection) as ctx:
                assert client.get(url, headers=headers).status_code == 200, url
            queries = len(ctx.captured_queries)  # read now: the capture is computed lazily
            times = []
            for _ in range(REPEAT):
                start = time.perf_counter()
                client.get(url, headers=headers)
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(
                f"{label:55} {who:10} {queries:7d} {statistics.median(times):7.1f}ms {p95:7.1f}ms"
            )


if __name__ == "__main__":
    main()
