"""Synthetic generation runs: the benchmark's generator (hctqa/core/synthgen) makes whole
families, or a number of tables having chosen properties, and the platform imports them
through the same reader as ``import_synthetic``. Nothing is imported unless every table is
generated."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation import permissions as rules
from annotation.jobs import SYNTHETIC_RUN, enqueue_synthetic
from annotation.models import SyntheticRun
from annotation.services import runs
from dataset.services import ImportSummary, release_import
from hctqa.core import taxonomy
from hctqa.core.release import ReleaseError, ReleaseTable, read_synthetic_files
from hctqa.core.synthgen.params import Params, ParamsError, read_params
from hctqa.core.synthgen.pipeline import (
    FILE_KINDS,
    RELEASE_NONSEM_OFFSETS,
    Generation,
    TargetError,
    generate,
    generate_targeted,
)
from plumbing import jobs
from plumbing.errors import ApplicationError, ConflictError
from plumbing.jobs import RunStatus

MAX_TARGET_TABLES = 5000


def synthetic_params(folder: str | Path | None = None) -> Params:
    """The parameter files from ``folder`` or ``SYNTHETIC_PARAMS_DIR``."""
    folder = folder or settings.SYNTHETIC_PARAMS_DIR
    if not folder:
        raise ApplicationError(
            "SYNTHETIC_PARAMS_DIR is not set: the generator has no parameter files"
        )
    try:
        return read_params(folder)
    except ParamsError as exc:
        raise ApplicationError(str(exc)) from None


def synthetic_generation_tables(generation: Generation) -> list[ReleaseTable]:
    """The generated tables as import records, read exactly as import_synthetic reads files."""
    files = {t.file_name(k): t.file_bytes(k) for t in generation.tables for k in FILE_KINDS}
    try:
        return read_synthetic_files(files, lambda data: data, "generated files")
    except ReleaseError as exc:
        raise ApplicationError(f"A generated table could not be read back: {exc}") from None


def synthetic_generate(
    *,
    params: Params,
    families: Sequence[str] = (),
    required_properties: Sequence[str] = (),
    table_count: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    workers: int = 1,
) -> Generation:
    """Run the generator: whole families, or ``table_count`` tables with the properties.
    ``workers`` > 1 draws the families' questions and writes the nonsensical files in that
    many processes (the output is the same)."""
    try:
        if table_count is not None:
            return generate_targeted(params, required_properties, table_count, progress=progress)
        return generate(
            params,
            list(families) or None,
            progress=progress,
            nonsense_offsets=RELEASE_NONSEM_OFFSETS,
        )
    except (ParamsError, TargetError) as exc:
        raise ApplicationError(str(exc)) from None


def synthetic_run_create(
    *,
    user: Any,
    families: Sequence[str] = (),
    required_properties: Sequence[str] = (),
    table_count: int | None = None,
) -> SyntheticRun:
    rules.SYNTHETIC.check(user)
    params = synthetic_params()
    known = {f.prefix for f in params.families}
    unknown = [f for f in families if f not in known]
    if unknown:
        raise ApplicationError(f"Unknown families: {', '.join(unknown)}")
    codes = set(taxonomy.TABLE_PROPERTIES.empty())
    bad = [p for p in required_properties if p not in codes]
    if bad:
        raise ApplicationError(f"Unknown table properties: {', '.join(bad)}")
    if table_count is not None:
        if not 1 <= table_count <= MAX_TARGET_TABLES:
            raise ApplicationError(f"Ask for between 1 and {MAX_TARGET_TABLES} tables")
        if not required_properties:
            raise ApplicationError("Choose at least one table property for a targeted run")
    request = {
        "families": sorted(set(families)),
        "required_properties": sorted(set(required_properties)),
        "table_count": table_count,
    }
    digest = runs.fingerprint(request)
    with runs.refusing_duplicates(SyntheticRun, digest, "synthetic run"), transaction.atomic():
        run = SyntheticRun.objects.create(
            created_by=user,
            families=list(families),
            required_properties=list(required_properties),
            table_count=table_count,
            fingerprint=digest,
        )
        transaction.on_commit(lambda: enqueue_synthetic(run.pk))
    return run


def synthetic_run_execute(*, run_id: int) -> str:
    """Generate and import one run. Safe to run twice: a finished run is left alone and the
    import changes nothing the second time."""
    # A worker that died mid-run leaves it running with an old heartbeat: taken over.
    if not jobs.claim(SYNTHETIC_RUN, run_id):
        return "not claimable"
    run = SyntheticRun.objects.get(pk=run_id)
    last: list[Any] = [0.0, ""]  # when progress was last recorded, and its stage

    def progress(stage: str, done: int, total: int) -> None:
        # At most once a second within a stage; a new stage at once (the import that follows
        # the last table must not show as "tables 10500 of 10500" while it runs).
        now = time.monotonic()
        if stage == last[1] and now - last[0] < 1 and done < total:
            return
        last[0], last[1] = now, stage
        SyntheticRun.objects.filter(pk=run_id).update(
            stage=stage, done=done, total=total, heartbeat_at=timezone.now()
        )

    try:
        generation = synthetic_generate(
            params=synthetic_params(),
            families=run.families,
            required_properties=run.required_properties,
            table_count=run.table_count,
            progress=progress,
        )
        tables = synthetic_generation_tables(generation)
        progress("import", 0, len(tables))
        summary = release_import(tables=tables)
    except ApplicationError as exc:
        SyntheticRun.objects.filter(pk=run_id).update(
            status=RunStatus.FAILED, error=exc.message, finished_at=timezone.now()
        )
        return "failed"
    SyntheticRun.objects.filter(pk=run_id).update(
        status=RunStatus.DONE,
        stage="import",
        done=len(tables),
        total=len(tables),
        tables_created=summary.tables_created,
        questions_created=summary.questions_created,
        summary=generation_summary(generation, summary),
        finished_at=timezone.now(),
    )
    return "done"


def synthetic_run_cancel(*, user: Any, run_id: int) -> None:
    rules.SYNTHETIC.check(user)
    if not SyntheticRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now()
    ):
        raise ConflictError("Only a queued run can be cancelled")


def generation_summary(generation: Generation, imported: ImportSummary | None = None) -> dict:
    per_family = {
        family: dict(sorted(layouts.items()))
        for family, layouts in generation.tables_per_family_and_layout().items()
    }
    out: dict[str, Any] = {
        "tables": len(generation.tables),
        "questions": generation.question_count,
        "tables_per_family": {f: sum(v.values()) for f, v in per_family.items()},
        "tables_per_family_and_layout": per_family,
        "questions_per_template": {
            str(k): v for k, v in sorted(generation.questions_per_template().items())
        },
    }
    if imported is not None:
        out["imported"] = {
            "tables_created": imported.tables_created,
            "tables_updated": imported.tables_updated,
            "questions_created": imported.questions_created,
        }
    return out
