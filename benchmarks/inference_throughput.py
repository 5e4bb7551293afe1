"""Inference-run throughput: a run over 2,400 questions against a local OpenAI-compatible
server (``python -m tests.fake_openai``, a separate process) that answers after 100 ms, with
32 requests in flight. The ideal is 32 / 0.1 s = 320 requests/s; the goal is 90% of it.

Every answer is saved to the database as it arrives, as in a real run. The run is on an
endpoint an admin registered at the local server, so its requests go through every check a
real one does (the address each connection resolves to, the size and time limits). Then the
same run again, answered entirely from the response cache.

    .venv/bin/python benchmarks/inference_throughput.py [--questions 2400] [--concurrency 32]
        [--latency 0.1] [--table-format csv]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time

from _setup import REPO, setup

GOAL = 0.9
KEY_ENV = "HCTQA_BENCH_API_KEY"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _questions(n: int, per_table: int = 10) -> None:
    """``n`` verified real-table test questions, ``per_table`` to a table."""
    from dataset.models import Question, Table
    from hctqa.core import taxonomy
    from tests.factories import NESTED_CSV

    tables = [
        Table(
            id=f"psa--77--{t}",
            source="psa",
            split="test",
            canonical_csv=NESTED_CSV.replace("North", f"North {t}"),
            table_properties=taxonomy.TABLE_PROPERTIES.empty(),
        )
        for t in range((n + per_table - 1) // per_table)
    ]
    Table.objects.bulk_create(tables)
    Question.objects.bulk_create(
        [
            Question(
                id=f"{tables[i // per_table].id}--M{i}",
                table=tables[i // per_table],
                text=f"What is value number {i}?",
                gold_answer="{42}",
                origin="human",
                status="verified",
            )
            for i in range(n)
        ],
        batch_size=1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=2400)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--table-format", default="csv")
    args, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    setup(__doc__ or "")

    from endpoints.models import Endpoint
    from leaderboard.models import InferenceRun
    from leaderboard.services import InferenceRunInput, inference_run_create, inference_run_execute
    from tests.factories import UserFactory

    _questions(args.questions)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--port", str(port)]
        + ["--latency", str(args.latency), "--answer", "42"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        server.stdout.readline()  # "fake OpenAI server on …": it is listening
        os.environ[KEY_ENV] = "bench"
        user = UserFactory(username="bench-researcher", role="researcher")
        Endpoint.objects.create(
            name="bench-server",
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key_env=KEY_ENV,
            open_to_researchers=True,
        )

        def one_run(label: str) -> InferenceRun:
            run = inference_run_create(
                user=user,
                data=InferenceRunInput(
                    model_name="bench-model",
                    endpoint="bench-server",
                    modality="text",
                    table_format=args.table_format,
                    split="test",
                    data_scope="real",
                    weights="closed",
                    concurrency=args.concurrency,
                ),
                enqueue=False,
            )
            start = time.perf_counter()
            cpu = time.process_time()
            outcome = inference_run_execute(run_id=run.pk)
            took = time.perf_counter() - start
            cpu = time.process_time() - cpu
            run.refresh_from_db()
            assert outcome == "done", (outcome, run.error)
            sent = run.answered - run.cached
            rate = run.answered / took
            print(
                f"{label}: {run.answered} answers ({sent} sent, {run.cached} from the cache) "
                f"in {took:.2f} s: {rate:.1f} answers/s; {cpu * 1000 / run.answered:.2f} ms of "
                "CPU per answer in this process"
            )
            return run

        run = one_run("run")
        took_rate = run.answered / (run.finished_at - run.started_at).total_seconds()
        ideal = args.concurrency / args.latency
        ratio = took_rate / ideal
        print(
            f"throughput (claim to submission, every answer saved): {took_rate:.1f} requests/s "
            f"against the ideal {ideal:.0f} ({args.concurrency} in flight, "
            f"{args.latency * 1000:.0f} ms each): {ratio:.1%} — goal {GOAL:.0%}: "
            + ("met" if ratio >= GOAL else "NOT met")
        )
        one_run("same run again")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
