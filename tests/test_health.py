from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import celery_conf, filesystem_broker_options

pytestmark = pytest.mark.django_db


def test_without_a_worker_it_reports_unhealthy(client: Client, tmp_path: Path) -> None:
    from hctqa.celery import app

    options = app.conf.broker_transport_options
    if app.conf.broker_url.startswith("filesystem"):
        # An empty broker of its own, so a worker elsewhere on the machine cannot answer.
        options = filesystem_broker_options(tmp_path / "broker")
    with celery_conf(broker_transport_options=options):
        response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "unhealthy"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    assert body["worker"] == {
        "ok": False,
        "workers": [],
        "queues": {
            "default": [],
            "scoring": [],
            "inference": [],
            "ingest": [],
            "sweeps": [],
            "builds": [],
        },
        "missing": ["default", "scoring", "inference", "ingest", "sweeps", "builds"],
        "error": "no worker answered a ping within 1 s",
    }


@pytest.mark.worker
def test_with_a_real_worker_process_it_is_healthy(client: Client, celery_worker_process) -> None:
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["worker"]["ok"] is True and len(body["worker"]["workers"]) == 1
    # Which worker takes which queue: the test worker takes all six.
    (name,) = body["worker"]["workers"]
    assert body["worker"]["queues"] == {
        "default": [name],
        "scoring": [name],
        "inference": [name],
        "ingest": [name],
        "sweeps": [name],
        "builds": [name],
    }
    assert body["worker"]["missing"] == []


def test_an_unreachable_broker_is_reported(client: Client) -> None:
    # broker_write_url, not broker_url: Celery lets $CELERY_BROKER_URL override the latter.
    # No transport class: settings name one only for the filesystem broker.
    with celery_conf(broker_write_url="redis://127.0.0.1:9/0", broker_transport=None):
        response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["broker"]["ok"] is False
    assert body["worker"]["error"] == "broker unreachable"
