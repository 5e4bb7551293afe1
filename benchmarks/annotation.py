"""Server time of the annotation tools with the whole release loaded: the next table, an
autosaved draft, a save and writing a question (the page asks for the next table separately,
as soon as it opens). Goals: save under 50 ms, next item under 30 ms.

    .venv/bin/python benchmarks/annotation.py [--data ../shared/data]
"""

from __future__ import annotations

import statistics
import time
import uuid

from _setup import import_release, setup

ROUNDS = 40


def measure(label: str, call, after=None) -> None:
    """Time ``call``; ``after`` (untimed) moves on to the next table between calls."""
    call()  # warm-up
    if after:
        after()
    times = []
    for i in range(ROUNDS):
        start = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - start) * 1000)
        if after:
            after()
    times.sort()
    p95 = times[int(ROUNDS * 0.95) - 1]
    print(f"{label:45} median {statistics.median(times):6.1f} ms   p95 {p95:6.1f} ms")


def main() -> None:
    args = setup(__doc__ or "")
    from django.test import Client

    from annotation import services
    from dataset.models import Table
    from tests.factories import UserFactory

    import_release(args.data)
    # Others have been at work: 600 saved annotations spread over the tables.
    nested = {
        "multi_level_column": True,
        "balanced_multi_level_column": True,
        "symmetric_multi_level_column": True,
    }
    tables = list(Table.objects.order_by("id")[:300])
    for n in range(2):
        other = UserFactory(username=f"other-{n}", role="annotator")
        for table in tables:
            services.property_annotation_save(
                annotator=other, table=table, properties=nested, base_version=0
            )
    user = UserFactory(username="bench", role="annotator")
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    json = "application/json"

    measure(
        "next table (GET /api/annotate/properties/next/)",
        lambda i=0: client.get("/api/annotate/properties/next/"),
    )
    current = {"table": client.get("/api/annotate/properties/next/").json()["table"]}

    def draft(i: int = 0) -> None:
        body = {"properties": nested, "base_version": 0, "client_ms": 1000 + i, "elapsed_ms": 500}
        url = f"/api/annotate/properties/{current['table']}/draft/"
        assert client.put(url, body, content_type=json).status_code == 200

    def save(i: int = 0) -> None:
        url = f"/api/annotate/properties/{current['table']}/save/"
        response = client.post(url, {"properties": nested, "base_version": 0}, content_type=json)
        assert response.status_code == 200, response.content

    def next_table() -> None:
        url = f"/api/annotate/properties/next/?after={current['table']}"
        current["table"] = client.get(url).json()["table"]

    measure("draft (PUT …/draft/)", draft)
    measure("save (POST …/save/)", save, after=next_table)
    measure(
        "next question table (GET /api/annotate/questions/next/)",
        lambda i=0: client.get("/api/annotate/questions/next/"),
    )
    question_table = {"table": client.get("/api/annotate/questions/next/").json()["table"]}

    def write(i: int = 0) -> None:
        body = {
            "client_key": str(uuid.uuid4()),
            "text": "What is the total?",
            "gold_answer": "{12}",
            "query_properties": {"returned_columns": True, "returned_columns_plain": True},
        }
        url = f"/api/annotate/questions/{question_table['table']}/save/"
        response = client.post(url, body, content_type=json)
        assert response.status_code == 201, response.content

    def next_question_table() -> None:
        url = f"/api/annotate/questions/next/?after={question_table['table']}"
        question_table["table"] = client.get(url).json()["table"]

    measure("write a question (POST …/save/)", write, after=next_question_table)


if __name__ == "__main__":
    main()
