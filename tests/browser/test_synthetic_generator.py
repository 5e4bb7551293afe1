"""An admin starts a synthetic generation run from the web and watches the worker finish it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import override_settings
from playwright.sync_api import Page, expect

from dataset.models import Table
from tests.factories import UserFactory
from tests.synthetic_params import write_small_params

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker]


@pytest.fixture
def params_on_the_worker(data_dir: Path, tmp_path: Path, monkeypatch) -> Path:
    # Requested before celery_worker_process, which copies this environment.
    folder = write_small_params(
        data_dir / "hctqa-synthetic",
        tmp_path / "params",
        col_row_agg_pos=["none_none", "right_top"],
        row_format=["indent"],
        shuffle=["none"],
    )
    monkeypatch.setenv("SYNTHETIC_PARAMS_DIR", str(folder))
    return folder


def test_an_admin_generates_a_family_and_watches_it_import(
    live_server, page: Page, params_on_the_worker: Path, celery_worker_process
) -> None:
    UserFactory(username="grace", role="admin")
    with override_settings(SYNTHETIC_PARAMS_DIR=str(params_on_the_worker)):
        page.goto(f"{live_server.url}/accounts/login/")
        page.locator("#id_username").fill("grace")
        page.locator("#id_password").fill("a-Long-password-1")
        page.keyboard.press("Enter")
        expect(page).not_to_have_url(re.compile("/accounts/login/"))  # lands on its workspace
        page.goto(f"{live_server.url}/annotate/synthetic/")
        page.get_by_label("Number_of_accidents").check()
        page.get_by_role("button", name="Generate and import").first.click()
        expect(page).to_have_url(re.compile(r"/annotate/synthetic/\d+/$"))
        expect(page.locator("#run-progress")).to_contain_text("Done", timeout=60_000)
        expect(page.locator("#run-progress progress")).to_have_attribute("value", "100")
        expect(page.get_by_role("heading", name="Tables per family and layout")).to_be_visible()
    assert Table.objects.filter(source="synthetic").exists()
