"""Shared set-up for the benchmark scripts. They never touch a developer's data: SQLite runs
in a throwaway var/ directory, and with DATABASE_URL set they use a fresh database named
hctqa_bench on the same PostgreSQL server."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"


def setup(
    description: str, arguments: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    if arguments is not None:
        arguments(parser)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", DEFAULT_DATA)),
        help="the release's data folder (holding hctqa-real/)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HCTQA_VAR_DIR", tempfile.mkdtemp(prefix="hctqa-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hctqa.settings")
    if os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = _scratch_postgres(os.environ["DATABASE_URL"])
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    _static_files_without_collectstatic()
    return args


def _static_files_without_collectstatic() -> None:
    """Pages name static files without the manifest that only ``collectstatic`` writes, as
    in the tests: the benchmarks measure the views, not the static files."""
    from django.conf import settings
    from django.test.utils import override_settings

    storages = {**settings.STORAGES}
    storages["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    override_settings(STORAGES=storages).enable()


def _scratch_postgres(url: str) -> str:
    """A fresh database hctqa_bench beside the one in DATABASE_URL, which is left alone."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    parts = urlsplit(url)
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS hctqa_bench")
        conn.execute("CREATE DATABASE hctqa_bench")
    return urlunsplit(parts._replace(path="/hctqa_bench"))


def import_release(data: Path) -> None:
    """The whole real release into the benchmark database."""
    import io

    from django.core.management import call_command

    real = data / "hctqa-real"
    call_command(
        "import_hctqa",
        "--qaps",
        str(real / "qaps.json.gz"),
        "--csvs",
        str(real / "csvs.tar.gz"),
        stdout=io.StringIO(),
    )
