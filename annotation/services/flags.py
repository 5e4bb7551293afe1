"""Flags: a problem seen on a table or a question, raised by anyone who annotates and resolved
by an adjudicator."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import permissions as rules
from annotation.models import Flag, FlagReason
from dataset.models import Question, Table
from plumbing.errors import ApplicationError

NOTE_LIMIT = 2000


def flag_raise(
    *, user: Any, table: Table, question: Question | None, reason: str, note: str
) -> Flag:
    """Raise a flag. The same open flag raised again (a double click) is the one returned."""
    rules.FLAGGING.check(user)
    if reason not in FlagReason.values:
        raise ApplicationError(
            f"Choose why: {', '.join(FlagReason.labels).lower()}", field="reason"
        )
    note = note.strip()
    if len(note) > NOTE_LIMIT:
        raise ApplicationError(f"A note is at most {NOTE_LIMIT:,} characters", field="note")
    if reason == FlagReason.OTHER and not note:
        raise ApplicationError("Say what is wrong in the note", field="note")
    if question is not None and question.table_id != table.pk:
        raise ApplicationError("That question is not on this table", field="question")
    open_flag = Flag.objects.filter(
        table=table, question=question, reason=reason, raised_by=user, resolved_at__isnull=True
    ).first()
    if open_flag is not None:
        return open_flag
    try:
        with transaction.atomic():
            return Flag.objects.create(
                table=table, question=question, reason=reason, note=note, raised_by=user
            )
    except IntegrityError:  # the same flag, raised at the same moment from another tab
        return Flag.objects.get(
            table=table, question=question, reason=reason, raised_by=user, resolved_at__isnull=True
        )


@transaction.atomic
def flag_resolve(*, adjudicator: Any, flag_id: int, resolution: str) -> Flag:
    """Close a flag, saying what was done. Resolving it again changes nothing."""
    rules.RESOLVING_FLAGS.check(adjudicator)
    flag = Flag.objects.select_for_update().filter(pk=flag_id).first()
    if flag is None:
        raise ApplicationError("There is no such flag", field="flag")
    if flag.resolved_at is not None:
        return flag
    resolution = resolution.strip()
    if not resolution:
        raise ApplicationError("Say what was done about it", field="resolution")
    if len(resolution) > NOTE_LIMIT:
        raise ApplicationError(f"At most {NOTE_LIMIT:,} characters", field="resolution")
    flag.resolved_by = adjudicator
    flag.resolved_at = timezone.now()
    flag.resolution = resolution
    flag.save(update_fields=["resolved_by", "resolved_at", "resolution"])
    return flag
