"""Scoring submissions again when the questions or gold answers they were scored on change,
and the sweeper that keeps scoring moving.

Every scored submission records the question set it was scored on (``question_set_sha256``:
the sorted question ids and their gold answers). When the dataset changes under it (an
import that moves tables between splits or changes gold answers, questions joining or
leaving the gold pool), ``submissions_invalidate`` compares each with the current question
set of its split and data scope. Those that differ are marked stale and queued, together,
as one ``Rescore``; a task on the scoring queue scores them again, a slice at a time. A
stale submission is never ranked beside fresh ones: the board lists it apart until then.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, Q, Value, When
from django.utils import timezone

from hctqa.core.outcomes import Outcome
from hctqa.core.scoring import collector_paused
from hctqa.core.snapshots import FrozenQuestion, question_set_digests
from leaderboard import selectors
from leaderboard.jobs import RESCORE, SUBMISSION_SCORING, enqueue_rescore
from leaderboard.models import QA_TRACK, Kind, Rescore, Status, Submission
from leaderboard.services.scoring import ScoringContext, claim, score_claimed
from leaderboard.services.submissions import enqueue_regression
from plumbing import jobs
from plumbing.jobs import RunStatus
from tracks.selectors import item_set_digests, item_set_key

# Ids per query: within every database's parameter limit.
_CHUNK = 5000


def current_question_sets() -> dict[str, str]:
    """The question set each submission would be scored on now, as ``question_set_sha256``,
    keyed ``"<split>/<data scope>"`` (the keys of a release's ``question_set_digests``)."""
    rows = selectors.scored_questions().values_list(
        "id", "gold_answer", "table__split", "table__source"
    )
    return question_set_digests(
        FrozenQuestion(id=qid, table_id="", source=source, split=split, origin="", gold_answer=gold)
        for qid, gold, split, source in rows.iterator(chunk_size=_CHUNK)
    )


@transaction.atomic
def submissions_invalidate(*, reason: str, requeue_scoring: bool = True) -> list[int]:
    """Mark every scored submission whose question set is no longer the current one for its
    split and data scope as stale, and queue them to be scored again, together. One being
    scored now is queued again too (it may have read the old gold answers; the scoring
    under way then cannot save), unless ``requeue_scoring`` is off: a scoring records the
    question set it read, so a later check finds it if it read an old one. Returns their
    ids; nothing is queued when none is out of date. Run it in the transaction that changed
    the questions."""
    current = current_question_sets()
    items = item_set_digests()
    candidates = Submission.objects.filter(
        kind__in=[Kind.SUBMISSION, Kind.BASELINE], status__in=[Status.SCORED, Status.SCORING]
    ).values_list("pk", "track", "mode", "split", "data_scope", "question_set_sha256", "status")

    def now_(track: str, mode: str, split: str, scope: str) -> str:
        if track == QA_TRACK:
            return current.get(f"{split}/{scope}", "")
        return items.get(item_set_key(track, mode, split), "")

    ids = [
        pk
        for pk, track, mode, split, scope, digest, status in candidates.iterator(chunk_size=_CHUNK)
        if (requeue_scoring and status == Status.SCORING)
        or (status == Status.SCORED and digest != now_(track, mode, split, scope))
    ]
    if ids:
        rescore_start(submission_ids=ids, reason=reason)
    return ids


# The reason a periodic check gives: the changes that send no signal of their own.
DRIFT_REASON = (
    "questions were written, verified, edited or removed since these submissions were scored"
)


def submissions_check_question_sets() -> list[int]:
    """The periodic check (beat, every ``QUESTION_SET_CHECK_SECONDS``): questions written in
    the query tool, verified or dropped in verification, edited or deleted by an admin change
    the question sets too, without a signal; re-scoring on each of them would keep the board
    re-scoring all day. Scorings under way are left alone."""
    return submissions_invalidate(reason=DRIFT_REASON, requeue_scoring=False)


@transaction.atomic
def rescore_start(*, submission_ids: Iterable[int], reason: str) -> Rescore:
    """Queue these submissions to be scored again together, as one ``Rescore``. Those scored
    before are marked stale: off the ranking until their new scores are in."""
    ids = list(submission_ids)
    now = timezone.now()
    rescore = Rescore.objects.create(reason=reason, total=len(ids), queued_at=now)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        # One scoring now keeps its attempt count, so the next claim's attempt differs from
        # the one under way, which then can neither save nor fail it.
        Submission.objects.filter(pk__in=chunk, status=Status.SCORED).update(attempts=0)
        Submission.objects.filter(pk__in=chunk).update(
            status=Status.QUEUED,
            stale=Case(When(scored_at__isnull=False, then=Value(True)), default=Value(False)),
            rescore=rescore,
            progress=0,
            error="",
            queued_at=now,
            started_at=None,
        )
    enqueue_rescore(rescore.pk)
    return rescore


# Scored between two progress notes on the rescore (its heartbeat).
HEARTBEAT_EVERY_SECONDS = 5.0


def rescore_run(*, rescore_id: int, time_budget: float | None = None) -> str:
    """Score the queued submissions of a re-scoring, one after the other, sharing what they
    read from the dataset. Safe to run twice: only the run that moves it from queued to
    running works on it. After ``time_budget`` seconds it goes back to the queue to
    continue, so uploads scored meanwhile wait at most one slice."""
    budget = settings.RESCORE_SLICE_SECONDS if time_budget is None else time_budget
    lease = jobs.claim(RESCORE, rescore_id)
    if lease is None:
        return "not queued"
    # The cycle collector waits for the end of the slice, as it does for each evaluation: its
    # passes over the worker's live objects cost more than the scoring.
    with collector_paused():
        return _work_through(rescore_id, lease, budget)


def _work_through(rescore_id: int, lease: jobs.Token, budget: float) -> str:
    context = ScoringContext()
    deadline = time.monotonic() + budget
    last_beat = time.monotonic()
    scored = 0
    while True:
        pending = list(
            Submission.objects.filter(rescore_id=rescore_id, status=Status.QUEUED)
            .order_by("pk")
            .values_list("pk", flat=True)[:200]
        )
        if not pending:
            break
        for pk in pending:
            if scored and time.monotonic() > deadline:  # one at least, so each slice moves
                if jobs.hand_back(RESCORE, rescore_id, lease):
                    enqueue_rescore(rescore_id)
                _refresh_after(scored)
                return f"{scored} scored; continues in the next slice"
            attempt = claim(pk)
            if attempt is None:
                continue  # taken meanwhile (an owner's re-score, the sweeper's retry)
            score_claimed(pk, attempt, context, in_batch=True)
            scored += 1
            if time.monotonic() - last_beat > HEARTBEAT_EVERY_SECONDS:
                last_beat = time.monotonic()
                if not jobs.beat(RESCORE, rescore_id, lease):
                    _refresh_after(scored)
                    return f"{scored} scored; another run took it over"
    jobs.mine(RESCORE, rescore_id, lease).update(
        status=RunStatus.DONE, lease="", finished_at=timezone.now()
    )
    _refresh_after(scored)
    return f"{scored} scored; done"


def _refresh_after(scored: int) -> None:
    # The regression once per slice, not once per submission.
    if scored:
        enqueue_regression()


@dataclass(frozen=True)
class RescoreProgress(Outcome):
    rescore: Rescore
    scored: int  # scored again, fresh
    failed: int  # could not be scored again (the reason is on each)
    pending: int  # waiting or being scored

    @property
    def status(self) -> str:  # type: ignore[override]
        return self.rescore.status

    def get_status_display(self) -> str:
        return self.rescore.get_status_display()

    def tally(self) -> tuple[int, int]:
        return self.scored, self.failed

    @property
    def percent(self) -> int:
        done = self.scored + self.failed
        total = done + self.pending
        return 100 if not total else (100 * done) // total


def rescore_progress(rescores: Iterable[Rescore]) -> list[RescoreProgress]:
    """How far each re-scoring has got, read off its submissions: one query."""
    rescores = list(rescores)
    counts = (
        Submission.objects.filter(rescore__in=rescores)
        .values("rescore_id")
        .annotate(
            scored=Count("pk", filter=Q(status=Status.SCORED, stale=False)),
            failed=Count("pk", filter=Q(status=Status.FAILED)),
            pending=Count("pk", filter=Q(status__in=[Status.QUEUED, Status.SCORING])),
        )
        .order_by()
    )
    by_id = {row["rescore_id"]: row for row in counts}
    empty = {"scored": 0, "failed": 0, "pending": 0}
    return [
        RescoreProgress(
            rescore=r,
            scored=by_id.get(r.pk, empty)["scored"],
            failed=by_id.get(r.pk, empty)["failed"],
            pending=by_id.get(r.pk, empty)["pending"],
        )
        for r in rescores
    ]


# --- The sweeper ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    requeued: list[int]
    failed: list[int]
    rescores: list[int]


def submission_sweep(*, now: datetime | None = None) -> SweepResult:
    """Requeue submissions whose scoring has lost its heartbeat, or that waited in the queue
    past the timeout (the message may be lost), and fail those that have used up their
    attempts; hand re-scorings that lost their worker, or were never queued (a data
    migration makes them), back to the queue (``plumbing.jobs.sweep``: conditional updates,
    two sweepers cannot both act)."""
    scorings = jobs.sweep(SUBMISSION_SCORING, now=now)
    rescores = jobs.sweep(RESCORE, now=now)
    return SweepResult(
        requeued=scorings.requeued, failed=scorings.failed, rescores=rescores.requeued
    )
