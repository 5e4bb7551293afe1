"""The platform's Celery app for worker-recovery tests (``celery -A tests.workers.holding``):
while the file named by HCTQA_TEST_HOLD exists, scoring waits before it scores, and
extraction waits before a document's second page, so a test can kill the worker mid-task
(claimed, heartbeat running, part of the work done)."""

from __future__ import annotations

import os
import time
from typing import Any

from celery.signals import task_prerun

from hctqa.celery import app

__all__ = ["app"]

HOLD = os.environ.get("HCTQA_TEST_HOLD", "")
_held = False


def _wait() -> None:
    while HOLD and os.path.exists(HOLD):
        time.sleep(0.1)


@task_prerun.connect
def _hold_mid_task(**_: Any) -> None:
    """Wrapped once, in the process that runs tasks, after Django is set up."""
    global _held
    if _held or not HOLD:
        return
    _held = True
    from ingest.services import extraction as ingest_extraction
    from leaderboard.services import scoring

    score = scoring._score

    def held_score(*args: Any, **kwargs: Any) -> Any:
        _wait()
        return score(*args, **kwargs)

    extract_page = ingest_extraction._extract_pdf_page

    def held_page(runner: Any, document: Any, page: Any) -> Any:
        if page.number == 2:
            _wait()
        return extract_page(runner, document, page)

    scoring._score = held_score
    ingest_extraction._extract_pdf_page = held_page
