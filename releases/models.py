"""Dataset releases: frozen, named snapshots of the benchmark, and the builds that make them.

A ``Release`` row exists only for a release whose files were all written: its folder under
``RELEASES_ROOT`` and this row are made together, and neither changes afterwards. The work of
making one is a ``ReleaseBuild``, which records progress and, when a build fails, why.
Publishing an edition to the Hugging Face Hub is a ``ReleasePush``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from hctqa.core.outcomes import Outcome
from plumbing.jobs import Job


class Edition(models.TextChoices):
    PUBLIC = "public", "Public"
    FULL = "full", "Full"


class Release(models.Model):
    """One version of the dataset, in two editions: ``public`` (the test split's gold answers
    withheld) and ``full`` (everything, for admins).

    ``files`` lists every file of both editions, ``{"edition", "path", "size", "sha256"}``;
    the download view serves only these. ``question_set_digests`` names, for each split and
    data scope the leaderboard scores (``"test/real"``, …), the set of question ids and gold
    answers this release holds (``hctqa.core.snapshots.question_set_sha256``).
    """

    version = models.CharField(max_length=40, unique=True)
    title = models.CharField(max_length=200)
    notes = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField()
    commit = models.CharField(max_length=64, blank=True, help_text="The platform's git commit.")
    previous = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The release the changelog is computed against.",
    )
    counts = models.JSONField(default=dict)
    changelog = models.JSONField(default=dict, help_text="Every change, with ids.")
    changelog_preview = models.JSONField(
        default=dict, help_text="The changelog's counts and its first few ids of each kind."
    )
    question_set_digests = models.JSONField(default=dict)
    files = models.JSONField(default=list)
    snapshot_sha256 = models.CharField(max_length=64)
    build_seconds = models.FloatField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        get_latest_by = ["created_at", "id"]
        permissions = [("download_full_release", "Can download the full edition of releases")]
        constraints = [
            models.CheckConstraint(condition=~Q(version=""), name="release_version_not_empty"),
        ]

    def __str__(self) -> str:
        return f"release {self.version}"

    def get_absolute_url(self) -> str:
        return reverse("releases:detail", args=[self.version])


class _Work(Job):
    """What a build and a push record of their work, besides their status: the lifecycle
    (plumbing.jobs.Job), whose claims are told apart by attempt number and whose lost
    messages count from ``created_at``, and the stage it is at."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    stage = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    lease = None
    queued_at = None

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class BuildStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    BUILDING = "building", "Building"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


ACTIVE_BUILD_STATUSES = (BuildStatus.QUEUED, BuildStatus.BUILDING)


class ReleaseBuild(Outcome, _Work):
    """Cutting one release: queued, building (with progress and a heartbeat), then done (with
    its release) or failed (with the reason, and nothing left behind)."""

    version = models.CharField(max_length=40)
    title = models.CharField(max_length=200)
    notes = models.TextField(blank=True)
    status = models.CharField(
        max_length=8, choices=BuildStatus.choices, default=BuildStatus.QUEUED, db_index=True
    )
    # True while queued or building, NULL afterwards: unique, so the database itself allows
    # one build at a time (NULLs never collide).
    active = models.BooleanField(null=True, default=True, unique=True, editable=False)
    release = models.OneToOneField(
        Release, null=True, blank=True, on_delete=models.PROTECT, related_name="build"
    )

    class Meta(_Work.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=BuildStatus.values), name="release_build_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ACTIVE_BUILD_STATUSES, active=True)
                | (~Q(status__in=ACTIVE_BUILD_STATUSES) & Q(active__isnull=True)),
                name="release_build_active_matches_status",
            ),
            models.CheckConstraint(
                condition=~Q(status=BuildStatus.DONE) | Q(release__isnull=False),
                name="release_build_done_has_release",
            ),
            models.CheckConstraint(condition=Q(progress__lte=100), name="release_build_percent"),
        ]

    def __str__(self) -> str:
        return f"build of release {self.version} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("releases:build", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_BUILD_STATUSES


class PushStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PUSHING = "pushing", "Pushing"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


ACTIVE_PUSH_STATUSES = (PushStatus.QUEUED, PushStatus.PUSHING)


class ReleasePush(Outcome, _Work):
    """Publishing one edition of a release to a dataset repository on the Hugging Face Hub:
    its Hugging Face folder as one commit, tagged with the version. Queued, pushing (with its
    stage), then done (with the commit) or failed (with the reason). The token is never
    recorded."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="pushes")
    edition = models.CharField(max_length=8, choices=Edition.choices, default=Edition.PUBLIC)
    repo = models.CharField(max_length=200, help_text="The Hub's dataset repository, ORG/NAME.")
    status = models.CharField(
        max_length=8, choices=PushStatus.choices, default=PushStatus.QUEUED, db_index=True
    )
    commit_url = models.CharField(max_length=500, blank=True)
    commit_oid = models.CharField(max_length=64, blank=True)
    files = models.PositiveIntegerField(default=0, help_text="Files in the commit.")
    removed = models.PositiveIntegerField(
        default=0, help_text="Files of the repository's previous state the commit removed."
    )
    progress = None  # its stage says how far it is

    class Meta(_Work.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=PushStatus.values), name="release_push_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(edition__in=Edition.values), name="release_push_edition_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=PushStatus.DONE) | ~Q(commit_oid=""),
                name="release_push_done_has_commit",
            ),
            # One push of an edition to a repository at a time.
            models.UniqueConstraint(
                fields=["release", "edition", "repo"],
                condition=Q(status__in=ACTIVE_PUSH_STATUSES),
                name="release_push_one_active",
            ),
        ]

    def __str__(self) -> str:
        return f"push of release {self.release.version} ({self.edition}) to {self.repo}"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_PUSH_STATUSES
