"""Inference-run throughput against a real vLLM server, beside vLLM's own benchmark client.

One vLLM server (its CPU build from .venv-vllm, a tiny Llama with random weights, as in
tests/leaderboard/test_inference_vllm.py, context MAX_MODEL_LEN so every real prompt fits,
prefix caching off so neither client gets the other's cache) is asked the same real
prompts by two clients in turn, round after round:

- the platform's runner: an inference run on the benchmark's real test tables, executed
  here as the worker executes it (every answer saved to the database as it arrives, the
  submission made at the end), timed from the call to its return;
- vLLM's own client, ``vllm bench serve`` (the module it runs, with the vLLM virtualenv's
  python: the ``vllm`` console script looks for a distribution named vllm and fails), on
  the very same chat messages (the run's own, built by the platform's code, one user
  message each: the run has no system role, so both send exactly one message), the same
  number of requests in flight, the same output length, temperature 0.

Both see the same server, prompts and output tokens (checked on the server's counters).
The goal: the platform gets at least 90% of the requests per second vLLM's client gets.

    .venv/bin/python benchmarks/inference_vllm.py [--concurrency 16] [--output-len 16]
        [--rounds 3] [--tables 188]

It needs .venv-vllm (HCTQA_VLLM_TESTS=1 scripts/test, or scripts/_lib.sh ensure_vllm_venv).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

from _setup import setup

GOAL = 0.9
MODEL = "tiny-llama"
MAX_MODEL_LEN = 8192  # the longest real prompt is under 5,000 tokens of the tiny tokenizer

# vLLM's `vllm bench serve`, run as the console script would run it.
BENCH = (
    "import sys\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "parser = FlexibleArgumentParser()\n"
    "add_cli_args(parser)\n"
    "main(parser.parse_args(sys.argv[1:]))\n"
)


def _arguments(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument("--output-len", type=int, default=16, help="max tokens per answer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--tables", type=int, default=188, help="of the official test split's 188 tables"
    )


def _server_counters(base_url: str) -> dict[str, float]:
    """vLLM's running totals: requests finished, prompt and generated tokens."""
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=10) as r:
        text = r.read().decode()
    wanted = {
        "vllm:request_success_total": "requests",
        "vllm:prompt_tokens_total": "prompt_tokens",
        "vllm:generation_tokens_total": "output_tokens",
    }
    totals = dict.fromkeys(wanted.values(), 0.0)
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in wanted:
            totals[wanted[name]] += float(line.rsplit(" ", 1)[1])
    return totals


def _delta(before: dict[str, float], after: dict[str, float]) -> dict[str, int]:
    return {k: int(after[k] - before[k]) for k in before}


def main() -> None:
    args = setup(__doc__ or "", _arguments)

    from django.conf import settings

    from dataset.services import release_import
    from endpoints.models import Endpoint
    from hctqa.core.release import parse_qaps, read_bytes, read_csvs_tar
    from leaderboard import selectors
    from leaderboard.models import InferenceRun, RunStatus
    from leaderboard.services import InferenceRunInput, inference_run_create, inference_run_execute
    from leaderboard.services.inference.prompts import RunPrompts
    from tests.factories import UserFactory
    from tests.vllm_server import VllmServer, corpus_from_prompts, vllm_python, write_model

    python = vllm_python()
    if python is None:
        sys.exit("The vLLM virtualenv .venv-vllm is not installed: see this script's help")
    real = args.data / "hctqa-real"
    lines = (real / "official-test-tables.csv").read_text().split()
    test_ids = sorted(line.split(",")[0] for line in lines[1:])[: args.tables]
    raw = read_csvs_tar(real / "csvs.tar.gz")
    tables = parse_qaps(read_bytes(real / "qaps.json.gz"), raw_csvs=raw)
    # Validation here: runs on it take no daily test-split slot.
    release_import(tables=[replace(t, split="validation") for t in tables if t.id in test_ids])
    settings.INFERENCE_MAX_ACTIVE_RUNS = 0

    folder = Path(tempfile.mkdtemp(prefix="hctqa-vllm-bench-"))
    corpus = corpus_from_prompts(real / "prompts.jsonl.gz", folder / "corpus.txt")
    model = write_model(python, folder / MODEL, corpus)
    server = VllmServer(
        model,
        name=MODEL,
        max_model_len=MAX_MODEL_LEN,
        log_path=folder / "vllm.log",
        python=python,
        extra_args=("--no-enable-prefix-caching",),
    )
    user = UserFactory(username="bench-researcher", role="researcher")
    print(f"starting vLLM ({MODEL}, context {MAX_MODEL_LEN:,})…", flush=True)
    with server:
        print(f"vLLM answered after {server.started_in:.0f} s", flush=True)
        Endpoint.objects.create(
            name="bench-vllm", base_url=server.base_url, open_to_researchers=True
        )

        def new_run() -> InferenceRun:
            return inference_run_create(
                user=user,
                data=InferenceRunInput(
                    model_name=MODEL,
                    endpoint="bench-vllm",
                    modality="text",
                    table_format="paper",
                    split="validation",
                    data_scope="real",
                    weights="open",
                    parameters_billions=1,
                    system_role=False,
                    temperature=0.0,
                    max_tokens=args.output_len,
                    concurrency=args.concurrency,
                    use_cache=False,
                ),
                enqueue=False,
            )

        # The run's own messages, built by the platform's code, for vLLM's client.
        first = new_run()
        prompts = RunPrompts(first)
        # The questions the run asks, in the order it asks them.
        questions = list(
            selectors.benchmark_questions(split="validation", data_scope="real")
            .order_by("table_id", "id")
            .values_list("text", "table_id")
        )
        dataset = folder / "prompts.jsonl"
        with dataset.open("w", encoding="utf-8") as out:
            for text, table_id in questions:
                prompts.load({table_id})
                (message,) = prompts.messages(text, table_id)  # one user message
                out.write(json.dumps({"prompt": message["content"]}) + "\n")
        n = first.total
        assert n == len(questions), (n, len(questions))
        print(
            f"{n} real questions on {len(test_ids)} tables; {args.concurrency} in flight, "
            f"at most {args.output_len} output tokens, temperature 0\n",
            flush=True,
        )

        def platform(run: InferenceRun) -> tuple[float, dict[str, int]]:
            before = _server_counters(server.base_url)
            started = time.perf_counter()
            outcome = inference_run_execute(run_id=run.pk)
            took = time.perf_counter() - started
            run.refresh_from_db()
            assert outcome == RunStatus.DONE and run.answered == n, (outcome, run.error)
            return n / took, _delta(before, _server_counters(server.base_url))

        def vllm_client(round_: int) -> tuple[float, dict[str, int]]:
            before = _server_counters(server.base_url)
            result = folder / f"bench-{round_}.json"
            log = folder / f"bench-{round_}.log"
            command = (
                [str(python), "-c", BENCH]
                + ["--backend", "openai-chat", "--base-url", server.base_url.removesuffix("/v1")]
                + ["--endpoint", "/v1/chat/completions", "--model", MODEL]
                + ["--tokenizer", str(model), "--dataset-name", "custom"]
                + ["--dataset-path", str(dataset), "--disable-shuffle", "--skip-chat-template"]
                + ["--custom-output-len", str(args.output_len), "--num-prompts", str(n)]
                + ["--max-concurrency", str(args.concurrency), "--request-rate", "inf"]
                + ["--temperature", "0", "--disable-tqdm", "--save-result"]
                + ["--result-dir", str(folder), "--result-filename", result.name]
            )
            with log.open("wb") as output:
                done = subprocess.run(
                    command,
                    cwd=folder,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
                    timeout=1800,
                )
            if done.returncode:
                sys.exit(f"vllm bench serve failed:\n{log.read_text(errors='replace')[-3000:]}")
            body = json.loads(result.read_text())
            assert body["completed"] == n, body["completed"]
            return body["request_throughput"], _delta(before, _server_counters(server.base_url))

        ratios = []
        for round_ in range(1, args.rounds + 1):
            ours, our_counts = platform(first if round_ == 1 else new_run())
            theirs, their_counts = vllm_client(round_)
            ratio = ours / theirs
            ratios.append(ratio)
            print(
                f"round {round_}: platform {ours:.1f} requests/s "
                f"({our_counts['requests']} requests, {our_counts['prompt_tokens']:,} prompt and "
                f"{our_counts['output_tokens']:,} output tokens); vllm bench serve {theirs:.1f} "
                f"requests/s ({their_counts['requests']} requests, "
                f"{their_counts['prompt_tokens']:,} prompt and "
                f"{their_counts['output_tokens']:,} output tokens): {ratio:.1%}",
                flush=True,
            )
        mean = sum(ratios) / len(ratios)
        print(
            f"\nthe platform's runner gets {mean:.1%} of the requests/s of vLLM's own client "
            f"(mean of {len(ratios)} rounds) — goal {GOAL:.0%}: "
            + ("met" if mean >= GOAL else "NOT met")
        )


if __name__ == "__main__":
    main()
