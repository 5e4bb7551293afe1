"""A researcher starts an inference run from the web and watches it finish: the form, the
progress bar that polls while a real worker runs it, and the leaderboard entry it becomes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from leaderboard.models import InferenceRun
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI
from tests.leaderboard.inference_helpers import KEY_ENV, make_questions, registered, right_answer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker]


@pytest.fixture
def key_on_the_worker(monkeypatch) -> None:
    # Requested before celery_worker_process, which copies this environment.
    monkeypatch.setenv(KEY_ENV, "sk-browser")


def test_a_researcher_starts_a_run_and_watches_it_finish(
    live_server, page: Page, key_on_the_worker: None, celery_worker_process
) -> None:
    make_questions(60)
    UserFactory(username="ada", role="researcher")
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("#id_username").fill("ada")
    page.locator("#id_password").fill("a-Long-password-1")
    page.keyboard.press("Enter")
    expect(page).not_to_have_url(re.compile("/accounts/login/"))  # lands on its workspace

    # Six seconds of answers: the worker commits (and the bar moves) once a second.
    with FakeOpenAI(right_answer, latency=0.2) as server:
        # An admin registered the lab's server (on this machine, as the tests' server is).
        registered(server.base_url, name="lab-vllm", description="the lab's GPU host")
        page.get_by_role("link", name="Inference runs").click()
        page.get_by_role("link", name="New inference run").click()
        page.get_by_label("Model name").fill("browser-7b")
        page.get_by_label(re.compile(r"^Endpoint")).select_option("lab-vllm")
        page.get_by_label("Table format").select_option("markdown")
        page.get_by_label("Requests in flight").fill("2")
        page.get_by_label("Weights").select_option("open")
        page.get_by_label("Parameters (billions)").fill("7")
        page.get_by_role("button", name="Start the run").click()

        expect(page).to_have_url(re.compile(r"/leaderboard/inference/\d+/$"))
        progress = page.locator("#run-progress progress")
        # The bar moves while the worker answers (60 questions, 2 at a time, 0.2 s each)…
        expect(page.locator("#run-counts")).to_contain_text(
            re.compile(r"[1-9]\d* of 60 answered"), timeout=20_000
        )
        assert int(progress.get_attribute("value") or 0) < 100
        # …and the finished run links to its leaderboard entry.
        entry = page.get_by_role("link", name="browser-7b")
        expect(entry).to_be_visible(timeout=30_000)
        expect(page.locator("#run-progress")).to_contain_text("Done")
    expect(page.locator("#run-counts")).to_have_text("60 of 60 answered")
    entry.click()
    expect(page.locator("#submission-status")).to_contain_text("Scored", timeout=20_000)
    run = InferenceRun.objects.get()
    assert run.submission.score_for().recall == 1.0 and run.table_format == "markdown"
