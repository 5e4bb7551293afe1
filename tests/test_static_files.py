"""Static files as production collects them: every file the manifest storage post-processes
must resolve what it references. The rest of the suite serves static files from the finders,
so without this a vendored file naming a missing source map only broke `scripts/run`."""

from __future__ import annotations

from pathlib import Path

from django.core.management import call_command
from django.test import override_settings

PRODUCTION_STORAGE = "whitenoise.storage.CompressedManifestStaticFilesStorage"


def test_collectstatic_with_the_production_storage_succeeds(tmp_path: Path) -> None:
    from django.conf import settings

    storages = {**settings.STORAGES, "staticfiles": {"BACKEND": PRODUCTION_STORAGE}}
    with override_settings(STATIC_ROOT=tmp_path, STORAGES=storages):
        call_command("collectstatic", interactive=False, verbosity=0)
    manifest = (tmp_path / "staticfiles.json").read_text()
    assert "css/site.css" in manifest and "vendor/chartjs/chart.umd.min.js" in manifest
