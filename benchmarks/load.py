"""Load on the production-style web server: gunicorn as scripts/run starts it
(gunicorn.conf.py), on a database holding what scripts/run loads (the demo, the real HCT-QA
release with its official test split, the synthetic families and the paper's rows), driven
by many clients at once on 127.0.0.1 only. Each page in turn gets every client for the
whole time: the board, a dataset search, table pages, a model page, then uploads through
the API. For each: requests per second, p50, p95 and errors (any answer but the expected
status, or no answer). Goals (PostgreSQL, 20 clients): the board at 300 req/s or more with
p95 under 100 ms, search p95 under 300 ms, a table page p95 under 150 ms, no errors.

    .venv/bin/python benchmarks/load.py [--database sqlite|postgres|both] [--clients 20]
        [--seconds 60] [--pages board,search,table,model,upload]
        [--server gthread:2x4 --server sync:2 ...]

PostgreSQL: DATABASE_URL names a server where the benchmark may create its own database
(hctqa_bench, dropped and made again; the database in the URL is left alone).

The server runs with the settings of your environment, plus, for this run only, no upload
or per-user API limits (API_THROTTLE_UPLOADS and API_THROTTLE_USER empty) and no cap on
stored submissions (SUBMISSION_MAX_STORED=0): the uploads then measure the work an upload
costs, not 429 answers. PAGE_CACHE_SECONDS=0 in the environment measures without the page
cache. The clients are one asyncio process (httpx2); their own ceiling, against a server
that answers at once, is measured first and printed, so that a figure near it says the
client was the limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import runpy
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from _setup import DEFAULT_DATA, REPO

HOST = "127.0.0.1"
PYTHON = str(REPO / ".venv" / "bin" / "python")
GUNICORN = str(REPO / ".venv" / "bin" / "gunicorn")
PAGES = ("board", "search", "table", "model", "upload")
# Distinct table pages the clients go round (a paper's readers do not all open one table).
TABLE_PAGES = 20
# Lines in the uploaded predictions file: a researcher's validation run, gemma-2-9b's
# real answers.
UPLOAD_LINES = 200
GOALS = "board >= 300 req/s and p95 < 100 ms; search p95 < 300 ms; table p95 < 150 ms; 0 errors"
# For this run only (see the docstring).
BENCHMARK_SETTINGS = {
    "API_THROTTLE_UPLOADS": "",
    "API_THROTTLE_USER": "",
    "SUBMISSION_MAX_STORED": "0",
}
POSTGRES_HELP = """\
PostgreSQL needs DATABASE_URL, a server where this user may create databases, e.g. a
cluster of your own on a free port (Debian; removed afterwards with pg_dropcluster):
  apt-get install postgresql
  pg_createcluster 15 load --port 5439 --start
  su postgres -c "psql -p 5439 -c \\"CREATE ROLE bench LOGIN CREATEDB PASSWORD 'bench'\\""
  DATABASE_URL=postgres://bench:bench@127.0.0.1:5439/postgres .venv/bin/python benchmarks/load.py
  pg_dropcluster 15 load --stop"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


# --- The clients ----------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    label: str
    urls: list[str]
    method: str = "GET"
    expect: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    form: dict[str, str] = field(default_factory=dict)
    upload: bytes = b""


@dataclass
class Result:
    target: Target
    seconds: float
    latencies: list[float]
    errors: int
    first_error: str = ""

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    def percentile(self, p: int) -> float:
        if len(self.latencies) < 2:
            return self.latencies[0] * 1000 if self.latencies else float("nan")
        return statistics.quantiles(self.latencies, n=100)[p - 1] * 1000


async def _drive(base: str, target: Target, clients: int, seconds: float) -> Result:
    """``clients`` clients, each sending its next request as soon as the last is answered,
    for ``seconds``; the requests under way then are finished and counted."""
    import httpx2

    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
    latencies: list[float] = []
    errors = 0
    first_error = ""
    async with httpx2.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        started = time.perf_counter()
        deadline = started + seconds

        async def one(number: int) -> None:
            nonlocal errors, first_error
            turn = number
            while time.perf_counter() < deadline:
                url = target.urls[turn % len(target.urls)]
                turn += clients
                client.cookies.clear()  # every request from a visitor with no cookie
                sent = time.perf_counter()
                try:
                    if target.method == "POST":
                        files = {"predictions": ("predictions.jsonl", target.upload)}
                        response = await client.post(
                            url, headers=target.headers, data=target.form, files=files
                        )
                    else:
                        response = await client.get(url, headers=target.headers)
                    failed = response.status_code != target.expect
                    if failed:
                        why = f"{response.status_code} {response.text[:200]!r}"
                except httpx2.HTTPError as exc:
                    failed, why = True, f"{type(exc).__name__}: {exc}"
                latencies.append(time.perf_counter() - sent)
                if failed:
                    errors += 1
                    first_error = first_error or f"{url}: {why}"

        await asyncio.gather(*(one(i) for i in range(clients)))
        elapsed = time.perf_counter() - started
    return Result(target, elapsed, latencies, errors, first_error)


def drive(base: str, target: Target, clients: int, seconds: float) -> Result:
    return asyncio.run(_drive(base, target, clients, seconds))


TRIVIAL_SERVER = """
import asyncio, sys
REPLY = b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nContent-Type: text/plain\\r\\n"
async def answer(reader, writer):
    close = sys.argv[2] == "close"
    try:
        while await reader.readuntil(b"\\r\\n\\r\\n"):
            writer.write(REPLY + (b"Connection: close\\r\\n\\r\\nok" if close else b"\\r\\nok"))
            await writer.drain()
            if close:
                break
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    writer.close()
async def main():
    server = await asyncio.start_server(answer, "127.0.0.1", int(sys.argv[1]), backlog=1024)
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


def client_ceiling(clients: int, seconds: float) -> dict[str, float]:
    """The clients' own cost: the CPU time this process spends per request against a server
    that answers at once, with connections kept alive (gthread) and with a connection per
    request (sync workers close each). 1000 / that is the rate one free core would carry;
    the rate reached is printed too, but on a busy machine it is the machine's."""
    ceiling = {}
    for mode in ("keep-alive", "close"):
        port = _free_port()
        server = subprocess.Popen([PYTHON, "-c", TRIVIAL_SERVER, str(port), mode])
        try:
            _wait_until_up(f"http://{HOST}:{port}/", timeout=15)
            target = Target("trivial", "trivial server", ["/"])
            cpu = time.process_time()
            result = drive(f"http://{HOST}:{port}", target, clients, seconds)
            cpu = time.process_time() - cpu
        finally:
            server.terminate()
            server.wait()
        ceiling[mode] = 1000 * cpu / max(1, len(result.latencies))
        ceiling[f"{mode} rate"] = result.rate
    return ceiling


def _wait_until_up(url: str, timeout: float) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{url} did not answer within {timeout:.0f} s")
        time.sleep(0.3)


# --- The server -----------------------------------------------------------------------------


def _environment(database: str, var: Path, data: Path) -> dict[str, str]:
    env = {**os.environ, **BENCHMARK_SETTINGS}
    env.update(
        DJANGO_SETTINGS_MODULE="hctqa.settings",
        HCTQA_VAR_DIR=str(var),
        STATIC_ROOT=str(var / "static"),
        HCTQA_DATA_DIR=str(data),
        DEBUG="false",
    )
    if database == "sqlite":
        env.pop("DATABASE_URL", None)
    else:
        from _setup import _scratch_postgres

        env["DATABASE_URL"] = _scratch_postgres(os.environ["DATABASE_URL"])
    return env


def prepare(env: dict[str, str], var: Path) -> dict:
    """What scripts/run loads (scripts/_lib.sh's prepare_platform), then the benchmark's own
    researcher and the pages to ask for."""
    log = var / "prepare.log"
    with open(log, "w") as out:
        done = subprocess.run(
            [
                "bash",
                "-c",
                'set -euo pipefail; . scripts/_lib.sh; prepare_platform "$1"',
                "-",
                str(var / "demo.log"),
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    if done.returncode:
        raise SystemExit(f"Loading the data failed; see {log}:\n{log.read_text()[-3000:]}")
    found = subprocess.run(
        [PYTHON, str(Path(__file__).resolve()), "--fixtures"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    if found.returncode:
        raise SystemExit(f"Setting up the benchmark's researcher failed:\n{found.stderr}")
    return json.loads(found.stdout)


def fixtures(data: Path) -> None:
    """Run inside the benchmark's database (a child process): a researcher with an API
    token, the table pages, a model page and the predictions file to upload; as JSON."""
    import gzip
    import random

    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from rest_framework.authtoken.models import Token

    from dataset.models import Question, Table
    from leaderboard.models import Status, Submission, Visibility
    from tests.factories import UserFactory

    researcher = UserFactory(username="load-researcher", role="researcher")
    token, _ = Token.objects.get_or_create(user=researcher)
    real = list(
        Table.objects.filter(source__in=["psa", "pak", "census", "arxiv"])
        .order_by("id")
        .values_list("id", flat=True)
    )
    tables = random.Random(23).sample(real, min(TABLE_PAGES, len(real)))
    model = (
        Submission.objects.filter(
            status=Status.SCORED, visibility=Visibility.PUBLIC, kind="submission"
        )
        .order_by("pk")
        .first()
    )
    validation = set(
        Question.objects.filter(table__split="validation").values_list("id", flat=True)
    )
    sample = data / "sample-submissions" / "gemma-2-9b-it--text--real.jsonl.gz"
    lines = []
    with gzip.open(sample, "rt") as answers:
        for line in answers:
            record = json.loads(line)
            if record["qap_id"] in validation:
                lines.append(json.dumps({"id": record["qap_id"], "response": record["response"]}))
            if len(lines) == UPLOAD_LINES:
                break
    print(
        json.dumps(
            {
                "token": token.key,
                "tables": tables,
                "model": model.pk if model else None,
                "upload": "\n".join(lines),
                "counts": {
                    "tables": Table.objects.count(),
                    "questions": Question.objects.count(),
                    "submissions": Submission.objects.count(),
                },
            }
        )
    )


@contextmanager
def server(env: dict[str, str], var: Path, options: list[str]) -> Iterator[str]:
    port = _free_port()
    command = [GUNICORN, "--config", "gunicorn.conf.py", "--bind", f"{HOST}:{port}", *options]
    log = open(var / "web.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://{HOST}:{port}"
    try:
        _wait_until_up(base + "/", timeout=120)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def targets(found: dict, wanted: list[str]) -> list[Target]:
    every = {
        "board": Target("board", "/leaderboard/", ["/leaderboard/"]),
        "search": Target("search", "/dataset/?q=total", ["/dataset/?q=total"]),
        "table": Target(
            "table",
            f"/tables/<id>/ ({len(found['tables'])} tables)",
            [f"/tables/{t}/" for t in found["tables"]],
        ),
        "model": Target(
            "model",
            f"/leaderboard/submissions/{found['model']}/",
            [f"/leaderboard/submissions/{found['model']}/"],
        ),
        "upload": Target(
            "upload",
            f"POST /api/submissions/create/ ({found['upload'].count(chr(10)) + 1} answers)",
            ["/api/submissions/create/"],
            method="POST",
            expect=201,
            headers={"Authorization": f"Token {found['token']}"},
            form={
                "model_name": "gemma-2-9b-it (load test)",
                "weights": "open",
                "parameters_billions": "9",
                "modality": "text",
                "table_format": "paper",
                "split": "validation",
                "visibility": "private",
            },
            upload=found["upload"].encode(),
        ),
    }
    return [every[name] for name in wanted]


# --- The report -----------------------------------------------------------------------------


def _row(result: Result) -> str:
    return (
        f"  {result.target.name:7} {result.target.label:52} {len(result.latencies):8,d} "
        f"{result.rate:8.1f} {result.percentile(50):8.0f} {result.percentile(95):8.0f} "
        f"{result.errors:7,d}"
    )


def _summary(results: dict[str, Result]) -> str:
    parts = []
    for name, r in results.items():
        if name == "board":
            parts.append(f"board {r.rate:.0f} req/s p95 {r.percentile(95):.0f} ms")
        else:
            parts.append(f"{name} p95 {r.percentile(95):.0f} ms")
    errors = sum(r.errors for r in results.values())
    return "; ".join(parts) + f"; errors {errors}"


def _goals_met(results: dict[str, Result]) -> str:
    checks = []
    if "board" in results:
        board = results["board"]
        checks.append(board.rate >= 300 and board.percentile(95) < 100)
    if "search" in results:
        checks.append(results["search"].percentile(95) < 300)
    if "table" in results:
        checks.append(results["table"].percentile(95) < 150)
    checks.append(sum(r.errors for r in results.values()) == 0)
    return "met" if all(checks) else "not met"


def measure(database: str, args: argparse.Namespace) -> list[str]:
    """Every page under each server set-up, on one database loaded once; the summaries."""
    var = Path(tempfile.mkdtemp(prefix=f"hctqa-load-{database}-"))
    summaries = []
    try:
        env = _environment(database, var, args.data)
        started = time.monotonic()
        found = prepare(env, var)
        counts = found["counts"]
        print(
            f"\n{database}: {counts['tables']:,} tables, {counts['questions']:,} questions, "
            f"{counts['submissions']:,} submissions (loaded in {time.monotonic() - started:.0f} s)"
        )
        chosen = targets(found, args.pages)
        for setup in args.server:
            results = {}
            print(f"  gunicorn {_described(setup)}")
            with server(env, var, _options(setup)) as base:
                print(
                    f"  {'page':7} {'':52} {'requests':>8} {'req/s':>8} {'p50 ms':>8} "
                    f"{'p95 ms':>8} {'errors':>7}"
                )
                for target in chosen:
                    if target.method == "GET":  # warm: the server's processes, the kept pages
                        drive(base, target, args.clients, args.warmup)
                    result = drive(base, target, args.clients, args.seconds)
                    results[target.name] = result
                    print(_row(result), flush=True)
                    if result.first_error:
                        print(f"          first error: {result.first_error}")
            summaries.append(
                f"{database}, gunicorn {_described(setup)}: {_summary(results)} "
                f"(goals {_goals_met(results)})"
            )
        return summaries
    finally:
        if args.keep:
            print(f"  kept: {var}")
        else:
            shutil.rmtree(var, ignore_errors=True)


def _server_setup(text: str) -> tuple[str, int, int]:
    """CLASS:WORKERS or CLASS:WORKERSxTHREADS (sync:2, gthread:2x4), or "config"."""
    if text == "config":
        values = runpy.run_path(str(REPO / "gunicorn.conf.py"))
        return values["worker_class"], values["workers"], values["threads"]
    try:
        worker, counts = text.split(":")
        workers, _, threads = counts.partition("x")
        return worker, int(workers), int(threads or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give CLASS:WORKERS or CLASS:WORKERSxTHREADS (sync:2, gthread:2x4)"
        ) from None


def _options(setup: tuple[str, int, int]) -> list[str]:
    worker, workers, threads = setup
    # Given even when 1: gunicorn makes a sync worker with threads a gthread one.
    return ["--worker-class", worker, "--workers", str(workers), "--threads", str(threads)]


def _described(setup: tuple[str, int, int]) -> str:
    worker, workers, threads = setup
    return f"{worker} {workers} workers × {threads} threads"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60, help="per page")
    parser.add_argument("--warmup", type=float, default=3, help="seconds per page, not counted")
    parser.add_argument("--pages", default=",".join(PAGES), help=f"of {', '.join(PAGES)}")
    parser.add_argument(
        "--server",
        type=_server_setup,
        action="append",
        help="worker class and counts, CLASS:WORKERS[xTHREADS] (sync:2, gthread:2x4); "
        "several to compare them on the same data; default gunicorn.conf.py's",
    )
    parser.add_argument("--keep", action="store_true", help="keep the server's folder")
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", DEFAULT_DATA)),
        help="the release's data folder (holding hctqa-real/)",
    )
    parser.add_argument("--fixtures", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each row as it is measured, into a file too
    if args.fixtures:
        fixtures(args.data)
        return
    args.server = args.server or [_server_setup("config")]
    args.pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    if unknown := set(args.pages) - set(PAGES):
        parser.error(f"unknown pages {', '.join(sorted(unknown))}; choose from {', '.join(PAGES)}")
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    if "postgres" in databases and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        print(POSTGRES_HELP, file=sys.stderr)
        if args.database == "postgres":
            raise SystemExit(2)
        databases = ["sqlite"]
        print("Measuring SQLite only.\n", file=sys.stderr)

    cache = os.environ.get("PAGE_CACHE_SECONDS", "default")
    print(
        f"Load on 127.0.0.1: {args.clients} clients, {args.seconds:.0f} s per page "
        f"({args.warmup:.0f} s warm-up before each); PAGE_CACHE_SECONDS {cache}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start"
    )
    print(
        "For this run: "
        + ", ".join(f"{k}={v!r}" for k, v in BENCHMARK_SETTINGS.items())
        + " (uploads measure their work, not 429s)"
    )
    ceiling = client_ceiling(args.clients, min(args.seconds, 5))
    print(
        "Client (one asyncio process, httpx2) against a server that answers at once: "
        f"{ceiling['keep-alive']:.2f} ms of CPU per request with connections kept alive "
        f"(one free core: {1000 / ceiling['keep-alive']:,.0f} req/s; reached here "
        f"{ceiling['keep-alive rate']:,.0f}), {ceiling['close']:.2f} ms with a connection "
        f"per request (one free core: {1000 / ceiling['close']:,.0f} req/s; reached "
        f"{ceiling['close rate']:,.0f})"
    )
    summaries = []
    for database in databases:
        summaries += measure(database, args)
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}. Goals: {GOALS}.")
    for line in summaries:
        print(f"Summary, {args.clients} clients, {line}")


if __name__ == "__main__":
    main()
