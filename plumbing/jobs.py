"""The one lifecycle of the platform's background jobs: queued, claimed by one worker, kept
alive by a heartbeat, ended (done, failed, cancelled), and swept when its worker died or its
queue message was lost.

A job is a row of a model built on ``Job`` with a ``status`` field of its own. Its app
describes it once as a ``JobKind`` (its statuses, settings, task and messages) and registers
it; the functions here do the rest for every kind:

- ``claim``: one conditional UPDATE takes a queued job (or a running one whose worker went
  silent, where the kind allows), so of two deliveries of one message only one works. It
  returns the claim's token (a new lease, or the attempt number), which every later write
  of that worker names, so a worker that lost its claim can no longer write;
- ``heartbeat``: while the work runs, a thread writes ``heartbeat_at`` every few seconds
  (``plumbing.heartbeat.beating``); ``mine`` is the worker's own row, for its writes;
- ``is_silent`` and ``silent``: the stale test, in Python and in SQL, one rule;
- ``sweep``: a job whose worker went silent, or whose message seems lost, is queued again,
  or failed once it has used its attempts; ``hand_back`` puts a job back in the queue
  without counting an attempt (a slice's end, giving way);
- the registry: ``register`` a kind (and ``register_chore`` for periodic work that goes
  with the sweeps); the sweeps worker's task (``plumbing.tasks.sweep_jobs``) sweeps them all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import models, transaction
from django.db.models import Case, F, PositiveSmallIntegerField, Q, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from plumbing.heartbeat import EVERY_SECONDS, beating


class RunStatus(models.TextChoices):
    """The states of a run (question generation, synthetic generation, inference, a
    re-scoring): queued, running, then done, failed or cancelled."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class Job(models.Model):
    """What every job records of its life, besides its own ``status``. A kind leaves out a
    field it has no use for by setting it to None in its model (Django then drops it), and
    names in its ``JobKind`` the fields it keeps under names of its own (a submission's
    ``scored_at``, a document's ``message``)."""

    # Claims so far; the sweep fails a job that has used its kind's max_attempts.
    attempts = models.PositiveSmallIntegerField(default=0)
    # The claim holding it (a kind whose claims are told apart by attempt number has none).
    lease = models.CharField(max_length=32, blank=True)
    # When its message was last sent; a job queued much longer lost it and is sent again.
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Stored, or a property of the kind's own counters (tables done of total, pages done).
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent, for the UI.")
    error = models.TextField(blank=True)

    class Meta:
        abstract = True

    def is_silent(self, seconds: float, *, now: datetime | None = None) -> bool:
        """No heartbeat for ``seconds`` (or none ever, from a start that long ago or never
        recorded): its worker is gone. The same rule as ``silent`` in SQL."""
        cutoff = (now or timezone.now()) - timedelta(seconds=seconds)
        if self.heartbeat_at is not None:
            return self.heartbeat_at < cutoff
        started = getattr(self, "started_at", None)
        return started is None or started < cutoff


@dataclass(frozen=True)
class JobKind:
    """One kind of job: its model and statuses, the settings that time it (read at each call,
    as callables, so tests and operators can change them), the task that runs one, and what
    its refusals and failures say.

    ``stale_after``: seconds without a heartbeat before the worker counts as gone.
    ``resend_after``: seconds queued before the message counts as lost (None: never).
    ``max_attempts``: claims before a stuck job is failed rather than queued again (None:
    always queued again; 0: failed at once). ``gave_up(attempts)`` is the failure's
    message. ``claim_by``: what tells one claim from the next, ``"lease"`` or ``"attempts"``
    (``""``: nothing does; the kind's writes check its status only).
    ``takeover``: a claim may take a running job whose worker went silent.
    ``periodic``: swept by the sweeps worker (else by its app, when it says so)."""

    name: str
    model: type[models.Model]
    queued: str
    running: str
    failed: str
    stale_after: Callable[[], float]
    enqueue: Callable[[int], None]
    gave_up: Callable[[int], str] = lambda attempts: "The worker stopped"
    resend_after: Callable[[], float] | None = None
    max_attempts: Callable[[], int] | None = None
    claim_by: str = "lease"
    takeover: bool = True
    keep_started: bool = False
    periodic: bool = True
    # Fields a claim, a requeue and a failure set besides the lifecycle's own.
    claim_fields: Mapping[str, Any] = field(default_factory=dict)
    requeue_fields: Mapping[str, Any] = field(default_factory=dict)
    fail_fields: Mapping[str, Any] = field(default_factory=dict)
    # A queued job counts as lost only if this holds too (a submission in a live re-scoring
    # is that re-scoring's to score); ``resend_unqueued``: one never queued counts as lost.
    resend_only: Q = field(default_factory=Q)
    resend_unqueued: bool = False
    # A lost message sent again counts as an attempt.
    lost_counts: bool = False
    # The fields it keeps under names of its own; None: it records no such time.
    error_field: str = "error"
    finished_field: str | None = "finished_at"
    # Which time says the worker is alive, and which says when a queued job was sent.
    stale_field: str = "heartbeat_at"
    sent_field: str = "queued_at"
    # A stale job whose cancel was asked for is cancelled, not queued again.
    cancel_flag: str | None = None
    cancelled: str | None = None
    on_failed: Callable[[int], None] | None = None

    def has(self, name: str) -> bool:
        return any(f.name == name for f in self.model._meta.get_fields())

    @property
    def objects(self) -> models.QuerySet:
        return self.model._default_manager.all()


Token = str | int


# --- Claim, heartbeat, the stale test -----------------------------------------------------


def silent(kind: JobKind, now: datetime | None = None) -> Q:
    """Running jobs whose worker went silent (``Job.is_silent`` in SQL)."""
    cutoff = (now or timezone.now()) - timedelta(seconds=kind.stale_after())
    quiet = Q(**{f"{kind.stale_field}__lt": cutoff})
    if kind.stale_field == "heartbeat_at":
        quiet |= Q(heartbeat_at__isnull=True) & (
            Q(started_at__isnull=True) | Q(started_at__lt=cutoff)
        )
    return Q(status=kind.running) & quiet


def claim(kind: JobKind, pk: int, *, only: Q | None = None, **fields: Any) -> Token | None:
    """Take job ``pk`` for this worker: queued (or running with a silent worker, if the kind
    allows), and ``only`` if given. Returns the claim's token, or None when another run has
    it or it is not waiting. ``fields`` are set too."""
    now = timezone.now()
    takeable = Q(status=kind.queued)
    if kind.takeover:
        takeable |= silent(kind, now)
    started: Any = Coalesce(F("started_at"), Value(now)) if kind.keep_started else now
    updates: dict[str, Any] = {"status": kind.running, "started_at": started, "heartbeat_at": now}
    if kind.has("attempts"):
        updates["attempts"] = F("attempts") + 1
    lease = uuid.uuid4().hex if kind.claim_by == "lease" else ""
    if lease:
        updates["lease"] = lease
    rows = kind.objects.filter(takeable, pk=pk)
    if only is not None:
        rows = rows.filter(only)
    with transaction.atomic():
        if not rows.update(**updates, **kind.claim_fields, **fields):
            return None
        if kind.claim_by == "attempts":
            return kind.objects.values_list("attempts", flat=True).get(pk=pk)
        return lease or True


def mine(kind: JobKind, pk: int, token: Token) -> models.QuerySet:
    """The job as long as this worker's claim holds it: filter every write through it."""
    rows = kind.objects.filter(pk=pk, status=kind.running)
    if kind.claim_by == "lease":
        return rows.filter(lease=token)
    if kind.claim_by == "attempts":
        return rows.filter(attempts=token)
    return rows


def beat(kind: JobKind, pk: int, token: Token, **fields: Any) -> int:
    """One heartbeat (with ``fields``, progress say); 0 when the claim was lost."""
    return mine(kind, pk, token).update(heartbeat_at=timezone.now(), **fields)


@contextmanager
def heartbeat(
    kind: JobKind, pk: int, token: Token, *, every: float = EVERY_SECONDS
) -> Iterator[None]:
    """Beat from a thread while the block runs, so a long step keeps the claim and a dead
    worker is noticed within ``stale_after``. The claim wrote the first beat."""
    with beating(lambda: beat(kind, pk, token), f"{kind.name}-{pk}", every=every):
        yield


def hand_back(
    kind: JobKind, pk: int, token: Token, *, at: datetime | None = None, **fields: Any
) -> bool:
    """Put a claimed job back in the queue without counting an attempt (a slice's end,
    giving way to others), to be sent at ``at`` (now by default): the sweep leaves it alone
    until ``resend_after`` past then. The caller sends the message (``kind.enqueue``)."""
    updates: dict[str, Any] = {"status": kind.queued, "heartbeat_at": timezone.now()}
    if kind.has("queued_at"):
        updates["queued_at"] = at or timezone.now()
    if kind.claim_by == "lease":
        updates["lease"] = ""
    elif kind.has("attempts"):
        updates["attempts"] = F("attempts") - 1
    return bool(mine(kind, pk, token).update(**updates, **fields))


# --- The sweep ----------------------------------------------------------------------------


@dataclass
class Swept:
    """What a sweep did, by job id."""

    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[int]]:
        return {"requeued": self.requeued, "failed": self.failed, "cancelled": self.cancelled}


def stuck(kind: JobKind, now: datetime | None = None) -> Q:
    """Jobs the sweep acts on: a silent worker's, and (if the kind resends) those queued so
    long that their message was probably lost."""
    now = now or timezone.now()
    condition = silent(kind, now)
    if kind.resend_after is not None:
        cutoff = now - timedelta(seconds=kind.resend_after())
        lost = Q(**{f"{kind.sent_field}__lt": cutoff})
        if kind.resend_unqueued:
            lost |= Q(**{f"{kind.sent_field}__isnull": True})
        condition |= Q(status=kind.queued) & lost & kind.resend_only
    return condition


def sweep(kind: JobKind, *, now: datetime | None = None) -> Swept:
    """Queue again every stuck job of ``kind``, or fail those that used their attempts, or
    cancel those whose cancel was waiting. Conditional updates: of two sweepers, only one
    acts on a job."""
    now = now or timezone.now()
    condition = stuck(kind, now)
    swept = Swept()
    columns = ["pk"] + [c for c in ("attempts", kind.cancel_flag) if c and kind.has(c)]
    ended: dict[str, Any] = {"lease": ""} if kind.claim_by == "lease" else {}
    if kind.finished_field:
        ended[kind.finished_field] = now
    for row in kind.objects.filter(condition).values(*columns):
        pk, attempts = row["pk"], row.get("attempts", 0)
        still = kind.objects.filter(condition, pk=pk)
        if kind.cancel_flag and row[kind.cancel_flag] and kind.cancelled:
            if still.update(status=kind.cancelled, **ended, **kind.fail_fields):
                swept.cancelled.append(pk)
            continue
        if kind.max_attempts is not None and attempts >= kind.max_attempts():
            with transaction.atomic():
                if still.update(
                    status=kind.failed,
                    **{kind.error_field: kind.gave_up(attempts)},
                    **ended,
                    **kind.fail_fields,
                ):
                    swept.failed.append(pk)
                    if kind.on_failed is not None:
                        kind.on_failed(pk)
            continue
        with transaction.atomic():
            if still.update(**_requeue(kind, now)):
                swept.requeued.append(pk)
                transaction.on_commit(lambda pk=pk: kind.enqueue(pk))
    return swept


def _requeue(kind: JobKind, now: datetime) -> dict[str, Any]:
    updates: dict[str, Any] = {"status": kind.queued}
    if kind.has("queued_at"):
        updates["queued_at"] = now
    if kind.claim_by == "lease":
        updates["lease"] = ""
    if kind.lost_counts:
        # A queued one waited too long (its message may be lost): that is an attempt too.
        # One stuck running had its attempt counted when it was claimed.
        updates["attempts"] = Case(
            When(status=kind.queued, then=F("attempts") + 1),
            default=F("attempts"),
            output_field=PositiveSmallIntegerField(),
        )
    return {**updates, **kind.requeue_fields}


# --- The registry -------------------------------------------------------------------------

_kinds: dict[str, JobKind] = {}
_chores: dict[str, Callable[[], Any]] = {}


def register(kind: JobKind) -> JobKind:
    """Make ``kind`` known; the sweeps worker sweeps it if it is ``periodic``."""
    _kinds[kind.name] = kind
    return kind


def register_chore(name: str, chore: Callable[[], Any]) -> None:
    """Periodic work that goes with the sweeps (resending lost messages of work that is no
    job, deleting what expired); what it returns is logged."""
    _chores[name] = chore


def kinds() -> list[JobKind]:
    return list(_kinds.values())


def sweep_all() -> dict[str, Any]:
    """Sweep every periodic kind, then run the chores: what each did, by name."""
    done: dict[str, Any] = {}
    for kind in _kinds.values():
        if kind.periodic:
            done[kind.name] = sweep(kind).as_dict()
    for name, chore in _chores.items():
        done[name] = chore()
    return done
