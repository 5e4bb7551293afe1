"""The Celery app. Run a worker with: celery -A hctqa.celery worker"""

from __future__ import annotations

import os

from celery import Celery
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
