from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connections

from tests.chromium import CHROMIUM, launch_chromium

REPO = Path(__file__).resolve().parent.parent
# The real HCT-QA release lives beside the project; HCTQA_DATA_DIR points elsewhere.
DATA_DIR = Path(os.environ.get("HCTQA_DATA_DIR", REPO.parent / "shared" / "data")).resolve()

# Close database connections after every request: a live-server thread kept alive by the
# browser must not hold one open while the test database is dropped.
connections.settings["default"]["CONN_MAX_AGE"] = 0

# Playwright's sync API runs an event loop in the test thread; Django's ORM would refuse to
# run there. The tests touch the ORM only between Playwright calls, never concurrently.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True, scope="session")
def _test_settings() -> Iterator[None]:
    """Static files from the finders (the manifest storage needs collectstatic first;
    production mode is smoke-tested by .ci/run through scripts/run), fast passwords, caches
    of each test process's own, and no API rate limits: the crawls and the browser tests
    make hundreds of requests a minute. Tests of the limits set them (tests/test_throttling.py).
    """
    from django.conf import settings
    from django.test import override_settings

    storages = {**settings.STORAGES}
    storages["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    # Password hashing is slow on purpose; tests create many users.
    fast_hashers = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    with override_settings(
        STORAGES=storages,
        PASSWORD_HASHERS=fast_hashers,
        CACHES={
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
            "pages": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "LOCATION": "pages",
            },
            "page_tokens": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "LOCATION": "page_tokens",
            },
        },
        API_THROTTLE_RATES={scope: None for scope in settings.API_THROTTLE_RATES},
    ):
        yield


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Each test starts with empty caches: marks kept there (a queued property regression,
    a cached comparison, throttle counters, a kept page) must not carry over from an earlier
    test."""
    from django.core.cache import caches

    for cache in caches.all(initialized_only=False):
        cache.clear()
    yield


@pytest.fixture
def ann(db: None):  # type: ignore[no-untyped-def]
    """An annotator, for the tests of work among several people."""
    from tests.factories import UserFactory

    return UserFactory(username="ann", role="annotator")


@pytest.fixture
def bob(db: None):  # type: ignore[no-untyped-def]
    """Another annotator."""
    from tests.factories import UserFactory

    return UserFactory(username="bob", role="annotator")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA_DIR / "hctqa-real" / "qaps.json.gz").is_file():
        pytest.fail(
            f"The HCT-QA release is not at {DATA_DIR}; set HCTQA_DATA_DIR to its data folder."
        )
    return DATA_DIR


@pytest.fixture(scope="session")
def release_tables(data_dir: Path) -> list:
    """The real release, parsed once per test session (with the raw CSVs)."""
    from hctqa.core.release import parse_qaps, read_bytes, read_csvs_tar

    real = data_dir / "hctqa-real"
    raw = read_csvs_tar(real / "csvs.tar.gz")
    return parse_qaps(read_bytes(real / "qaps.json.gz"), raw_csvs=raw)


@pytest.fixture(scope="session")
def synthetic_tables(data_dir: Path) -> list:
    """One released synthetic family (234 tables), parsed once per test session."""
    from hctqa.core.release import read_synthetic_zip

    return read_synthetic_zip(data_dir / "hctqa-synthetic" / "Number_of_students.zip")


@pytest.fixture(scope="session")
def release_by_id(release_tables: list) -> dict:
    return {t.id: t for t in release_tables}


@contextmanager
def celery_conf(**values: object) -> Iterator[None]:
    """Set Celery settings for a block and put them back (pytest's monkeypatch cannot undo
    Celery's Settings attributes)."""
    from hctqa.celery import app

    def reset_pool() -> None:
        # Pooled broker connections keep the options they were made with.
        from kombu import pools

        pools.reset()
        app._pool = None
        app.amqp._producer_pool = None
        app.control.mailbox._producer_pool = None

    saved = {key: app.conf[key] for key in values}
    app.conf.update(values)
    reset_pool()
    try:
        yield
    finally:
        app.conf.update(saved)
        reset_pool()


def filesystem_broker_options(folder: Path) -> dict[str, object]:
    for sub in ("queue", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "polling_interval": 0.1,
    }


def _database_url_of_this_test_run() -> str:
    """The test database as a URL, so a worker process works on the same data."""
    from django.db import connection

    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(s['NAME']).resolve()}"
    host = s["HOST"] or "localhost"
    port = s["PORT"] or 5432
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{host}:{port}/{s['NAME']}"


def worker_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a worker that shares this process's broker and test database, and is
    isolated from any other worker on the machine when the broker is the filesystem one."""
    env = os.environ.copy()
    env["DATABASE_URL"] = _database_url_of_this_test_run()
    env["DB_CONN_MAX_AGE"] = "0"
    broker = os.environ.get("CELERY_BROKER_URL")
    if not broker:
        env["CELERY_FILESYSTEM_DIR"] = str(tmp_path / "broker")
    elif broker.startswith("redis"):
        # One Redis database per pytest-xdist worker: otherwise another test process's
        # worker, on another test database, can take this test's tasks.
        number = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
        parts = urlsplit(broker)
        env["CELERY_BROKER_URL"] = urlunsplit(parts._replace(path=f"/{1 + number % 15}"))
    return env


@contextmanager
def worker_broker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """This process's Celery app pointed at a broker of the test's own (a filesystem folder, or
    this pytest-xdist worker's Redis database, emptied afterwards); yields the environment for
    worker processes on the same broker and test database."""
    from hctqa.celery import app

    env = worker_env(tmp_path)
    options = app.conf.broker_transport_options
    if "CELERY_FILESYSTEM_DIR" in env:
        options = filesystem_broker_options(Path(env["CELERY_FILESYSTEM_DIR"]))
    broker_url = env.get("CELERY_BROKER_URL", app.conf.broker_url)
    if "CELERY_BROKER_URL" in os.environ:
        # Celery reads this variable before its own settings.
        monkeypatch.setenv("CELERY_BROKER_URL", broker_url)
    with celery_conf(broker_url=broker_url, broker_transport_options=options):
        try:
            yield env
        finally:
            if broker_url.startswith("redis"):
                # Messages a killed worker held would be handed out again to a later test.
                with app.connection_for_write() as conn:
                    conn.default_channel.client.flushdb()


def start_worker(
    env: dict[str, str],
    tmp_path: Path,
    *,
    queues: str,
    app_module: str = "hctqa.celery",
    beat: bool = False,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen:
    """A real `celery worker` process on the test broker (inside ``worker_broker``), returned
    once it answers a ping. ``stop_worker`` ends it."""
    from hctqa.celery import app

    short = f"test-{uuid.uuid4().hex[:8]}"
    name = f"{short}@%h"
    log_path = tmp_path / f"{short}.log"
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        app_module,
        "worker",
        "--pool",
        "solo",
        "--loglevel",
        "INFO",
        "--hostname",
        name,
        "--without-mingle",
        "--without-gossip",
        "-Q",
        queues,
    ]
    if beat:
        command += ["--beat", "--schedule", str(tmp_path / f"{short}-beat")]
    log = open(log_path, "w")  # noqa: SIM115 - closed by stop_worker
    proc = subprocess.Popen(
        command, cwd=REPO, env={**env, **(extra_env or {})}, stdout=log, stderr=subprocess.STDOUT
    )
    proc.log = log  # type: ignore[attr-defined]
    proc.log_path = log_path  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            stop_worker(proc)
            pytest.fail("the worker exited: " + log_path.read_text())
        try:
            with app.connection_for_write() as conn:
                replies = app.control.ping(timeout=0.5, connection=conn) or []
        except ValueError:
            # The filesystem broker can hand over a reply file the worker is still
            # writing (empty JSON): ask again.
            replies = []
        if any(short in host for reply in replies for host in reply):
            return proc
        if time.monotonic() > deadline:
            stop_worker(proc)
            pytest.fail("the worker did not answer a ping within 60 s")


def stop_worker(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.log.close()  # type: ignore[attr-defined]


@pytest.fixture
def celery_worker_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[subprocess.Popen]:
    """A real `celery worker` process taking every queue (what production splits across one
    worker per queue), and this process's Celery app pointed at its broker."""
    from django.conf import settings

    with worker_broker(tmp_path, monkeypatch) as env:
        proc = start_worker(env, tmp_path, queues=",".join(settings.WORKER_QUEUES))
        try:
            yield proc
        finally:
            stop_worker(proc)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's chromium, headless, driven by Playwright. Never a downloaded browser."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's chromium is not at {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def print_pdf(browser: object):  # type: ignore[no-untyped-def]
    """HTML → PDF bytes, printed by the same headless chromium, one page as wide and tall as
    the content (or A4 pages with ``a4=True``)."""
    context = browser.new_context(viewport={"width": 3000, "height": 1000})  # type: ignore[attr-defined]
    printer = context.new_page()

    def make(html: str, *, a4: bool = False) -> bytes:
        printer.set_content(html, wait_until="load")
        if a4:
            return printer.pdf(format="A4", print_background=True)
        from hctqa.core.extraction.printable import CONTENT_SIZE_JS

        width, height = printer.evaluate(CONTENT_SIZE_JS)
        return printer.pdf(width=f"{width + 2}px", height=f"{height + 2}px", print_background=True)

    yield make
    context.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    # Requests the page still has in flight when a test ends (a prefetch, a draft) must finish
    # before the database is flushed: a live-server thread mid-transaction deadlocks the
    # flush on PostgreSQL.
    in_flight: set[object] = set()
    context.on("request", lambda request: in_flight.add(request))
    context.on("requestfinished", lambda request: in_flight.discard(request))
    context.on("requestfailed", lambda request: in_flight.discard(request))
    page = context.new_page()
    page.set_default_timeout(10_000)
    from tests.browser.pagecheck import ConsoleWatch

    page.console = ConsoleWatch.on(page)  # type: ignore[attr-defined]
    yield page
    deadline = time.monotonic() + 5
    while in_flight and context.pages and time.monotonic() < deadline:
        context.pages[0].wait_for_timeout(50)
    context.close()
    time.sleep(0.1)  # the server thread closes its connection just after replying
    # Every browser test fails on a console error or a refusal by the CSP it did not expect.
    unexpected = page.console.unexpected()  # type: ignore[attr-defined]
    assert not unexpected, "the browser's console reported:\n" + "\n".join(unexpected)
