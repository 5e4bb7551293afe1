"""Reads for releases: which questions a release holds, the releases and their downloads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from dataset.models import Question, QuestionStatus, Source, Table
from hctqa.core.release_records import archive_name
from hctqa.core.snapshots import question_set_sha256
from releases.models import (
    ACTIVE_BUILD_STATUSES,
    Edition,
    PushStatus,
    Release,
    ReleaseBuild,
    ReleasePush,
)
from releases.permissions import FULL_EDITION

User = AbstractBaseUser | AnonymousUser

# Fields a list of releases never needs (the full changelog can hold every id).
_HEAVY = ("changelog", "question_set_digests")


def release_tables() -> QuerySet[Table]:
    """The tables a release holds: every table but the demo tables (made up to try the
    platform, never the benchmark's)."""
    return Table.objects.exclude(source=Source.DEMO)


def release_questions() -> QuerySet[Question]:
    """The questions a release holds: every verified question (human-written, model-generated
    and verified by two people, synthetic) of a released table.

    Never the unverified, those awaiting adjudication or the dropped, nor the private
    gold-control pool (``Question.in_gold_pool``), nor a demo table's. This is the one place
    the selection is made.
    """
    return Question.objects.filter(status=QuestionStatus.VERIFIED, in_gold_pool=False).exclude(
        table__source=Source.DEMO
    )


def can_cut_release(user: User) -> bool:
    return user.has_perm("releases.add_release")


def can_download_full(user: User) -> bool:
    return user.has_perm("releases.download_full_release")


def editions_for(user: User) -> list[str]:
    return [Edition.PUBLIC, Edition.FULL] if can_download_full(user) else [Edition.PUBLIC]


def release_list() -> QuerySet[Release]:
    return Release.objects.defer(*_HEAVY)


def latest_release() -> Release | None:
    return release_list().order_by("-created_at", "-id").first()


def release_get(*, version: str) -> Release:
    release = Release.objects.filter(version=version).first()
    if release is None:
        raise Http404(f"No release {version}")
    return release


def release_folder(release: Release) -> Path:
    return Path(settings.RELEASES_ROOT) / release.version


@dataclass(frozen=True)
class Download:
    path: str
    size: int
    sha256: str
    group: str
    # Several files shown as one row (the table images): how many.
    files: int = 1


_GROUPS = (
    ("hf/images/", "Hugging Face folder"),
    ("hf/", "Hugging Face folder"),
    ("prompts/", "Prompts"),
    ("alpaca/", "LLaMA-Factory (alpaca)"),
    ("tables.zip", "Tables"),
    ("", "About the release"),
)


def _group(path: str) -> str:
    return next(label for prefix, label in _GROUPS if path.startswith(prefix))


@dataclass(frozen=True)
class Archive:
    """An edition's one download: its Hugging Face folder as a .tar.gz, and the file that
    ``sha256sum -c`` checks it with."""

    path: str
    size: int
    sha256: str
    checksum_path: str
    folder: str  # the one folder inside


def release_archives(*, release: Release, user: User) -> dict[str, Archive]:
    """Each edition's archive the user may download (releases cut before archives had none)."""
    files = {(f["edition"], f["path"]): f for f in release.files}
    out = {}
    for edition in editions_for(user):
        name = archive_name(release.version, edition)
        entry = files.get((edition, name))
        if entry is not None:
            out[edition] = Archive(
                name, entry["size"], entry["sha256"], f"{name}.sha256", name.removesuffix(".tar.gz")
            )
    return out


def download_name(*, release: Release, edition: str, path: str) -> str:
    """The file name a download is saved under: the archive and its checksum file keep
    theirs (so that ``sha256sum -c`` finds the archive), others are named after the release,
    the edition and their path."""
    archive = archive_name(release.version, edition)
    if path in (archive, f"{archive}.sha256"):
        return path
    return f"hctqa-{release.version}-{edition}-{path.replace('/', '-')}"


def release_downloads(*, release: Release, user: User) -> dict[str, list[Download]]:
    """The files of each edition the user may download, by edition, in a stable order,
    without the archive (``release_archives``). The table images are one row (they are many):
    ``hf/images/`` with their count and size."""
    out: dict[str, list[Download]] = {}
    for edition in editions_for(user):
        rows: list[Download] = []
        archive = archive_name(release.version, edition)
        images = [
            f
            for f in release.files
            if f["edition"] == edition and f["path"].startswith("hf/images/")
        ]
        for f in release.files:
            if f["edition"] != edition or f["path"].startswith(("hf/images/", archive)):
                continue
            rows.append(Download(f["path"], f["size"], f["sha256"], _group(f["path"])))
        if images:
            rows.append(
                Download(
                    "hf/images/",
                    sum(f["size"] for f in images),
                    "",
                    _group("hf/images/"),
                    files=len(images),
                )
            )
        order = [label for _, label in _GROUPS]
        rows.sort(key=lambda d: (order.index(d.group), d.path))
        out[edition] = rows
    return out


def release_file(
    *, release: Release, edition: str, path: str, user: User
) -> tuple[Path, dict[str, Any]]:
    """The file on disk and its record, for a download. Only files the release recorded are
    served, and the full edition only to those who may have it."""
    if edition not in Edition.values:
        raise Http404(f"No edition {edition!r}; choose public or full")
    if edition == Edition.FULL:
        FULL_EDITION.check(user)
    entry = next((f for f in release.files if f["edition"] == edition and f["path"] == path), None)
    if entry is None:
        raise Http404(f"Release {release.version} has no file {path} in its {edition} edition")
    return release_folder(release) / edition / path, entry


def release_for_question_set(
    *, split: str, data_scope: str, gold: Mapping[str, str]
) -> Release | None:
    """The newest release holding exactly these questions and gold answers for this split and
    data scope: what a leaderboard submission scored on ``gold`` was scored on. None when no
    release holds them (the dataset changed since the last release, or none was cut)."""
    if not gold:
        return None
    return release_for_digest(split=split, data_scope=data_scope, digest=question_set_sha256(gold))


def release_for_digest(*, split: str, data_scope: str, digest: str) -> Release | None:
    """The newest release whose questions for this split and data scope have this
    ``question_set_sha256``, or None."""
    key = f"{split}/{data_scope}"
    for release_id, digests in Release.objects.order_by("-created_at", "-id").values_list(
        "id", "question_set_digests"
    ):
        if digests.get(key) == digest:
            return Release.objects.defer(*_HEAVY).get(pk=release_id)
    return None


def active_build() -> ReleaseBuild | None:
    return ReleaseBuild.objects.filter(status__in=ACTIVE_BUILD_STATUSES).first()


def build_get(*, build_id: int) -> ReleaseBuild:
    build = ReleaseBuild.objects.select_related("release").filter(pk=build_id).first()
    if build is None:
        raise Http404(f"No release build {build_id}")
    return build


def recent_builds(*, limit: int = 10) -> QuerySet[ReleaseBuild]:
    return ReleaseBuild.objects.select_related("release", "created_by")[:limit]


@dataclass(frozen=True)
class ChangeRow:
    label: str
    count: int
    ids: list[str]
    more: int  # how many ids the preview leaves out


_CHANGE_LABELS = {
    "tables_added": "tables added",
    "tables_removed": "tables removed",
    "questions_added": "questions added",
    "questions_removed": "questions removed",
    "gold_changed": "gold answers changed",
    "splits_changed": "tables changed split",
}


def changelog_rows(release: Release) -> list[ChangeRow]:
    """The changelog preview as rows for the page: a label, the count and the first ids."""
    preview = release.changelog_preview
    counts = preview.get("counts", {})
    rows = []
    for kind, label in _CHANGE_LABELS.items():
        items = preview.get(kind, [])
        if kind == "splits_changed":
            ids = [f"{c['table_id']} ({c['before']} → {c['after']})" for c in items]
        else:
            ids = list(items)
        count = counts.get(kind, 0)
        rows.append(ChangeRow(label, count, ids, max(0, count - len(ids))))
    return rows


@dataclass(frozen=True)
class HubRepo:
    repo: str
    url: str  # the release's tag there


def releases_on_hub(releases: list[Release]) -> dict[int, list[HubRepo]]:
    """Where each release's public edition was published on the Hub (one query for all)."""
    out: dict[int, list[HubRepo]] = {r.pk: [] for r in releases}
    pushes = (
        ReleasePush.objects.filter(
            release__in=releases, edition=Edition.PUBLIC, status=PushStatus.DONE
        )
        .order_by("repo")
        .values_list("release_id", "release__version", "repo")
        .distinct()
    )
    for release_id, version, repo in pushes:
        url = f"{settings.HF_ENDPOINT}/datasets/{repo}/tree/{version}"
        out[release_id].append(HubRepo(repo, url))
    return out
