"""The Celery app. Run a worker with: celery -A hctqa.celery worker"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hctqa.settings")

app = Celery("hctqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
