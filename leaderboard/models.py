"""Submissions, their per-question results and scores, and the property regression."""

from __future__ import annotations

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.db import models
from django.db.models import Case, Q, Value, When
from django.urls import reverse

from annotation.models import Question


def private_storage() -> FileSystemStorage:
    # Uploaded predictions are never served: they live outside MEDIA_ROOT.
    return FileSystemStorage(location=settings.PRIVATE_FILES_ROOT)


class Kind(models.TextChoices):
    SUBMISSION = "submission", "Submission"
    REPORTED = "reported", "Reported in paper"


class Modality(models.TextChoices):
    TEXT = "text", "Text"
    VISION = "vision", "Vision"


class Weights(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class SizeClass(models.TextChoices):
    SMALL = "small", "Small (≤ 12B)"
    MEDIUM = "medium", "Medium (13–70B)"
    LARGE = "large", "Large (> 70B or closed)"


class TableFormat(models.TextChoices):
    PAPER = "paper", "pandas text (paper)"
    CSV = "csv", "CSV"
    HTML = "html", "HTML"
    MARKDOWN = "markdown", "Markdown"
    JSON = "json", "JSON"
    LATEX = "latex", "LaTeX"
    NONSENSICAL_CSV = "nonsensical_csv", "Nonsensical CSV"
    IMAGE = "image", "Image"
    OTHER = "other", "Other"


class PromptStyle(models.TextChoices):
    ZERO_SHOT = "zero_shot", "Zero-shot"
    ONE_SHOT = "one_shot", "One-shot"
    FEW_SHOT = "few_shot", "Few-shot"
    CHAIN_OF_THOUGHT = "chain_of_thought", "Chain of thought"
    OTHER = "other", "Other"


class EvalSplit(models.TextChoices):
    TEST = "test", "Test"
    VALIDATION = "validation", "Validation"
    TRAIN = "train", "Train"
    ALL = "all", "All splits"


class DataScope(models.TextChoices):
    REAL = "real", "Real tables"
    SYNTHETIC = "synthetic", "Synthetic tables"


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private"


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    SCORING = "scoring", "Scoring"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"


# The sources with their own recall column on the board, in the paper's order.
BOARD_SOURCES = ("psa", "pak", "census", "arxiv")
_SCORE_FIELDS = ("precision", "recall", "f1", "cc", *(f"recall_{s}" for s in BOARD_SOURCES))


class Submission(models.Model):
    """One model's answers to one split, and their scores. Rows reported in the paper are
    submissions too (kind=reported), so the board sorts and filters them alike."""

    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.SUBMISSION)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="submissions",
    )

    # What was run
    model_name = models.CharField(max_length=200)
    organisation = models.CharField(max_length=200, blank=True)
    parameters_billions = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text="Blank when unknown."
    )
    weights = models.CharField(max_length=6, choices=Weights.choices)
    size_class = models.GeneratedField(
        expression=Case(
            When(weights=Weights.CLOSED, then=Value(SizeClass.LARGE.value)),
            When(parameters_billions__gt=70, then=Value(SizeClass.LARGE.value)),
            When(parameters_billions__gt=12, then=Value(SizeClass.MEDIUM.value)),
            When(parameters_billions__isnull=False, then=Value(SizeClass.SMALL.value)),
            default=Value(""),
        ),
        output_field=models.CharField(max_length=6, choices=SizeClass.choices),
        db_persist=True,
    )
    modality = models.CharField(max_length=6, choices=Modality.choices)
    table_format = models.CharField(max_length=16, choices=TableFormat.choices)
    prompt_style = models.CharField(
        max_length=16, choices=PromptStyle.choices, default=PromptStyle.ZERO_SHOT
    )
    paper_url = models.URLField(max_length=500, blank=True)
    code_url = models.URLField(max_length=500, blank=True)
    description = models.TextField(blank=True)
    split = models.CharField(max_length=10, choices=EvalSplit.choices)
    data_scope = models.CharField(max_length=9, choices=DataScope.choices)
    visibility = models.CharField(
        max_length=7, choices=Visibility.choices, default=Visibility.PUBLIC
    )

    # The upload, kept so a submission can be scored again.
    predictions = models.FileField(
        storage=private_storage, upload_to="predictions/%Y/%m/", blank=True
    )
    predictions_sha256 = models.CharField(max_length=64, blank=True)

    # Lifecycle
    status = models.CharField(
        max_length=7, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent, for the UI.")
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Scores (macro-averages; null where the modality has no such figure)
    n_questions = models.PositiveIntegerField(null=True, blank=True)
    coverage = models.FloatField(null=True, blank=True)
    precision = models.FloatField(null=True, blank=True)
    precision_low = models.FloatField(null=True, blank=True)
    precision_high = models.FloatField(null=True, blank=True)
    recall = models.FloatField(null=True, blank=True)
    recall_low = models.FloatField(null=True, blank=True)
    recall_high = models.FloatField(null=True, blank=True)
    f1 = models.FloatField(null=True, blank=True)
    cc = models.FloatField(null=True, blank=True)
    cc_low = models.FloatField(null=True, blank=True)
    cc_high = models.FloatField(null=True, blank=True)
    recall_psa = models.FloatField(null=True, blank=True)
    recall_pak = models.FloatField(null=True, blank=True)
    recall_census = models.FloatField(null=True, blank=True)
    recall_arxiv = models.FloatField(null=True, blank=True)
    by_source = models.JSONField(default=dict, blank=True)
    breakdowns = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-recall", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=Kind.values), name="submission_kind_valid"),
            models.CheckConstraint(
                condition=Q(status__in=Status.values), name="submission_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(modality__in=Modality.values), name="submission_modality_valid"
            ),
            models.CheckConstraint(
                condition=Q(weights__in=Weights.values), name="submission_weights_valid"
            ),
            models.CheckConstraint(
                condition=Q(split__in=EvalSplit.values), name="submission_split_valid"
            ),
            models.CheckConstraint(
                condition=Q(data_scope__in=DataScope.values), name="submission_scope_valid"
            ),
            models.CheckConstraint(
                condition=Q(visibility__in=Visibility.values),
                name="submission_visibility_valid",
            ),
            # A researcher's submission has an owner; a row from the paper has none.
            models.CheckConstraint(
                condition=(Q(kind=Kind.SUBMISSION, owner__isnull=False))
                | Q(kind=Kind.REPORTED, owner__isnull=True),
                name="submission_owner_matches_kind",
            ),
            # Open models state their size; closed ones are large whatever it is.
            models.CheckConstraint(
                condition=Q(weights=Weights.CLOSED) | Q(parameters_billions__isnull=False),
                name="submission_open_models_state_size",
            ),
            models.CheckConstraint(
                condition=Q(parameters_billions__isnull=True) | Q(parameters_billions__gt=0),
                name="submission_parameters_positive",
            ),
            models.CheckConstraint(
                condition=Q(progress__lte=100), name="submission_progress_percent"
            ),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{f}__isnull": True}) | Q(**{f"{f}__gte": 0, f"{f}__lte": 1}),
                    name=f"submission_{f}_in_unit_range",
                )
                for f in _SCORE_FIELDS
            ],
            models.CheckConstraint(
                condition=~Q(status=Status.SCORED) | Q(recall__isnull=False),
                name="submission_scored_has_recall",
            ),
        ]
        indexes = [models.Index(fields=["status", "visibility", "modality"])]

    def __str__(self) -> str:
        return f"{self.model_name} ({self.get_modality_display()}, {self.get_split_display()})"

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:submission_detail", args=[self.pk])

    @property
    def size_class_label(self) -> str:
        # GeneratedField does not get a get_size_class_display().
        return SizeClass(self.size_class).label if self.size_class else ""

    @property
    def is_reported(self) -> bool:
        return self.kind == Kind.REPORTED

    @property
    def is_finished(self) -> bool:
        return self.status in (Status.SCORED, Status.FAILED)


class QuestionResult(models.Model):
    """One question's answer and scores in one submission: every breakdown is computed from
    these."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="results")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="results")
    prediction = models.TextField(blank=True)
    answered = models.BooleanField(default=True, help_text="False: no prediction, scored as empty.")
    precision = models.FloatField(null=True, blank=True)
    recall = models.FloatField()
    f1 = models.FloatField(null=True, blank=True)
    cc = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "question"], name="one_result_per_question"
            ),
            models.CheckConstraint(
                condition=Q(recall__gte=0, recall__lte=1), name="result_recall_in_unit_range"
            ),
            models.CheckConstraint(
                condition=Q(cc=False) | Q(recall=1), name="result_cc_means_full_recall"
            ),
        ]
        indexes = [models.Index(fields=["question", "submission"])]

    def __str__(self) -> str:
        return f"{self.question_id} in submission {self.submission_id}"


class DailyLimitEntry(models.Model):
    """One submission scored against test gold answers, counted toward its owner's daily
    limit. Entries outlive their submission: deleting one does not give a submission back."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"test-split submission by user {self.user_id} at {self.created_at:%Y-%m-%d %H:%M}"


class PropertyRegression(models.Model):
    """Recall regressed on table properties over all scored public submissions (real tables),
    refreshed whenever a submission changes."""

    computed_at = models.DateTimeField()
    submissions = models.PositiveIntegerField()
    tables = models.PositiveIntegerField()
    r_squared = models.FloatField()
    intercept = models.FloatField()
    coefficients = models.JSONField(default=list)
    dropped = models.JSONField(default=list)

    class Meta:
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return (
            f"regression over {self.submissions} submissions at {self.computed_at:%Y-%m-%d %H:%M}"
        )
