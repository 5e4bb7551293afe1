"""Logging filters."""

from __future__ import annotations

import ast
import logging
from collections.abc import Mapping
from typing import Any


class ExpectedRefusals(logging.Filter):
    """A 403 is the platform working as meant (a researcher opening an annotation tool): one
    INFO line with the path, not a WARNING with the traceback of the PermissionDenied."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
            record.levelno = logging.INFO
            record.levelname = "INFO"
        return True


class SuspiciousRequests(logging.Filter):
    """A request Django refuses as suspicious (a Host header not in ALLOWED_HOSTS, a spoofed
    one, too many fields) is anyone's to send: one WARNING line saying what it was, not the
    traceback of the exception, which told nothing more and filled the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.security."):
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
            if record.levelno > logging.WARNING:
                record.levelno = logging.WARNING
                record.levelname = "WARNING"
        return True


class QuietSweeps(logging.Filter):
    """Beat's periodic tasks (the recovery sweeps, the lease and email sweeps) run every few
    seconds: the worker logs no line for one that found nothing, and one line (Celery's
    "succeeded" with what it did) for one that did something; never the "received" line,
    nor beat its "sending due task" line."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        from django.conf import settings

        self.periodic = frozenset(e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values())

    def filter(self, record: logging.LogRecord) -> bool:
        context = record.args
        if record.name == "celery.beat":
            # "Scheduler: Sending due task <entry> (<task>)": one line per sweep, done or not.
            task = context[-1] if isinstance(context, tuple) and context else None
            return task not in self.periodic
        if not isinstance(context, Mapping) or context.get("name") not in self.periodic:
            return True
        if "return_value" not in context:
            return False  # "received", or another line of the task's run
        return did_something(context["return_value"])


def did_something(return_value: Any) -> bool:
    """Whether a periodic task's result (as Celery logs it, a repr) says it did anything:
    some count above zero or some id in a list. Anything unreadable counts as something."""
    try:
        value = ast.literal_eval(return_value) if isinstance(return_value, str) else return_value
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return True
    if isinstance(value, Mapping):
        return any(did_something(v) for v in value.values())
    if isinstance(value, list | tuple | set):
        return bool(value)
    return bool(value)
