"""/healthz: is the database reachable, the broker reachable, and a worker answering?"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

WORKER_PING_TIMEOUT = 1.0


def _check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any failure means "down"; say which.
        return {"ok": False, "vendor": connection.vendor, "error": str(exc)}
    return {"ok": True, "vendor": connection.vendor}


def _check_broker_and_workers(app: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """One fresh connection for both checks: a pooled one could hide a broker that went away.
    The workers are asked which queues they take (one broadcast, like a ping), so the page
    shows which queue has lost its worker."""
    url = app.conf.broker_write_url or app.conf.broker_url
    transport = url.split("://", 1)[0]
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            broker = {"ok": True, "transport": transport}
            try:
                inspect = app.control.inspect(timeout=WORKER_PING_TIMEOUT, connection=conn)
                replies = inspect.active_queues() or {}
            except Exception as exc:  # noqa: BLE001
                return broker, {"ok": False, "workers": [], "queues": {}, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001
        broker = {"ok": False, "transport": transport, "error": str(exc)}
        return broker, {"ok": False, "workers": [], "queues": {}, "error": "broker unreachable"}
    names = sorted(replies)
    queues: dict[str, list[str]] = {queue: [] for queue in settings.WORKER_QUEUES}
    for name in names:
        for queue in replies[name] or []:
            queues.setdefault(queue["name"], []).append(name)
    # Every queue needs its worker ("sweeps" brings back the others' lost work); one without
    # is named, though the page stays 200 while any worker answers (the inference worker
    # may be on a GPU host that is off).
    missing = [queue for queue in settings.WORKER_QUEUES if not queues.get(queue)]
    workers: dict[str, Any] = {
        "ok": bool(names),
        "workers": names,
        "queues": queues,
        "missing": missing,
    }
    if not names:
        workers["error"] = f"no worker answered a ping within {WORKER_PING_TIMEOUT:g} s"
    return broker, workers


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    from hctqa.celery import app

    broker, workers = _check_broker_and_workers(app)
    checks = {"database": _check_database(), "broker": broker, "worker": workers}
    ok = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if ok else "unhealthy", **checks}, status=200 if ok else 503
    )
