"""A task's heartbeat, written from a thread while the task works, so that a long step (a
large scoring, a slow PDF page) keeps its claim and a dead worker's silence is noticed by the
sweeper within seconds, not at the end of the step."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)

# How often a working task writes its heartbeat; the stale thresholds (seconds settings named
# *_HEARTBEAT_TIMEOUT_SECONDS / *_STALE_SECONDS) are several beats long.
EVERY_SECONDS = 5.0


@contextmanager
def beating(beat: Callable[[], object], name: str, every: float = EVERY_SECONDS) -> Iterator[None]:
    """Call ``beat`` (a conditional UPDATE of the claimed row) every ``every`` seconds while
    the block runs. A failed beat is logged and the next one tried: the block goes on."""
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.wait(every):
                try:
                    beat()
                except DatabaseError:
                    logger.warning("heartbeat of %s failed", name)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=run, name=f"heartbeat-{name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
