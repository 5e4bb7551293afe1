"""Reads for the synthetic generator's pages."""

from __future__ import annotations

from annotation.models import SyntheticRun


def synthetic_runs_recent(*, limit: int = 20) -> list[SyntheticRun]:
    return list(SyntheticRun.objects.select_related("created_by").order_by("-pk")[:limit])


def synthetic_run_get(*, run_id: int) -> SyntheticRun | None:
    return SyntheticRun.objects.select_related("created_by").filter(pk=run_id).first()
