"""scripts/run's supervision (issue 10, item 9): a killed worker is started again while the
rest keeps running, and stopping the supervisor stops what it runs. The real processes are
exercised by .ci/run's smoke test, which kills the scoring worker of a running platform."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import REPO


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too: it is only waiting for its parent.
    return "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]


def test_a_killed_process_is_started_again_and_a_stopped_supervisor_stops_it(
    tmp_path: Path,
) -> None:
    supervisor = subprocess.Popen(
        [
            "bash",
            "-c",
            f'set -euo pipefail; . "{REPO}/scripts/_lib.sh"; supervise worker sleep 600',
        ],
        cwd=tmp_path,
    )
    pid_file = tmp_path / "var" / "run" / "worker.pid"
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text().strip())
        first = int(pid_file.read_text())
        os.kill(first, signal.SIGKILL)  # what the OOM killer or a crash does
        wait_for(lambda: int(pid_file.read_text()) != first)
        second = int(pid_file.read_text())
        assert alive(second) and not alive(first)
        assert (
            f"worker (pid {first}) exited; starting it again in 1 s"
            in (tmp_path / "var" / "log" / "worker.log").read_text()
        )

        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=10) == 0
        wait_for(lambda: not alive(second))
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
