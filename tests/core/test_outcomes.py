"""A finished run's three states: done, partly failed, failed."""

from __future__ import annotations

import pytest

from hctqa.core.outcomes import FAILED, PARTLY_FAILED, Outcome, finished


@pytest.mark.parametrize(
    ("succeeded", "failed", "state"),
    [(2, 0, "done"), (1, 1, PARTLY_FAILED), (0, 2, FAILED), (0, 0, "done")],
)
def test_a_finished_run_is_done_partly_failed_or_failed(
    succeeded: int, failed: int, state: str
) -> None:
    assert finished(succeeded=succeeded, failed=failed) == state


class Run(Outcome):
    def __init__(self, status: str, done: int, failed: int) -> None:
        self.status, self.done, self.failed = status, done, failed

    def get_status_display(self) -> str:
        return self.status.capitalize()

    def tally(self) -> tuple[int, int]:
        return self.done, self.failed


def test_only_a_finished_run_is_judged_by_its_items() -> None:
    # "0 of 2 tables done, 2 failed" is no longer "Done".
    assert (Run("done", 0, 2).state, Run("done", 0, 2).state_label) == ("failed", "Failed")
    assert Run("done", 1, 1).state_label == "Partly failed"
    assert Run("done", 2, 0).state_label == "Done"
    assert (Run("running", 0, 2).state, Run("running", 0, 2).state_label) == ("running", "Running")
