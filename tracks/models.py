"""The items of the tracks beside QA, the ground-truth sets admins import, and the builds that
make the items from the dataset.

A ``TrackItem`` is one item of one track (``hctqa.core.tracks.shared.Item`` in the
database): what a system is given (``inputs``, with the files they name kept privately under
``TRACK_FILES_ROOT``), its gold (exactly a perfect prediction) and what else the scorer reads
(``reference``), hidden like gold for the test split. Its split is its table's (the QA
split), so no track's public gold gives away another's hidden gold.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

from dataset.models import SOURCE_CODE_PATTERN, Split, Table
from plumbing.jobs import Job


class Track(models.TextChoices):
    """The tracks whose items live here. QA's items are the dataset's questions."""

    EXTRACTION = "extraction", "Table extraction"
    TRANSFORMATION = "transformation", "Table transformation"
    SQL = "sql", "NL-to-SQL"


class Mode(models.TextChoices):
    """The extraction track's two modes (EXTRACTION.md)."""

    REGION = "region", "Region given"
    PAGE = "page", "Whole page"


class ItemSource(models.TextChoices):
    """Where an item and its gold come from. A ground-truth set's items have its code."""

    SYNTHETIC = "synthetic", "Synthetic tables"
    ACCEPTED = "accepted", "Accepted tables"


# What no ground-truth set may be called: the sources the platform makes itself.
RESERVED_SOURCES = tuple(ItemSource.values)


class GroundTruthSet(models.Model):
    """Documents with human-drawn table structure an admin imported (the ICDAR 2013 format):
    their items are extraction items whose gold is the set's own, not the platform's."""

    code = models.CharField(
        max_length=40,
        unique=True,
        validators=[
            RegexValidator(
                SOURCE_CODE_PATTERN,
                "lower-case letters and digits, words joined by single hyphens (e.g. icdar-eu)",
            )
        ],
        help_text="Starts its items' ids and names its figures on the boards.",
    )
    name = models.CharField(max_length=200)
    url = models.URLField("URL", max_length=500, blank=True)
    licence = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    documents = models.PositiveIntegerField(default=0)
    tables = models.PositiveIntegerField(default=0)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=Q(code__regex=SOURCE_CODE_PATTERN) & ~Q(code__in=RESERVED_SOURCES),
                name="ground_truth_set_code_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


class TrackItem(models.Model):
    """One item of one track, as ``hctqa.core.tracks`` makes it.

    ``files`` lists the paths (relative to the items folder, and to ``TRACK_FILES_ROOT``)
    that ``inputs`` name. ``digest`` hashes everything a score depends on (inputs, gold,
    reference, split), so a board knows when an item set changed under a scored submission.
    ``built_from`` hashes what the item was made from, so a build skips what has not changed
    (drawing a table is the slow part).
    """

    track = models.CharField(max_length=16, choices=Track.choices)
    item_id = models.CharField(max_length=300)
    mode = models.CharField(max_length=8, choices=Mode.choices, blank=True)
    split = models.CharField(max_length=10, choices=Split.choices, db_index=True)
    source = models.CharField(max_length=40, db_index=True)
    table = models.ForeignKey(
        Table, null=True, blank=True, on_delete=models.CASCADE, related_name="track_items"
    )
    ground_truth_set = models.ForeignKey(
        GroundTruthSet, null=True, blank=True, on_delete=models.CASCADE, related_name="items"
    )
    table_key = models.CharField(
        max_length=300, help_text="The table (or page) the core made it from: its table_id."
    )
    split_key = models.CharField(max_length=300)
    inputs = models.JSONField()
    gold = models.JSONField()
    reference = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=list, blank=True)
    digest = models.CharField(max_length=64)
    built_from = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["track", "item_id"]
        constraints = [
            models.UniqueConstraint(fields=["track", "item_id"], name="track_item_unique"),
            models.CheckConstraint(condition=Q(track__in=Track.values), name="track_item_track"),
            models.CheckConstraint(condition=Q(split__in=Split.values), name="track_item_split"),
            # Extraction items are of a mode; the other tracks' have none.
            models.CheckConstraint(
                condition=Q(track=Track.EXTRACTION, mode__in=Mode.values)
                | (~Q(track=Track.EXTRACTION) & Q(mode="")),
                name="track_item_mode",
            ),
            # A ground-truth set's items have its code as their source, and only they.
            models.CheckConstraint(
                condition=Q(ground_truth_set__isnull=True, source__in=RESERVED_SOURCES)
                | (Q(ground_truth_set__isnull=False) & ~Q(source__in=RESERVED_SOURCES)),
                name="track_item_source",
            ),
        ]
        indexes = [models.Index(fields=["track", "mode", "split"])]

    def __str__(self) -> str:
        return f"{self.track} item {self.item_id}"


class BuildStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Building"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


ACTIVE_BUILD_STATUSES = (BuildStatus.QUEUED, BuildStatus.RUNNING)


class ItemBuild(Job):
    """Making every track's items from the dataset (drawing synthetic tables to PDF and PNG
    is the slow part): queued, building with progress and a heartbeat, done with its counts,
    or failed with the reason. One at a time. Its lifecycle is the platform's one
    (``plumbing.jobs``, ``tracks.jobs``); claims are told apart by attempt number."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=8, choices=BuildStatus.choices, default=BuildStatus.QUEUED, db_index=True
    )
    # True while queued or running, NULL afterwards: unique, so one build at a time.
    active = models.BooleanField(null=True, default=True, unique=True, editable=False)
    stage = models.CharField(max_length=200, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    lease = None

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=BuildStatus.values), name="item_build_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ACTIVE_BUILD_STATUSES, active=True)
                | (~Q(status__in=ACTIVE_BUILD_STATUSES) & Q(active__isnull=True)),
                name="item_build_active_matches_status",
            ),
            models.CheckConstraint(condition=Q(progress__lte=100), name="item_build_percent"),
        ]
        permissions = [("build_track_items", "Can build the tracks' items and import sets")]

    def __str__(self) -> str:
        return f"track item build {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_BUILD_STATUSES
