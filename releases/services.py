"""Writes for releases: starting a build, running it, and clearing builds whose worker died;
publishing an edition to the Hugging Face Hub.

The same functions back the web form, the API, ``manage.py cut_release`` (and
``push_release``), the admin action and the Celery tasks.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from hctqa.core.snapshots import CHANGE_KINDS, VersionError, check_version
from plumbing import jobs
from plumbing.commit import platform_commit
from plumbing.errors import ApplicationError
from releases import hub, selectors
from releases.build import ReleaseMeta, read_snapshot, write_release
from releases.jobs import RELEASE_BUILD, RELEASE_PUSH, enqueue_build, enqueue_push
from releases.models import (
    ACTIVE_BUILD_STATUSES,
    ACTIVE_PUSH_STATUSES,
    BuildStatus,
    Edition,
    PushStatus,
    Release,
    ReleaseBuild,
    ReleasePush,
)
from releases.permissions import CUTTING, PUBLISHING

logger = logging.getLogger(__name__)

TITLE_MAX = 200
NOTES_MAX = 20_000
_PREVIEW = 20


def _checked_input(*, version: str, title: str, notes: str) -> tuple[str, str, str]:
    try:
        version = check_version(version)
    except VersionError as exc:
        raise ApplicationError(str(exc), field="version") from None
    title = " ".join(title.split())
    if not title:
        raise ApplicationError("Give the release a title", field="title")
    if len(title) > TITLE_MAX:
        raise ApplicationError(f"A title has at most {TITLE_MAX} characters", field="title")
    notes = notes.strip().replace("\r\n", "\n")
    if len(notes) > NOTES_MAX:
        raise ApplicationError(f"Notes have at most {NOTES_MAX:,} characters", field="notes")
    return version, title, notes


def _record_work(model: Any, *, user: Any | None, refused: str, **fields: Any) -> Any:
    """A queued build or push. The database allows one at a time (a unique constraint on the
    active ones): when another request got there between the checks and this insert, the
    request is ``refused``."""
    try:
        with transaction.atomic():
            return model.objects.create(
                created_by=user if user is not None and user.is_authenticated else None, **fields
            )
    except IntegrityError:
        raise ApplicationError(refused) from None


def release_build_start(
    *, user: Any | None, version: str, title: str, notes: str = "", enqueue: bool = True
) -> ReleaseBuild:
    """Check the request and record a queued build; with ``enqueue``, the Celery task builds it.

    Refused: a version that is taken, a build while another is queued or running, and a
    release with no questions. Nothing is recorded when it is refused. ``user`` None is the
    server's operator, running ``manage.py cut_release``.
    """
    if user is not None:
        CUTTING.check(user)
    version, title, notes = _checked_input(version=version, title=title, notes=notes)
    release_builds_expire_stale()
    with transaction.atomic():
        if Release.objects.filter(version=version).exists():
            raise ApplicationError(
                f"Release {version} exists, and a release never changes: give this one another "
                "version",
                field="version",
            )
        running = selectors.active_build()
        if running is not None:
            raise ApplicationError(
                f"Release {running.version} is being built ({running.progress}%); cut this one "
                "when it has finished"
            )
        if not selectors.release_questions().exists():
            raise ApplicationError(
                "Nothing to release: the dataset has no verified questions", field="version"
            )
        build = _record_work(
            ReleaseBuild,
            user=user,
            refused="Another release is being built; cut this one when it has finished",
            version=version,
            title=title,
            notes=notes,
        )
        if enqueue:
            enqueue_build(build.pk)
    return build


def release_builds_expire_stale() -> list[int]:
    """Fail the builds whose worker stopped (no heartbeat for RELEASE_BUILD_STALE_SECONDS;
    queued ones count from when they were queued) and remove what they left half-written."""
    return jobs.sweep(RELEASE_BUILD).failed


def build_leftovers_remove(build: ReleaseBuild) -> None:
    """The folders a build that failed left half-written."""
    root = Path(settings.RELEASES_ROOT)
    for folder in root.glob(f".build-{build.pk}-*"):
        shutil.rmtree(folder, ignore_errors=True)
    final = root / build.version
    if final.exists() and not Release.objects.filter(version=build.version).exists():
        # Moved into place, then the worker died before the release was recorded.
        shutil.rmtree(final, ignore_errors=True)


Report = Callable[[int, str], None]


def release_build_run(*, build_id: int, report: Report | None = None) -> Release | None:
    """Build a queued release (or one whose worker died). Safe to run twice: only the run that
    claims the build does the work. Returns the release, or None when there was nothing to
    claim; raises ``ApplicationError`` after recording why the build failed. A failure at any
    point leaves no release row and no folder."""
    if jobs.claim(RELEASE_BUILD, build_id) is None:
        return None
    build = ReleaseBuild.objects.get(pk=build_id)
    started = time.monotonic()

    def progress(percent: int, stage: str) -> None:
        ReleaseBuild.objects.filter(pk=build_id, status=BuildStatus.BUILDING).update(
            progress=percent, stage=stage[:200], heartbeat_at=timezone.now()
        )
        if report is not None:
            report(percent, stage)

    try:
        release = _build(build, progress=progress, started=started)
    except ApplicationError as exc:
        _fail(build_id, exc.message)
        raise
    except Exception as exc:
        logger.exception("building release %s failed", build.version)
        _fail(build_id, f"The build failed because of an internal error ({type(exc).__name__})")
        raise
    return release


def _fail(build_id: int, reason: str) -> None:
    ReleaseBuild.objects.filter(pk=build_id, status__in=ACTIVE_BUILD_STATUSES).update(
        status=BuildStatus.FAILED, active=None, error=reason, finished_at=timezone.now()
    )


def _build(build: ReleaseBuild, *, progress: Report, started: float) -> Release:
    root = Path(settings.RELEASES_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    final = root / build.version
    if build.attempts > 1:
        build_leftovers_remove(build)  # what an earlier attempt's worker left when it died
    if Release.objects.filter(version=build.version).exists():
        raise ApplicationError(f"Release {build.version} exists already")
    if final.exists():
        raise ApplicationError(
            f"The folder {final} exists but no release {build.version} is recorded; move it out of "
            "RELEASES_ROOT, then cut the release again"
        )
    previous = selectors.latest_release()
    snapshot = None
    if previous is not None:
        snapshot = read_snapshot(
            selectors.release_folder(previous) / "snapshot.json.gz", previous.snapshot_sha256
        )
    created = timezone.now()
    meta = ReleaseMeta(
        version=build.version,
        title=build.title,
        notes=build.notes,
        created=created,
        commit=platform_commit(),
        previous_version=previous.version if previous else None,
    )
    work = Path(tempfile.mkdtemp(prefix=f".build-{build.pk}-", dir=root))
    try:
        result = write_release(folder=work, meta=meta, previous=snapshot, report=progress)
        progress(98, "Moving the release into place")
        work.chmod(0o755)
        # Atomic on one file system; the version folder appears whole or not at all.
        work.rename(final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    try:
        with transaction.atomic():
            release = Release.objects.create(
                version=build.version,
                title=build.title,
                notes=build.notes,
                created_by_id=build.created_by_id,
                created_at=created,
                commit=meta.commit,
                previous=previous,
                counts=result.counts,
                changelog=result.changelog.as_json(),
                changelog_preview=result.changelog.as_json(limit=_PREVIEW),
                question_set_digests=result.question_set_digests,
                files=result.files,
                snapshot_sha256=result.snapshot_sha256,
                build_seconds=round(time.monotonic() - started, 2),
            )
            updated = ReleaseBuild.objects.filter(pk=build.pk, status=BuildStatus.BUILDING).update(
                status=BuildStatus.DONE,
                active=None,
                progress=100,
                stage="Done",
                release=release,
                finished_at=timezone.now(),
            )
            if not updated:
                raise ApplicationError("The build was stopped while it ran; cut the release again")
    except BaseException:
        shutil.rmtree(final, ignore_errors=True)
        raise
    return release


def changelog_counts(release: Release) -> dict[str, int]:
    counts = release.changelog_preview.get("counts", {})
    return {kind: counts.get(kind, 0) for kind in CHANGE_KINDS}


# --- Publishing to the Hugging Face Hub -----------------------------------------------------

HF_TOKEN_VARIABLE = "HF_TOKEN"  # noqa: S105 - the variable's name, not a token
FULL_EDITION_REFUSED = (
    "The full edition holds the test split's gold answers, SQL and relational tables: "
    "published, it hands the test gold to whoever can read the repository, and no score on "
    "the test split could be trusted again. Push the public edition, or allow the full "
    "edition explicitly (push_release --allow-full-edition, or the admin action's box) to "
    "push it to a private repository"
)


def _hub_token() -> str:
    token = os.environ.get(HF_TOKEN_VARIABLE, "").strip()
    if not token:
        raise ApplicationError(
            f"No Hugging Face token: set {HF_TOKEN_VARIABLE} in the environment of the process "
            "that pushes (the Celery worker, for the admin action); it is read when pushing and "
            "never stored"
        )
    return token


def _hub_files(release: Release, edition: str, *, verify: bool) -> list[tuple[str, Path]]:
    """The edition's Hugging Face folder as (path in the repository, file here), each file
    present and, with ``verify``, as it was released (its SHA-256)."""
    folder = selectors.release_folder(release) / edition
    out = []
    for entry in release.files:
        if entry["edition"] != edition or not entry["path"].startswith("hf/"):
            continue
        local = folder / entry["path"]
        if not local.is_file():
            raise ApplicationError(
                f"Release {release.version}'s file {edition}/{entry['path']} is missing on this "
                "server; its folder must stay where it was cut"
            )
        if verify:
            with open(local, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
            if digest != entry["sha256"]:
                raise ApplicationError(
                    f"Release {release.version}'s file {edition}/{entry['path']} was changed "
                    "after the release was cut; it is not published"
                )
        out.append((entry["path"].removeprefix("hf/"), local))
    if not out:
        raise ApplicationError(f"Release {release.version} has no {edition} edition to push")
    return out


def release_push_start(
    *,
    user: Any | None,
    version: str,
    repo: str,
    edition: str = Edition.PUBLIC,
    allow_full_edition: bool = False,
    enqueue: bool = True,
) -> ReleasePush:
    """Check the request and record a queued push; with ``enqueue``, the Celery task pushes it.

    Refused, with nothing recorded: an unknown or unbuilt release, an unknown edition, the
    full edition without ``allow_full_edition``, a repository name the Hub would refuse, a
    push of the same edition to the same repository under way, and (without ``enqueue``: this
    process pushes) no token. ``user`` None is the server's operator (``push_release``)."""
    if user is not None:
        PUBLISHING.check(user)
    version = version.strip()
    release = Release.objects.filter(version=version).first()
    if release is None:
        if ReleaseBuild.objects.filter(version=version, status__in=ACTIVE_BUILD_STATUSES).exists():
            raise ApplicationError(
                f"Release {version} is still being built; push it when it is ready",
                field="version",
            )
        raise ApplicationError(
            f"No release {version}: cut it first (manage.py cut_release {version})",
            field="version",
        )
    if edition not in Edition.values:
        raise ApplicationError(f"No edition {edition!r}; choose public or full", field="edition")
    if edition == Edition.FULL and not allow_full_edition:
        raise ApplicationError(FULL_EDITION_REFUSED, field="edition")
    repo = hub.check_repo_id(repo)
    _hub_files(release, edition, verify=False)
    if not enqueue:
        _hub_token()
    with transaction.atomic():
        # A push whose worker went away no longer holds its repository.
        jobs.sweep(RELEASE_PUSH)
        push = _record_work(
            ReleasePush,
            user=user,
            refused=f"Release {version}'s {edition} edition is being pushed to {repo}; wait "
            "for that push to finish",
            release=release,
            edition=edition,
            repo=repo,
        )
        if enqueue:
            enqueue_push(push.pk)
    return push


def release_push_run(
    *, push_id: int, report: Callable[[str], None] | None = None
) -> ReleasePush | None:
    """Push a queued push (or one whose worker died). Only the run that claims it pushes;
    None when there was nothing to claim. Raises ``ApplicationError`` after recording why the
    push failed."""
    if jobs.claim(RELEASE_PUSH, push_id) is None:
        return None
    push = ReleasePush.objects.select_related("release").get(pk=push_id)
    release = push.release

    def progress(stage: str) -> None:
        ReleasePush.objects.filter(pk=push_id, status=PushStatus.PUSHING).update(
            stage=stage[:200], heartbeat_at=timezone.now()
        )
        if report is not None:
            report(stage)

    try:
        token = _hub_token()
        progress("Checking the files against the release")
        files = _hub_files(release, push.edition, verify=True)
        commit = hub.publish(
            repo_id=push.repo,
            files=files,
            tag=release.version,
            message=f"HCT-QA {release.version} ({push.edition} edition)",
            description=f"{release.title}\n\n{release.notes}".strip(),
            token=token,
            endpoint=settings.HF_ENDPOINT,
            timeout=settings.HF_HUB_TIMEOUT,
            private=push.edition == Edition.FULL,
            report=progress,
        )
    except ApplicationError as exc:
        _push_failed(push_id, exc.message)
        raise
    except Exception as exc:
        logger.exception("pushing release %s to %s failed", release.version, push.repo)
        _push_failed(
            push_id, f"The push failed because of an internal error ({type(exc).__name__})"
        )
        raise
    ReleasePush.objects.filter(pk=push_id, status=PushStatus.PUSHING).update(
        status=PushStatus.DONE,
        stage="Done",
        commit_url=commit.url[:500],
        commit_oid=commit.oid,
        files=commit.files,
        removed=commit.removed,
        finished_at=timezone.now(),
    )
    push.refresh_from_db()
    return push


def _push_failed(push_id: int, reason: str) -> None:
    ReleasePush.objects.filter(pk=push_id, status__in=ACTIVE_PUSH_STATUSES).update(
        status=PushStatus.FAILED, error=reason, finished_at=timezone.now()
    )
