from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.factories import QuestionFactory, TableFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker]


@pytest.fixture
def releases_on_the_worker(tmp_path: Path, settings, monkeypatch) -> Path:
    # Requested before celery_worker_process, which copies this environment.
    root = tmp_path / "releases"
    monkeypatch.setenv("RELEASES_ROOT", str(root))
    monkeypatch.setenv("RELEASE_BUILD_PROCESSES", "1")
    settings.RELEASES_ROOT = root
    return root


def test_an_admin_cuts_a_release_and_a_reader_downloads_it_on_a_phone(
    live_server, page: Page, releases_on_the_worker: Path, celery_worker_process
) -> None:
    for n, split in enumerate(["train", "train", "validation", "test"]):
        QuestionFactory(table=TableFactory(id=f"psa--7--{n}", split=split))
    UserFactory(username="root", role="admin")
    # The first page loads the whole URLconf; a machine busy with a worker is slow at it.
    page.goto(f"{live_server.url}/accounts/login/", timeout=60_000)
    page.locator("#id_username").fill("root")
    page.locator("#id_password").fill("a-Long-password-1")
    page.keyboard.press("Enter")
    expect(page).not_to_have_url(re.compile("/accounts/login/"))  # lands on its workspace

    page.get_by_role("link", name="Releases").click()
    page.get_by_label("Version").fill("2026.11")
    page.get_by_label("Title").fill("November")
    page.get_by_role("button", name="Cut the release").click()
    expect(page).to_have_url(re.compile(r"/releases/builds/\d+/$"))
    # The build page follows the worker's progress until the release is ready.
    expect(page.get_by_text("is ready")).to_be_visible(timeout=90_000)
    expect(page.get_by_label("Build progress")).to_have_attribute("value", "100")
    page.get_by_role("link", name="2026.11").click()
    expect(page.get_by_role("heading", name=re.compile("HCT-QA 2026.11: November"))).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("Full edition"))).to_be_visible()

    # A reader on a phone: no full edition, the downloads fit, a file downloads as released.
    page.context.clear_cookies()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/releases/")
    expect(page.get_by_role("heading", name=re.compile("Public edition"))).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("Full edition"))).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The one download, with the two lines that load it.
    expect(page.get_by_text('load_dataset("hctqa-2026.11-public")')).to_be_visible()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download hctqa-2026.11-public.tar.gz").click()
    assert download.value.suggested_filename == "hctqa-2026.11-public.tar.gz"
    public = releases_on_the_worker / "2026.11/public"
    saved = Path(download.value.path())
    assert saved.read_bytes() == (public / "hctqa-2026.11-public.tar.gz").read_bytes()
    # Every file is there too, one click further.
    page.get_by_text("Every file of the public edition").click()
    with page.expect_download() as download:
        page.get_by_role("link", name="hf/README.md").click()
    saved = Path(download.value.path())
    assert saved.read_bytes() == (public / "hf/README.md").read_bytes()
