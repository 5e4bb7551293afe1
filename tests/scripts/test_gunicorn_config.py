"""The web server's set-up, chosen with benchmarks/load.py (docs/operators.md): threads in
each process, so that one request waiting on the database or a slow client does not hold a
core, and connections kept alive. scripts/run starts gunicorn with it."""

from __future__ import annotations

import runpy

from gunicorn.config import Config

from tests.conftest import REPO


def test_gunicorn_reads_threaded_workers_from_the_config_file() -> None:
    config = Config()
    for name, value in runpy.run_path(str(REPO / "gunicorn.conf.py")).items():
        if name in config.settings:
            config.set(name, value)
    assert config.worker_class_str == "gthread"
    assert config.workers >= 2 and config.threads >= 2
    assert config.wsgi_app == "hctqa.wsgi"


def test_scripts_run_starts_gunicorn_with_it() -> None:
    run = (REPO / "scripts" / "run").read_text()
    [web] = [line for line in run.splitlines() if line.startswith("supervise web ")]
    assert "gunicorn --config gunicorn.conf.py" in web
    # The counts come from the file alone.
    assert "--workers" not in web and "--threads" not in web
