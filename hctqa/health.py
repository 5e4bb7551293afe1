"""/healthz: is the database reachable, the broker reachable, and a worker answering?"""

from __future__ import annotations

from typing import Any

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
    """One fresh connection for both checks: a pooled one could hide a broker that went away."""
    url = app.conf.broker_write_url or app.conf.broker_url
    transport = url.split("://", 1)[0]
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            broker = {"ok": True, "transport": transport}
            try:
                replies = app.control.ping(timeout=WORKER_PING_TIMEOUT, connection=conn) or []
            except Exception as exc:  # noqa: BLE001
                return broker, {"ok": False, "workers": [], "error": str(exc)}
    except Exception as exc:  # noqa: BLE001
        broker = {"ok": False, "transport": transport, "error": str(exc)}
        return broker, {"ok": False, "workers": [], "error": "broker unreachable"}
    names = sorted(name for reply in replies for name in reply)
    workers: dict[str, Any] = {"ok": bool(names), "workers": names}
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
