"""The Celery app. Run a worker with: celery -A hctqa.celery worker"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import celeryd_init
from django.db import DatabaseError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hctqa.settings")

app = Celery("hctqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The options of a task that takes ids and may run again: a database error retries it, a
# little later each time; acks_late hands it to another worker if this one dies.
RETRY_ON_DATABASE_ERROR = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "max_retries": 5,
}


def queue_transport_options(
    queues: list[str] | str | None, options: dict[str, Any]
) -> dict[str, Any]:
    """The Redis transport options of a worker taking ``queues``: the messages it holds wait
    under keys of their own (``unacked:scoring``, …), so each is handed out again after the
    visibility timeout of its queue (CELERY_QUEUE_VISIBILITY_SECONDS) and not after another
    queue's. Kombu has one timeout per connection: a worker taking several queues uses the
    longest of theirs, so a task still running is never handed out twice."""
    from django.conf import settings

    timeouts = settings.CELERY_QUEUE_VISIBILITY_SECONDS
    if isinstance(queues, str):
        queues = queues.split(",")
    names = sorted({q.strip() for q in queues or [settings.CELERY_TASK_DEFAULT_QUEUE] if q.strip()})
    key = "unacked:" + "+".join(names)
    return {
        **options,
        "visibility_timeout": max(timeouts.get(q, max(timeouts.values())) for q in names),
        "unacked_key": key,
        "unacked_index_key": key + ":index",
        "unacked_mutex_key": key + ":mutex",
    }


@celeryd_init.connect
def _visibility_of_this_workers_queues(conf: Any, options: dict[str, Any], **_: Any) -> None:
    if str(conf.broker_url).startswith(("redis://", "rediss://")):
        conf.broker_transport_options = queue_transport_options(
            options.get("queues"), dict(conf.broker_transport_options or {})
        )
