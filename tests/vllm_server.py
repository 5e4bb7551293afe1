"""A real vLLM server for the inference tests (``pytest -m vllm``) and for
``benchmarks/inference_vllm.py``: vLLM's CPU build serving a tiny model with random weights
(``--load-format dummy``) from a folder written here (``tests/vllm_model.py``), on a free
loopback port. Nothing is installed or downloaded at run time: vLLM comes from its own
virtualenv, ``.venv-vllm`` (``scripts/_lib.sh ensure_vllm_venv``, which ``.ci/run`` calls, and
``scripts/test`` with HCTQA_VLLM_TESTS=1), or the interpreter HCTQA_VLLM_PYTHON names.

    server = VllmServer(model_dir, name="tiny", max_model_len=1024, log_path=log)
    server.start()        # returns once GET /v1/models answers (a minute or two here)
    ...                   # server.base_url is http://127.0.0.1:PORT/v1
    server.stop()

The server is a process group of its own (vLLM runs its engine in a child process): ``stop``
and ``kill`` end that group, and nothing else.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv-vllm"
# Written by ensure_vllm_venv once the install is complete and imports.
INSTALLED_STAMP = VENV / ".installed-requirements-vllm.txt"
START_TIMEOUT = 420  # seconds; about 60 to 120 on a loaded 2-core machine


def vllm_python() -> Path | None:
    """The vLLM virtualenv's interpreter, or None when it is not installed."""
    given = os.environ.get("HCTQA_VLLM_PYTHON")
    if given:
        return Path(given) if Path(given).is_file() else None
    python = VENV / "bin" / "python"
    return python if python.is_file() and INSTALLED_STAMP.is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def corpus_from_prompts(prompts_gz: Path, out: Path, *, limit: int = 400) -> Path:
    """The text of the first ``limit`` real prompts of the release (``prompts.jsonl.gz``),
    for the tokenizer to learn: its tokens then split real tables as a real model's would,
    about four characters each."""
    lines = []
    with gzip.open(prompts_gz, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f):
            if number >= limit:
                break
            lines.extend(message["content"] for message in json.loads(line)["prompt"])
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


class VllmServerError(Exception):
    pass


def write_model(python: Path, folder: Path, corpus: Path, *, kind: str = "text") -> Path:
    """The tiny model folder, written by the vLLM interpreter (it has ``tokenizers``)."""
    done = subprocess.run(
        [str(python), str(REPO / "tests" / "vllm_model.py")]
        + ["--kind", kind, "--out", str(folder), "--corpus", str(corpus)],
        timeout=120,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise VllmServerError(f"The tiny model could not be written:\n{done.stderr[-3000:]}")
    return folder


class VllmServer:
    def __init__(
        self,
        model_dir: Path,
        *,
        name: str,
        max_model_len: int,
        log_path: Path,
        python: Path | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.python = python or vllm_python()
        if self.python is None:
            raise VllmServerError("The vLLM virtualenv is not installed")
        self.model_dir = model_dir
        self.name = name
        self.max_model_len = max_model_len
        self.log_path = log_path
        self.extra_args = extra_args
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.started_in = 0.0  # seconds the last start took

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            str(self.python),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model_dir),
            "--served-model-name",
            self.name,
            "--load-format",
            "dummy",
            "--dtype",
            "float32",
            "--max-model-len",
            str(self.max_model_len),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--seed",
            "0",
            *self.extra_args,
        ]

    def start(self) -> VllmServer:
        """Start it, and return once it lists its model; VllmServerError (with the end of
        its log) if it exits or does not answer within START_TIMEOUT seconds."""
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            # GiB of KV cache: plenty for a 2-layer model, and little of a shared machine.
            "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
        }
        # The platform's own settings mean nothing to vLLM.
        for name in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH", "VIRTUAL_ENV"):
            env.pop(name, None)
        started = time.monotonic()
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps writing to it
        try:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.model_dir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()
        deadline = started + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise VllmServerError(
                    f"vLLM exited with {self.process.returncode}:\n{self.log_tail()}"
                )
            if self._answers():
                self.started_in = time.monotonic() - started
                return self
            time.sleep(1)
        self.stop()
        raise VllmServerError(f"vLLM did not answer within {START_TIMEOUT} s:\n{self.log_tail()}")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as reply:
                return reply.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _signal(self, sig: int) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)

    def kill(self) -> None:
        """End it at once, as a crash would (SIGKILL to its process group)."""
        self._signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """End it cleanly (SIGTERM), or by SIGKILL after 30 s."""
        if self.process is None:
            return
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        # The engine's child process, if the server left it behind.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def chat_requests(self) -> int:
        """How many chat completion requests the server has received since it started,
        whatever their outcome (its Prometheus counter of HTTP requests)."""
        with urllib.request.urlopen(
            self.base_url.removesuffix("/v1") + "/metrics", timeout=10
        ) as reply:
            text = reply.read().decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith("http_requests_total{") and 'handler="/v1/chat/completions"' in line:
                total += float(line.rsplit(" ", 1)[1])
        return int(total)

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# vLLM's refusal of a prompt over the model's context, as it words it.
CONTEXT_REFUSAL = re.compile(r"maximum context length is (\d+) tokens")
