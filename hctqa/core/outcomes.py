"""How a finished run ended, said the same way everywhere a run is shown (question
generation, synthetic generation, inference runs, ingested documents, release builds,
re-scorings): **done** (every item went through), **partly failed** (some items failed,
others went through) or **failed** (none went through, or the run stopped on an error).
A run that is not finished keeps its own state (queued, running, cancelled, …)."""

from __future__ import annotations

DONE = "done"
PARTLY_FAILED = "partly_failed"
FAILED = "failed"
LABELS = {DONE: "Done", PARTLY_FAILED: "Partly failed", FAILED: "Failed"}


def finished(*, succeeded: int, failed: int) -> str:
    """The state of a run that went through all its items: ``succeeded`` went through,
    ``failed`` did not."""
    if failed and not succeeded:
        return FAILED
    return PARTLY_FAILED if failed else DONE


class Outcome:
    """For a run with ``status`` (its "done" meaning finished, whatever the items did) and
    ``get_status_display()``: ``state`` and ``state_label`` in the three states. A run whose
    items can fail says how many with ``tally()``."""

    status: str

    def tally(self) -> tuple[int, int]:
        """(items that went through, items that failed)."""
        return 1, 0

    @property
    def state(self) -> str:
        if self.status != DONE:
            return self.status
        succeeded, failed = self.tally()
        return finished(succeeded=succeeded, failed=failed)

    @property
    def state_label(self) -> str:
        return LABELS.get(self.state) or self.get_status_display()  # type: ignore[attr-defined]
