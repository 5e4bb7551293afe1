"""Making the dataset: table-property annotations, questions being written, assignments,
flags, the verification of model-generated questions, and the generation runs (model and
synthetic). The dataset itself (tables, questions) is the dataset app's."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from dataset.models import Question, Table
from hctqa.core.outcomes import Outcome
from plumbing.jobs import Job, RunStatus

# --- Annotation work ---------------------------------------------------------------------


class AnnotationSource(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    RELEASE = "release", "Release"
    RESOLUTION = "resolution", "Adjudicated resolution"


class PropertyAnnotation(models.Model):
    """One annotator's table properties for one table; the release's labels and an
    adjudicator's resolution are annotations too.

    ``properties`` is the last saved set and ``version`` counts the saves (0: never saved).
    The draft is kept beside it with the version it started from and the annotator's clock,
    so a draft from a stale tab, or one arriving late, never overwrites newer work.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="property_annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="property_annotations",
    )
    source = models.CharField(
        max_length=10, choices=AnnotationSource.choices, default=AnnotationSource.ANNOTATOR
    )
    properties = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=0)
    saved_at = models.DateTimeField(null=True, blank=True)
    draft = models.JSONField(null=True, blank=True)
    draft_base_version = models.PositiveIntegerField(null=True, blank=True)
    draft_client_ms = models.BigIntegerField(null=True, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["table", "annotator"],
                condition=Q(source="annotator"),
                name="one_property_annotation_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["table", "source"],
                condition=Q(source__in=["release", "resolution"]),
                name="one_release_and_one_resolution_per_table",
            ),
            models.CheckConstraint(
                condition=Q(source__in=AnnotationSource.values),
                name="property_annotation_source_valid",
            ),
            models.CheckConstraint(
                condition=(Q(source="release") & Q(annotator__isnull=True))
                | (~Q(source="release") & Q(annotator__isnull=False)),
                name="property_annotation_annotator_matches_source",
            ),
            models.CheckConstraint(
                condition=Q(version=0, saved_at__isnull=True)
                | Q(version__gt=0, saved_at__isnull=False),
                name="property_annotation_saved_at_with_version",
            ),
        ]
        indexes = [
            models.Index(fields=["annotator", "saved_at"]),
            models.Index(fields=["table", "version"]),
        ]
        permissions = [("annotate_table", "Can annotate table properties")]

    def __str__(self) -> str:
        who = self.annotator or "release"
        return f"{self.table_id} by {who} (v{self.version})"

    @property
    def has_unsaved_draft(self) -> bool:
        return self.draft is not None and self.draft_base_version == self.version


class AnnotationTool(models.TextChoices):
    PROPERTIES = "properties", "Table properties"
    QUESTIONS = "questions", "Questions"


class AnnotationSkip(models.Model):
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="+")
    tool = models.CharField(max_length=10, choices=AnnotationTool.choices)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "table", "tool"], name="one_skip_per_table_and_tool"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator} skipped {self.table_id} ({self.tool})"


class Assignment(models.Model):
    """A table given to an annotator, by an admin or an adjudicator, for one kind of work:
    its table properties, or questions on it. Their queue serves it before other tables;
    it is done once they have saved that work on the table (annotation.selectors)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    kind = models.CharField(max_length=10, choices=AnnotationTool.choices)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["table", "annotator", "kind"],
                name="one_assignment_per_table_annotator_and_kind",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=AnnotationTool.values), name="assignment_kind_valid"
            ),
        ]
        indexes = [models.Index(fields=["annotator", "kind", "created_at"])]

    def __str__(self) -> str:
        return f"{self.table_id} to {self.annotator} ({self.kind})"


class QuestionDraft(models.Model):
    """A question being written, kept as the annotator types. ``client_key`` names this
    question-in-progress: once a question is saved under it, drafts under it are refused."""

    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="question_drafts")
    client_key = models.UUIDField()
    text = models.TextField(blank=True)
    gold_answer = models.TextField(blank=True)
    query_properties = models.JSONField(default=dict, blank=True)
    template = models.CharField(max_length=40, blank=True)
    client_ms = models.BigIntegerField()
    seconds_spent = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "table"], name="one_question_draft_per_table"
            )
        ]

    def __str__(self) -> str:
        return f"draft by {self.annotator} on {self.table_id}"


class QuestionAuthoring(models.Model):
    """Who wrote a human-written question in the query tool, how long it took, and the key
    that makes saving it idempotent."""

    question = models.OneToOneField(
        Question, on_delete=models.CASCADE, primary_key=True, related_name="authoring"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="authored_questions"
    )
    template = models.CharField(max_length=40, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    client_key = models.UUIDField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Counts the author's saves of the question (1: as written), so a change made from a
    # stale page is refused (409), as with table properties.
    version = models.PositiveIntegerField(default=1)
    changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        permissions = [("write_question", "Can write questions and gold answers")]

    def __str__(self) -> str:
        return f"{self.question_id} by {self.annotator}"


# --- Flags ---------------------------------------------------------------------------------


class FlagReason(models.TextChoices):
    BROKEN_TABLE = "broken_table", "Broken table"
    WRONG_PROPERTIES = "wrong_properties", "Wrong table properties"
    OTHER = "other", "Other"


class Flag(models.Model):
    """A problem someone saw on a table (or one of its questions), for an adjudicator to look
    at and resolve."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="flags")
    question = models.ForeignKey(
        Question, null=True, blank=True, on_delete=models.CASCADE, related_name="flags"
    )
    reason = models.CharField(max_length=16, choices=FlagReason.choices)
    note = models.TextField(blank=True)
    raised_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="flags_raised"
    )
    raised_at = models.DateTimeField(auto_now_add=True, db_index=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="flags_resolved",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.TextField(blank=True)

    class Meta:
        ordering = ["raised_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reason__in=FlagReason.values), name="flag_reason_valid"
            ),
            models.CheckConstraint(
                condition=~Q(reason="other") | ~Q(note=""), name="flag_other_has_a_note"
            ),
            models.CheckConstraint(
                condition=Q(resolved_at__isnull=True, resolution="") | Q(resolved_at__isnull=False),
                name="flag_resolution_only_when_resolved",
            ),
            # A double click raises one flag, not two.
            models.UniqueConstraint(
                fields=["table", "reason", "raised_by"],
                condition=Q(resolved_at__isnull=True, question__isnull=True),
                name="one_open_table_flag_per_reason_and_person",
            ),
            models.UniqueConstraint(
                fields=["question", "reason", "raised_by"],
                condition=Q(resolved_at__isnull=True, question__isnull=False),
                name="one_open_question_flag_per_reason_and_person",
            ),
        ]
        indexes = [
            models.Index(
                fields=["raised_at"], condition=Q(resolved_at__isnull=True), name="flag_open"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_reason_display()} on {self.question_id or self.table_id}"


# --- Verification of model-generated questions --------------------------------------------


class SlotKind(models.TextChoices):
    REGULAR = "regular", "Verification"
    GOLD = "gold", "Gold control"


class SlotStatus(models.TextChoices):
    OPEN = "open", "Open"
    LEASED = "leased", "Leased"
    DONE = "done", "Done"


class Rating(models.TextChoices):
    GOOD = "good", "Good"
    AMBIGUOUS = "ambiguous", "Ambiguous"
    NONSENSICAL = "nonsensical", "Nonsensical"


class VerificationSlot(models.Model):
    """One verification of one question.

    Every model-generated question gets exactly two regular slots when it is created, so "at
    most two verifications" holds by construction, and the unique constraints make it hold
    in the database too: one slot per number, and never two slots of a question for one
    annotator. Gold slots are created for one annotator at a time, from verified
    human-written questions, and look the same to them.
    """

    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="verification_slots"
    )
    # What verifiers see in URLs and the API. Gold slots are made at claim time, so their
    # primary keys are the newest: a verifier must not be able to tell them by the number.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=8, choices=SlotKind.choices, default=SlotKind.REGULAR)
    slot_number = models.PositiveSmallIntegerField(null=True, blank=True)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="verification_slots",
    )
    status = models.CharField(max_length=6, choices=SlotStatus.choices, default=SlotStatus.OPEN)
    leased_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    rating = models.CharField(max_length=11, choices=Rating.choices, blank=True)
    answer_correct = models.BooleanField(null=True, blank=True)
    corrected_answer = models.TextField(blank=True)
    rewritten_question = models.TextField(blank=True)
    gold_passed = models.BooleanField(null=True, blank=True)
    # What a gold slot showed as the proposed answer (the gold itself, or a deliberately
    # wrong one), so it is graded against exactly what the verifier saw.
    gold_shown_answer = models.TextField(blank=True)
    gold_shown_wrong = models.BooleanField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["question", "slot_number"],
                condition=Q(kind="regular"),
                name="two_numbered_slots_per_question",
            ),
            models.UniqueConstraint(
                fields=["question", "annotator"],
                condition=Q(annotator__isnull=False),
                name="one_slot_per_question_and_annotator",
            ),
            models.CheckConstraint(
                condition=(Q(kind="regular") & Q(slot_number__in=[1, 2]))
                | (Q(kind="gold") & Q(slot_number__isnull=True)),
                name="regular_slots_are_numbered_one_or_two",
            ),
            models.CheckConstraint(
                condition=Q(
                    status="open",
                    annotator__isnull=True,
                    lease_expires_at__isnull=True,
                    submitted_at__isnull=True,
                )
                | Q(
                    status="leased",
                    annotator__isnull=False,
                    lease_expires_at__isnull=False,
                    submitted_at__isnull=True,
                )
                | (Q(status="done", submitted_at__isnull=False) & ~Q(rating="")),
                name="slot_fields_match_status",
            ),
            models.CheckConstraint(
                condition=Q(rating="") | Q(rating__in=Rating.values), name="slot_rating_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind="regular", gold_shown_wrong__isnull=True, gold_shown_answer="")
                | (Q(kind="gold", gold_shown_wrong__isnull=False) & ~Q(gold_shown_answer="")),
                name="gold_slots_record_the_answer_shown",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "kind"]),
            models.Index(fields=["annotator", "status"]),
        ]
        permissions = [
            ("verify_question", "Can verify model-generated questions"),
            ("adjudicate_question", "Can adjudicate disagreeing verifications"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} slot {self.slot_number or ''} of {self.question_id} ({self.status})"


class VerificationOutcome(models.Model):
    """How a model-generated question was decided; kept for the statistics even when the
    question is dropped."""

    question = models.OneToOneField(
        Question, on_delete=models.CASCADE, primary_key=True, related_name="outcome"
    )
    rating = models.CharField(max_length=11, choices=Rating.choices)
    answer_corrected = models.BooleanField()
    original_text = models.TextField()
    original_answer = models.TextField()
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.question_id}: {self.rating}"


class DiscardedVerification(models.Model):
    """A verdict taken back when its annotator left the pool; the slot went back to the queue."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    rating = models.CharField(max_length=11, choices=Rating.choices)
    answer_correct = models.BooleanField(null=True)
    corrected_answer = models.TextField(blank=True)
    rewritten_question = models.TextField(blank=True)
    submitted_at = models.DateTimeField()
    discarded_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"discarded verdict of {self.annotator} on {self.question_id}"


class VerifierStanding(models.Model):
    """An annotator's place in the verification pool: removed after failing gold questions."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True
    )
    removed_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"{self.user}: {'removed' if self.removed_at else 'in the pool'}"


# --- Generation runs -----------------------------------------------------------------------


class GenerationRun(Outcome, Job):
    """Model-generated questions for a set of tables, by one OpenAI-compatible chat model
    behind an endpoint an admin registered (its key stays on the worker)."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", on_delete=models.PROTECT, related_name="generation_runs"
    )
    base_url = models.URLField(max_length=500, help_text="Where the requests went.")
    model = models.CharField(max_length=200)
    use_images = models.BooleanField(default=False)
    questions_per_table = models.PositiveSmallIntegerField(default=8)
    status = models.CharField(max_length=9, choices=RunStatus.choices, default=RunStatus.QUEUED)
    tables_total = models.PositiveIntegerField(default=0)
    tables_done = models.PositiveIntegerField(default=0)
    tables_failed = models.PositiveIntegerField(default=0)
    questions_created = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # Lifecycle (plumbing.jobs.Job): one worker at a time, until its heartbeat goes silent;
    # an admin resumes it. Its progress is its tables'.
    attempts = None
    lease = None
    queued_at = None
    # What it was asked (endpoint, model, options, tables): see annotation/services/runs.py.
    fingerprint = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="generation_status_valid"
            ),
            models.UniqueConstraint(
                fields=["fingerprint"],
                condition=Q(status__in=[RunStatus.QUEUED, RunStatus.RUNNING]) & ~Q(fingerprint=""),
                name="one_active_generation_run_per_request",
            ),
            models.CheckConstraint(
                condition=Q(questions_per_table__gte=1, questions_per_table__lte=20),
                name="generation_questions_per_table_range",
            ),
        ]

    def __str__(self) -> str:
        return f"generation run {self.pk} with {self.model}"

    def tally(self) -> tuple[int, int]:
        return self.tables_done, self.tables_failed

    @property
    def progress(self) -> int:
        if not self.tables_total:
            return 0
        # Rounded down, so 100% means every table is through.
        return 100 * (self.tables_done + self.tables_failed) // self.tables_total

    @property
    def is_resumable(self) -> bool:
        """Resuming has something to do: the run stopped (failed, cancelled) or its worker
        died, or tables got no valid reply. A run done with every table is not."""
        if self.status in (RunStatus.FAILED, RunStatus.CANCELLED):
            return True
        if self.status == RunStatus.DONE:
            return self.tables_failed > 0
        if self.status == RunStatus.RUNNING:
            from annotation.jobs import GENERATION_RUN

            return self.is_silent(GENERATION_RUN.stale_after())
        return False


class GenerationItem(models.Model):
    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="items")
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=7,
        choices=[("pending", "Pending"), ("done", "Done"), ("failed", "Failed")],
        default="pending",
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    # The model's last reply, cut to a few kB, so a failure can be read without the logs.
    last_output = models.TextField(blank=True)
    questions_created = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "table"], name="one_item_per_table_and_run")
        ]

    def __str__(self) -> str:
        return f"{self.table_id} in run {self.run_id} ({self.status})"


# --- Synthetic generation runs -------------------------------------------------------------


class SyntheticRun(Outcome, Job):
    """A run of the benchmark's synthetic generator (hctqa/core/synthgen): whole families, or
    a number of tables having chosen table properties. Its tables are imported together, or
    not at all."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    families = models.JSONField(default=list, blank=True, help_text="Empty: every family.")
    required_properties = models.JSONField(default=list, blank=True)
    table_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="Targeted runs: how many tables to make."
    )
    status = models.CharField(max_length=9, choices=RunStatus.choices, default=RunStatus.QUEUED)
    stage = models.CharField(max_length=20, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    tables_created = models.PositiveIntegerField(default=0)
    questions_created = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Lifecycle (plumbing.jobs.Job), as a generation run's; its progress is its stages'.
    attempts = None
    lease = None
    queued_at = None
    # What it was asked (families, properties, count): see annotation/services/runs.py.
    fingerprint = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="synthetic_run_status_valid"
            ),
            models.UniqueConstraint(
                fields=["fingerprint"],
                condition=Q(status__in=[RunStatus.QUEUED, RunStatus.RUNNING]) & ~Q(fingerprint=""),
                name="one_active_synthetic_run_per_request",
            ),
            models.CheckConstraint(
                condition=Q(table_count__isnull=True) | Q(table_count__gte=1),
                name="synthetic_run_table_count_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"synthetic run {self.pk}"

    # Stages in order, each a share of the bar: tables, questions, nonsense, import.
    _STAGES = {"tables": (0, 45), "questions": (45, 40), "nonsense": (85, 10), "import": (95, 5)}

    @property
    def progress(self) -> int:
        if self.status == RunStatus.DONE:
            return 100
        start, width = self._STAGES.get(self.stage, (0, 0))
        fraction = self.done / self.total if self.total else 0
        return min(99, int(start + width * fraction))  # 100 only when done
