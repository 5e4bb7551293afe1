"""Documents uploaded to find new tables in, their pages, and the table candidates found.

A document belongs to a collection (``dataset.Collection``). Its file, page images and
candidates' crops are kept under ``INGEST_FILES_ROOT`` and never served as files. A candidate
is accepted as a ``Table`` (id ``<collection code>--<document number>--<candidate number>``)
or rejected with a reason; the machine extraction is kept beside the accepted version, with
how close it was (TEDS, exact match, cell precision and recall).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.urls import reverse

from dataset.models import TABLE_NOTES_MAX_CHARS, TABLE_TITLE_MAX_CHARS, Collection, Table
from hctqa.core.outcomes import Outcome
from hctqa.core.wording import whole_percent
from plumbing.jobs import Job


class DocumentKind(models.TextChoices):
    PDF = "pdf", "PDF"
    HTML = "html", "Web page"
    IMAGE = "image", "Image"  # PNG or JPEG, one page, read through OCR


class DocumentStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    EXTRACTING = "extracting", "Extracting"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    # The ingest worker could not open it (damaged, encrypted, too many pages, a web page
    # without a table, too slow to read): its file is deleted, and the same bytes are refused
    # at upload for INGEST_REFUSED_MEMORY_SECONDS with the same reason.
    REFUSED = "refused", "Refused"


class Document(Outcome, Job):
    collection = models.ForeignKey(Collection, on_delete=models.PROTECT, related_name="documents")
    number = models.PositiveIntegerField(help_text="Its number in the collection's table ids.")
    kind = models.CharField(max_length=5, choices=DocumentKind.choices)
    file_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, db_index=True)
    size_bytes = models.BigIntegerField()
    # Counted by the ingest worker when it opens the file; none until then.
    page_count = models.PositiveIntegerField(null=True, blank=True)
    stored_path = models.CharField(
        max_length=300, blank=True, help_text="Under INGEST_FILES_ROOT; empty once refused."
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="ingested_documents",
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(
        max_length=10, choices=DocumentStatus.choices, default=DocumentStatus.QUEUED
    )
    message = models.TextField(blank=True)
    refused_code = models.CharField(
        max_length=32, blank=True, help_text="Why it was refused (UploadRefused.code)."
    )
    pages_done = models.PositiveIntegerField(default=0)
    # Lifecycle (plumbing.jobs.Job): claims told apart by attempt number; ``message`` says
    # why it failed (or what it found); its progress is its pages'.
    lease = None
    error = None
    progress = None

    class Meta:
        ordering = ["-uploaded_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "number"], name="document_number_unique_in_collection"
            ),
            models.CheckConstraint(
                condition=Q(status__in=DocumentStatus.values), name="document_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=DocumentKind.values), name="document_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(page_count__isnull=True, pages_done=0)
                | Q(pages_done__lte=F("page_count")),
                name="document_pages_done_in_range",
            ),
            # A file is ingested once; one refused may be sent again once its refusal is
            # forgotten (INGEST_REFUSED_MEMORY_SECONDS).
            models.UniqueConstraint(
                fields=["sha256"],
                condition=~Q(status="refused"),
                name="document_sha256_unique_unless_refused",
            ),
            # Refused says why, keeps no file and has no pages (so no candidates either).
            models.CheckConstraint(
                condition=~Q(status="refused")
                | (~Q(refused_code="") & ~Q(message="") & Q(stored_path="", page_count=None)),
                name="document_refusal_has_a_reason_and_no_file",
            ),
            models.CheckConstraint(condition=Q(number__gte=1), name="document_number_positive"),
        ]
        permissions = [
            ("ingest_document", "Can upload documents and review the tables found in them"),
        ]

    def __str__(self) -> str:
        return f"{self.collection.code}--{self.number} ({self.file_name})"

    def get_absolute_url(self) -> str:
        return reverse("ingest:document", args=[self.pk])

    @property
    def is_working(self) -> bool:
        return self.status in (DocumentStatus.QUEUED, DocumentStatus.EXTRACTING)

    def tally(self) -> tuple[int, int]:
        """(pages read, pages that failed): ``n_failed_pages`` when the selector counted
        them (``selectors.documents``), else counted here."""
        failed = getattr(self, "n_failed_pages", None)
        if failed is None:
            failed = self.pages.filter(status=PageStatus.FAILED).count()
        return (self.page_count or 0) - failed, failed

    @property
    def percent_done(self) -> int:
        return whole_percent(self.pages_done, self.page_count or 0)


class PageStatus(models.TextChoices):
    PENDING = "pending", "Waiting"
    DONE = "done", "Done"
    NO_TEXT = "no_text", "No text layer"
    FAILED = "failed", "Failed"


class DocumentPage(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()  # 1-based
    status = models.CharField(max_length=8, choices=PageStatus.choices, default=PageStatus.PENDING)
    message = models.TextField(blank=True)
    width = models.FloatField(null=True, blank=True)  # PDF points; pixels for an image
    height = models.FloatField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    # When it was read: the uploader's ingest budget counts the seconds of the last hour.
    finished_at = models.DateTimeField(null=True, blank=True, db_index=True)
    image_path = models.CharField(max_length=300, blank=True)
    ocr_language = models.CharField(
        "OCR language",
        max_length=40,
        blank=True,
        help_text="Read through OCR in this language (no usable text layer); blank: its text.",
    )

    class Meta:
        ordering = ["document", "number"]
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="page_number_unique"),
            models.CheckConstraint(
                condition=Q(status__in=PageStatus.values), name="page_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.document} page {self.number}"


class Strategy(models.TextChoices):
    LINES = "lines", "Ruled lines"
    TEXT = "text", "Text alignment"
    HTML = "html", "HTML table"
    MANUAL = "manual", "Typed by hand"


class CandidateStatus(models.TextChoices):
    PENDING = "pending", "To review"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"


class Candidate(models.Model):
    """A table found (or drawn) in a document, until it is accepted or rejected.

    ``machine_grid``/``machine_csv`` are what extraction gave (the last extraction of its
    box); ``version`` counts changes to them, so a draft started from an older extraction is
    recognised. Accepting stores the corrected table beside them, with the scores.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="candidates")
    number = models.PositiveIntegerField(help_text="Its number in the table id.")
    page = models.PositiveIntegerField(null=True, blank=True)
    strategy = models.CharField(max_length=6, choices=Strategy.choices)
    bbox = models.JSONField(
        null=True, blank=True, help_text="[x0, top, x1, bottom] in points (pixels for an image)."
    )
    cell_boxes = models.JSONField(default=list, blank=True)
    machine_grid = models.JSONField()
    machine_csv = models.TextField()
    # What the extractor read around the grid, and why it was unsure of cells: [row, col,
    # [flag, …]] at the cell's anchor in machine_grid (hctqa.core.extraction.table.FLAGS).
    title = models.CharField(max_length=TABLE_TITLE_MAX_CHARS, blank=True, default="")
    notes = models.TextField(max_length=TABLE_NOTES_MAX_CHARS, blank=True, default="")
    cell_flags = models.JSONField(default=list, blank=True)
    box_adjusted = models.BooleanField(
        default=False, help_text="Its box was drawn or moved by a person before extraction."
    )
    crop_path = models.CharField(max_length=300, blank=True)
    ocr_text = models.TextField(
        blank=True, help_text="The words OCR read in its box, when its page was read so."
    )
    version = models.PositiveIntegerField(default=1)
    status = models.CharField(
        max_length=8, choices=CandidateStatus.choices, default=CandidateStatus.PENDING
    )
    table = models.OneToOneField(
        Table,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ingest_candidate",
    )
    accepted_csv = models.TextField(blank=True)
    header_rows = models.PositiveSmallIntegerField(null=True, blank=True)
    header_columns = models.PositiveSmallIntegerField(null=True, blank=True)
    reject_reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decided_candidates",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    exact = models.BooleanField(null=True, blank=True)
    teds = models.FloatField(null=True, blank=True)
    cell_precision = models.FloatField(null=True, blank=True)
    cell_recall = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["document", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "number"], name="candidate_number_unique_in_document"
            ),
            models.CheckConstraint(
                condition=Q(status__in=CandidateStatus.values), name="candidate_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(strategy__in=Strategy.values), name="candidate_strategy_valid"
            ),
            # Accepted exactly when it has its table and the version accepted; a rejection
            # says why; neither is undone silently.
            models.CheckConstraint(
                condition=(
                    Q(status="accepted", decided_at__isnull=False, exact__isnull=False)
                    & ~Q(accepted_csv="")
                )
                | (~Q(status="accepted") & Q(accepted_csv="", table__isnull=True)),
                name="candidate_accepted_has_its_table",
            ),
            models.CheckConstraint(
                condition=~Q(status="rejected")
                | (~Q(reject_reason="") & Q(decided_at__isnull=False)),
                name="candidate_rejection_has_a_reason",
            ),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("title"), TABLE_TITLE_MAX_CHARS),
                name="candidate_title_length",
            ),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("notes"), TABLE_NOTES_MAX_CHARS),
                name="candidate_notes_length",
            ),
        ]
        indexes = [models.Index(fields=["status", "decided_at"])]

    def __str__(self) -> str:
        return f"{self.table_id_for()} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        return reverse("ingest:candidate", args=[self.pk])

    def table_id_for(self) -> str:
        return f"{self.document.collection.code}--{self.document.number}--{self.number}"


class CandidateDraft(models.Model):
    """One person's unsaved corrections to a candidate, as in the annotation tools: kept with
    the candidate version they started from and the client's clock, so a draft from a stale
    tab, or one arriving late, never overwrites newer work."""

    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="drafts")
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="candidate_drafts"
    )
    state = models.JSONField()
    base_version = models.PositiveIntegerField()
    client_ms = models.BigIntegerField()
    seconds_spent = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["candidate", "editor"], name="one_draft_per_editor")
        ]

    def __str__(self) -> str:
        return f"draft of {self.candidate_id} by {self.editor_id}"
