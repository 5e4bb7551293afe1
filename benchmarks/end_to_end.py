"""Upload → scored → on the board, with a real Celery worker process running.

Imports the release into a throwaway database (or a fresh hctqa_bench database on the
PostgreSQL server in DATABASE_URL), starts a worker, uploads each 9,835-answer sample through
the API and times until the board lists it. Goal: under 10 s.

    .venv/bin/python benchmarks/end_to_end.py [--data ../shared/data]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from _setup import REPO, import_release, setup

SAMPLES = [
    ("gemma-2-9b-it--text--real.jsonl.gz", "bench-gemma", "text", "paper", "9"),
    ("InternVL2-4B--vision--real.jsonl.gz", "bench-internvl", "vision", "image", "4"),
]


def main() -> None:
    args = setup(__doc__ or "")
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from hctqa.celery import app
    from leaderboard.models import Status, Submission
    from tests.factories import UserFactory

    import_release(args.data)
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "hctqa.celery",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "WARNING",
            "--hostname",
            "bench@%h",
            # Uploads are scored on the scoring queue (CELERY_TASK_ROUTES).
            "--queues",
            "scoring,default",
        ],
        cwd=REPO,
        env=os.environ.copy(),
    )
    try:
        deadline = time.monotonic() + 60
        while not (app.control.ping(timeout=0.5) or []):
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("the worker did not start")
        user = UserFactory(username="bench-researcher", role="researcher")
        client = Client(
            HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}"
        )
        for filename, model, modality, fmt, params in SAMPLES:
            start = time.perf_counter()
            with open(args.data / "sample-submissions" / filename, "rb") as predictions:
                response = client.post(
                    "/api/submissions/create/",
                    {
                        "model_name": model,
                        "parameters_billions": params,
                        "weights": "open",
                        "modality": modality,
                        "table_format": fmt,
                        "split": "all",
                        "data_scope": "real",
                        "predictions": predictions,
                    },
                )
            uploaded = time.perf_counter() - start
            assert response.status_code == 201, response.content
            pk = response.json()["id"]
            while Submission.objects.get(pk=pk).status not in (Status.SCORED, Status.FAILED):
                time.sleep(0.05)
            board_url = "/leaderboard/" if modality == "text" else "/leaderboard/vision/"
            listed = model in client.get(board_url).content.decode()
            total = time.perf_counter() - start
            s = Submission.objects.get(pk=pk)
            waited = (s.started_at - s.queued_at).total_seconds()
            scoring = (s.scored_at - s.started_at).total_seconds()
            print(
                f"{modality:6} upload {uploaded:.2f} s · queue {waited:.2f} s · worker scoring "
                f"{scoring:.2f} s · on the board: {listed} · total {total:.2f} s "
                f"(recall {s.score_for().recall:.3f})"
            )
    finally:
        worker.terminate()
        worker.wait(timeout=30)


if __name__ == "__main__":
    main()
