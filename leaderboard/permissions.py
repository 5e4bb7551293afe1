"""Who may manage submissions and inference runs and watch re-scorings
(``plumbing.permissions``)."""

from __future__ import annotations

from typing import Any

from plumbing.permissions import Rule


def _owns_submission(user: Any, submission: Any) -> bool:
    from leaderboard.selectors import can_manage

    return can_manage(user=user, submission=submission)


def _started_run(user: Any, run: Any) -> bool:
    from leaderboard.selectors import can_manage_run

    return can_manage_run(user=user, run=run)


# Of one submission (``check(user, submission)``): its owner, or an admin.
MANAGING_SUBMISSION = Rule(
    "Only the owner of a submission, or an admin, can change it", allows_also=_owns_submission
)
# Of one run (``check(user, run)``): whoever started it, or an admin.
MANAGING_RUN = Rule(
    "Only the person who started a run, or an admin, can change it", allows_also=_started_run
)
SUBMITTING = Rule("Only researchers can submit predictions", ("leaderboard.add_submission",))


def _may_run_and_submit(user: Any, _target: Any) -> bool:
    # A run ends as its starter's submission: they must be able to make one.
    return user.has_perm("leaderboard.add_inferencerun") and user.has_perm(
        "leaderboard.add_submission"
    )


STARTING_INFERENCE = Rule(
    "Inference runs are for researchers and admins", allows_also=_may_run_and_submit
)
WATCHING_RESCORES = Rule("Re-scorings are for admins", ("leaderboard.view_rescore",))
