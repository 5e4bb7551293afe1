"""Telling researchers that a submission or an inference run is through (scored, or failed):
a notification in the menu, and an email if they asked for one on their account page.

Called in the transaction (or right after the update) that moved the row, only by the caller
whose update did so, so each outcome is told once. A message shows the overall figure only
when the scoring kept it (``hctqa.core.disclosure``: never one that, with the figures
shown, would reveal 1 to ``DISCLOSURE_MARGIN`` test-split questions) and it rests on at least
that many questions, and never a per-question one.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from accounts.services import notify
from hctqa.core.disclosure import DISCLOSURE_MARGIN
from hctqa.core.wording import counted
from leaderboard.models import (
    DEFAULT_RULES,
    InferenceRun,
    Kind,
    RunStatus,
    Status,
    Submission,
    TrackScore,
)
from tracks.registry import track


def _wants_email(user_id: int) -> bool:
    return (
        get_user_model()
        .objects.filter(pk=user_id, account__email_on_scoring=True)
        .exclude(email="")
        .exists()
    )


def _what(submission: Submission) -> str:
    run = InferenceRun.objects.filter(submission=submission).values_list("pk", flat=True).first()
    kind = f"inference run {run}" if run else f"submission {submission.pk}"
    on = "" if submission.is_qa else f", {track(submission.track).name} track"
    return f"Your {kind}, “{submission.model_name}” ({submission.get_split_display()} split{on})"


def _track_figure(submission: Submission) -> str:
    """The track's main figure, when the scoring kept it, on enough items."""
    info = track(submission.track)
    score = TrackScore.objects.filter(submission=submission).first()
    value = score.figures.get(info.primary) if score else None
    if score is None or score.withheld or value is None or score.n < DISCLOSURE_MARGIN:
        return ""
    label = info.figure(info.primary, submission.mode).label
    return f": {label} {value:.3f} on {score.n:,} {info.name} items"


def submission_outcome_notify(*, submission_id: int) -> None:
    """Tell the owner that their submission (or the run behind it) is scored, or failed."""
    submission = Submission.objects.select_related("owner").filter(pk=submission_id).first()
    if submission is None or submission.owner is None or submission.kind != Kind.SUBMISSION:
        return
    what = _what(submission)
    if submission.status == Status.SCORED and not submission.is_qa:
        text = f"{what}, is scored" + _track_figure(submission)
    elif submission.status == Status.SCORED:
        score = submission.scores.filter(rules=DEFAULT_RULES).first()
        text = f"{what}, is scored"
        # Only a figure the scoring kept (hctqa.core.disclosure), on enough questions.
        shown = score is not None and not score.withheld and score.recall is not None
        if shown and score.n_questions >= DISCLOSURE_MARGIN:
            text += (
                f": recall {100 * (score.recall or 0):.1f}% on "
                f"{counted(score.n_questions, 'question')} ({DEFAULT_RULES} rules)"
            )
    elif submission.status == Status.FAILED:
        text = f"{what}, failed: {submission.error}"
    else:
        return
    notify(
        recipient=submission.owner,
        text=text,
        url=submission.get_absolute_url(),
        email=_wants_email(submission.owner_id),
    )


def inference_run_failed_notify(*, run_id: int) -> None:
    """Tell the researcher that their inference run stopped on a failure."""
    run = InferenceRun.objects.select_related("created_by").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.FAILED:
        return
    notify(
        recipient=run.created_by,
        text=f"Your inference run {run.pk}, “{run.model_name}”, failed: {run.error}",
        url=run.get_absolute_url(),
        email=_wants_email(run.created_by_id),
    )
