"""The dataset: tables, their table properties, and questions with gold answers."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.urls import reverse


class Source(models.TextChoices):
    PSA = "psa", "QNPC"
    PAK = "pak", "Pakistan Bureau of Statistics"
    CENSUS = "census", "US Census"
    ARXIV = "arxiv", "arXiv"
    SYNTHETIC = "synthetic", "Synthetic"
    UPLOADED = "uploaded", "Uploaded"


class Split(models.TextChoices):
    TRAIN = "train", "Train"
    VALIDATION = "validation", "Validation"
    TEST = "test", "Test"


class Table(models.Model):
    """A human-centric table, stored as its canonical CSV.

    ``id`` is the release's own table id (``psa--4--1``), stable across imports. The split is
    held here only: every question of a table shares it.
    """

    id = models.CharField(primary_key=True, max_length=160)
    source = models.CharField(max_length=16, choices=Source.choices, db_index=True)
    split = models.CharField(max_length=10, choices=Split.choices, db_index=True)
    canonical_csv = models.TextField(help_text="Canonical CSV: '__' marks a merged cell.")
    image = models.ImageField(upload_to="tables/", blank=True)
    image_url = models.URLField(
        max_length=500, blank=True, help_text="Where the release says the source image lives."
    )
    table_properties = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(source__in=Source.values), name="table_source_valid"
            ),
            models.CheckConstraint(condition=Q(split__in=Split.values), name="table_split_valid"),
            models.CheckConstraint(condition=~Q(canonical_csv=""), name="table_csv_not_empty"),
        ]
        permissions = [
            ("annotate_table", "Can annotate table properties"),
            ("view_test_gold", "Can see gold answers of test-split questions"),
        ]

    def __str__(self) -> str:
        return self.id

    def get_absolute_url(self) -> str:
        return reverse("annotation:table_detail", args=[self.id])


class SyntheticTable(models.Model):
    """The synthetic generator's own files for a synthetic HCT."""

    table = models.OneToOneField(
        Table, on_delete=models.CASCADE, primary_key=True, related_name="synthetic"
    )
    family = models.CharField(max_length=120, db_index=True)
    hct_csv = models.TextField()
    hct_html = models.TextField()
    relational_csv = models.TextField(help_text="Line 1: display names; line 2: SQL names.")

    def __str__(self) -> str:
        return f"{self.family}: {self.table_id}"


class QuestionOrigin(models.TextChoices):
    HUMAN = "human", "Human-written"
    MODEL = "model", "Model-generated"
    SYNTHETIC = "synthetic", "Synthetic template"


class QuestionStatus(models.TextChoices):
    UNVERIFIED = "unverified", "Unverified"
    ADJUDICATION = "adjudication", "Awaiting adjudication"
    VERIFIED = "verified", "Verified"
    DROPPED = "dropped", "Dropped"


class Question(models.Model):
    Origin = QuestionOrigin
    Status = QuestionStatus

    id = models.CharField(primary_key=True, max_length=180)
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="questions")
    text = models.TextField()
    gold_answer = models.TextField(blank=True)
    origin = models.CharField(max_length=10, choices=QuestionOrigin.choices, db_index=True)
    template_number = models.PositiveSmallIntegerField(null=True, blank=True)
    sql = models.TextField(blank=True, help_text="The SQL behind a synthetic question.")
    query_properties = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=12,
        choices=QuestionStatus.choices,
        default=QuestionStatus.UNVERIFIED,
        db_index=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(origin__in=QuestionOrigin.values), name="question_origin_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=QuestionStatus.values), name="question_status_valid"
            ),
            models.CheckConstraint(
                condition=(
                    Q(origin="synthetic", template_number__isnull=False)
                    | (~Q(origin="synthetic") & Q(template_number__isnull=True))
                ),
                name="question_template_only_for_synthetic",
            ),
            models.CheckConstraint(condition=~Q(text=""), name="question_text_not_empty"),
        ]
        indexes = [models.Index(fields=["table", "origin"])]
        permissions = [
            ("write_question", "Can write questions and gold answers"),
            ("verify_question", "Can verify model-generated questions"),
            ("adjudicate_question", "Can adjudicate disagreeing verifications"),
        ]

    def __str__(self) -> str:
        return self.id

    def get_absolute_url(self) -> str:
        return f"{self.table.get_absolute_url()}#q-{self.id}"

    @property
    def split(self) -> str:
        return self.table.split
