"""scripts/run's helpers (scripts/_lib.sh): the synthetic generator's parameter folder found in
the data folder, the banner's demo logins, and a clean stop that says nothing went wrong."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tests.conftest import REPO
from tests.scripts.test_supervise import wait_for


def lib(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f'set -euo pipefail; . "{REPO}/scripts/_lib.sh"; {script}'],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_parameter_files_are_found_in_the_data_folder(tmp_path: Path, data_dir: Path) -> None:
    found = lib(f'synthetic_params_dir "{data_dir}"', tmp_path)
    assert found.returncode == 0
    assert found.stdout.strip() == str(data_dir / "hctqa-synthetic")
    # A folder holding the files itself is that folder; one without them is none.
    assert lib(f'synthetic_params_dir "{data_dir}/hctqa-synthetic"', tmp_path).stdout.strip() == (
        str(data_dir / "hctqa-synthetic")
    )
    assert lib(f'synthetic_params_dir "{tmp_path}"', tmp_path).returncode != 0


def test_the_banner_lists_the_logins_and_no_split_counts(tmp_path: Path) -> None:
    (tmp_path / "demo.log").write_text(
        "Tables: 6 created, 0 updated, 0 unchanged.\n"
        "Imported tables by split: train 6 tables / 36 questions\n"
        "Import complete.\n"
        "Demo logins (username / password, role):\n"
        "  annotator / annotator-demo-pass  (annotator)\n"
        "  admin / admin-demo-pass  (admin)\n"
    )
    shown = lib("demo_logins demo.log", tmp_path).stdout
    assert shown == (
        "Demo logins (username / password, role):\n"
        "  annotator / annotator-demo-pass  (annotator)\n"
        "  admin / admin-demo-pass  (admin)\n"
    )


def _as_from_a_terminal() -> None:
    """Ctrl-C reaches the shell as it does from a terminal. A shell started with SIGINT
    ignored or blocked cannot trap it; a suite started in the background (``scripts/test &``:
    bash ignores SIGINT in its background jobs) passed that on, and the test hung."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def run_until_stopped(tmp_path: Path) -> Iterator[subprocess.Popen]:
    """What scripts/run does after start-up: two supervised processes, then wait for them.
    Whatever the test's outcome, the supervisors are stopped at the end."""
    run = subprocess.Popen(
        [
            "bash",
            "-c",
            f'set -euo pipefail; . "{REPO}/scripts/_lib.sh"; '
            "supervise one sleep 600 & pids=($!); supervise two sleep 600 & pids+=($!); "
            'echo "${pids[@]}" >supervisors; stop_supervisors_on_exit "${pids[@]}"; '
            ": >traps-set; wait_for_supervisors",
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,  # noqa: PLW1509 - no threads are started in between
    )
    try:
        wait_for(lambda: all((tmp_path / f"var/run/{n}.pid").exists() for n in ("one", "two")))
        wait_for(lambda: len(supervisors(tmp_path)) == 2)
        # A signal before the traps are set would end the shell and leave the supervisors
        # running: the shell says when they are set, rather than a fixed pause guessing it.
        wait_for(lambda: (tmp_path / "traps-set").exists())
        yield run
    finally:
        if run.poll() is None:
            run.kill()
        for pid in supervisors(tmp_path):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)  # a supervisor stops what it runs


def supervisors(folder: Path) -> list[int]:
    path = folder / "supervisors"
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


def test_ctrl_c_stops_everything_cleanly(tmp_path: Path) -> None:
    with run_until_stopped(tmp_path) as run:
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=20)
    assert run.returncode == 0
    assert "supervisor stopped" not in err
    assert "Stopped." in err


def test_a_supervisor_that_stops_on_its_own_is_reported(tmp_path: Path) -> None:
    with run_until_stopped(tmp_path) as run:
        os.kill(supervisors(tmp_path)[1], signal.SIGTERM)
        _, err = run.communicate(timeout=20)
    assert run.returncode == 1
    assert "A supervisor stopped; see var/log/." in err


def test_the_demo_logins_are_printed_once_at_start_up(tmp_path: Path) -> None:
    # prepare_platform with a stand-in for the virtualenv's python that prints what
    # load_demo prints: the summary goes to the terminal, the logins wait for the banner.
    fake = tmp_path / ".venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$2" = load_demo ]; then\n'
        "  echo 'Tables: 6 created, 0 updated, 0 unchanged.'\n"
        "  echo 'Demo logins (username / password, role):'\n"
        "  echo '  admin / admin-demo-pass  (admin)'\n"
        "fi\n"
    )
    fake.chmod(0o755)
    started = lib("prepare_platform demo.log && demo_logins demo.log", tmp_path)
    assert started.returncode == 0, started.stderr
    assert started.stdout.count("admin / admin-demo-pass") == 1
    assert started.stdout.startswith("Tables: 6 created")
    assert "Demo logins" in (tmp_path / "demo.log").read_text()
