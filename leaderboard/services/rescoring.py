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
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, F, PositiveSmallIntegerField, Q, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from hctqa.core.scoring import collector_paused
from hctqa.core.snapshots import FrozenQuestion, question_set_digests
from hctqa.core.wording import counted
from leaderboard import selectors
from leaderboard.models import Kind, Rescore, Status, Submission
from leaderboard.services.notices import submission_outcome_notify
from leaderboard.services.scoring import ScoringContext, claim, score_claimed
from leaderboard.services.submissions import enqueue_regression, enqueue_scoring
from plumbing.jobs import RunStatus

# Ids per query: within every database's parameter limit.
_CHUNK = 5000


def _enqueue_rescore(rescore_id: int) -> None:
    from leaderboard.tasks import rescore_submissions

    transaction.on_commit(lambda: rescore_submissions.delay(rescore_id))


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
    candidates = Submission.objects.filter(
        kind=Kind.SUBMISSION, status__in=[Status.SCORED, Status.SCORING]
    ).values_list("pk", "split", "data_scope", "question_set_sha256", "status")
    ids = [
        pk
        for pk, split, scope, digest, status in candidates.iterator(chunk_size=_CHUNK)
        if (requeue_scoring and status == Status.SCORING)
        or (status == Status.SCORED and digest != current.get(f"{split}/{scope}", ""))
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
    _enqueue_rescore(rescore.pk)
    return rescore


# Scored between two progress notes on the rescore (its heartbeat).
HEARTBEAT_EVERY_SECONDS = 5.0


def rescore_run(*, rescore_id: int, time_budget: float | None = None) -> str:
    """Score the queued submissions of a re-scoring, one after the other, sharing what they
    read from the dataset. Safe to run twice: only the run that moves it from queued to
    running works on it. After ``time_budget`` seconds it goes back to the queue to
    continue, so uploads scored meanwhile wait at most one slice."""
    budget = settings.RESCORE_SLICE_SECONDS if time_budget is None else time_budget
    lease = uuid.uuid4().hex
    now = timezone.now()
    claimed = Rescore.objects.filter(pk=rescore_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING,
        lease=lease,
        started_at=Coalesce(F("started_at"), Value(now)),
        heartbeat_at=now,
    )
    if not claimed:
        return "not queued"
    # The cycle collector waits for the end of the slice, as it does for each evaluation: its
    # passes over the worker's live objects cost more than the scoring.
    with collector_paused():
        return _work_through(rescore_id, lease, budget)


def _work_through(rescore_id: int, lease: str, budget: float) -> str:
    mine = Rescore.objects.filter(pk=rescore_id, lease=lease)
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
                if mine.update(status=RunStatus.QUEUED, lease="", queued_at=timezone.now()):
                    _enqueue_rescore(rescore_id)
                _refresh_after(scored)
                return f"{scored} scored; continues in the next slice"
            attempt = claim(pk)
            if attempt is None:
                continue  # taken meanwhile (an owner's re-score, the sweeper's retry)
            score_claimed(pk, attempt, context, in_batch=True)
            scored += 1
            if time.monotonic() - last_beat > HEARTBEAT_EVERY_SECONDS:
                last_beat = time.monotonic()
                if not mine.update(heartbeat_at=timezone.now()):
                    _refresh_after(scored)
                    return f"{scored} scored; another run took it over"
    mine.update(status=RunStatus.DONE, lease="", finished_at=timezone.now())
    _refresh_after(scored)
    return f"{scored} scored; done"


def _refresh_after(scored: int) -> None:
    # The regression once per slice, not once per submission.
    if scored:
        enqueue_regression()


@dataclass(frozen=True)
class RescoreProgress:
    rescore: Rescore
    scored: int  # scored again, fresh
    failed: int  # could not be scored again (the reason is on each)
    pending: int  # waiting or being scored

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
    migration makes them), back to the queue. Conditional updates: two sweepers cannot both
    act."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER_SECONDS)
    # Scoring beats every few seconds: a silent one lost its worker.
    silent = now - timedelta(seconds=settings.SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS)
    max_attempts = settings.SUBMISSION_MAX_ATTEMPTS
    requeued: list[int] = []
    failed: list[int] = []
    # A submission waiting in a live re-scoring is that re-scoring's to score, however long
    # the queue before it: the re-scoring's own heartbeat is watched instead.
    in_live_rescore = Q(rescore__status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
    stuck_condition = (
        Q(status=Status.SCORING, heartbeat_at__lt=silent)
        | Q(status=Status.SCORING, heartbeat_at__isnull=True, started_at__lt=silent)
        | (Q(status=Status.QUEUED, queued_at__lt=cutoff) & ~in_live_rescore)
    )
    for pk, attempts in Submission.objects.filter(stuck_condition).values_list("pk", "attempts"):
        still_stuck = Submission.objects.filter(stuck_condition, pk=pk)
        if attempts >= max_attempts:
            with transaction.atomic():
                if still_stuck.update(
                    status=Status.FAILED,
                    progress=100,
                    error=f"Scoring did not finish after {counted(attempts, 'attempt')}; score "
                    "it again to try again",
                ):
                    failed.append(pk)
                    submission_outcome_notify(submission_id=pk)
            continue
        with transaction.atomic():
            # A queued one waited too long (its message may be lost): that is an attempt too.
            # One stuck in scoring had its attempt counted when scoring claimed it.
            if still_stuck.update(
                status=Status.QUEUED,
                queued_at=now,
                started_at=None,
                heartbeat_at=None,
                attempts=Case(
                    When(status=Status.QUEUED, then=F("attempts") + 1),
                    default=F("attempts"),
                    output_field=PositiveSmallIntegerField(),
                ),
            ):
                requeued.append(pk)
                enqueue_scoring(pk)
    return SweepResult(requeued=requeued, failed=failed, rescores=_sweep_rescores(now, silent))


def _sweep_rescores(now: datetime, silent: datetime) -> list[int]:
    cutoff = now - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER_SECONDS)
    stuck = (
        Q(status=RunStatus.QUEUED, queued_at__isnull=True)
        | Q(status=RunStatus.QUEUED, queued_at__lt=cutoff)
        | Q(status=RunStatus.RUNNING, heartbeat_at__lt=silent)
    )
    requeued = []
    for pk in Rescore.objects.filter(stuck).values_list("pk", flat=True):
        with transaction.atomic():
            if Rescore.objects.filter(stuck, pk=pk).update(
                status=RunStatus.QUEUED, lease="", queued_at=now
            ):
                requeued.append(pk)
                _enqueue_rescore(pk)
    return requeued
