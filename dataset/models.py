"""The dataset: tables, their table properties, and questions with gold answers; the
collections real tables come from, and the synthetic generator's own files.

The database tables keep the names they had when these models were annotation's
(``annotation_table``, …): the models moved to this app, their rows never did."""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.urls import reverse

from hctqa.core.extraction.documents import DEFAULT_LANGUAGE as OCR_DEFAULT_LANGUAGE
from hctqa.core.extraction.ocr import LANGUAGE_PATTERN as OCR_LANGUAGE_PATTERN


class Source(models.TextChoices):
    """The release's four sources, the synthetic tables and the demo tables. A table's
    ``source`` is the code of its ``Collection`` (these four are collections too), or
    ``synthetic``, or ``demo``."""

    PSA = "psa", "QNPC"
    PAK = "pak", "Pakistan Bureau of Statistics"
    CENSUS = "census", "US Census"
    ARXIV = "arxiv", "arXiv"
    SYNTHETIC = "synthetic", "Synthetic"
    # Made-up tables for trying the platform (manage.py load_demo), never the benchmark's.
    DEMO = "demo", "Demo (made-up tables)"


# A collection's code starts its tables' ids (``<code>--<document>--<n>``), so it holds no
# "--" and no character a URL or a file name would need to escape.
SOURCE_CODE_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
SOURCE_CODE_MAX_LENGTH = 16
OCR_LANGUAGE_HELP = "Tesseract language codes joined by +, such as eng, ara or eng+ara"
# Sources that are no collection's: their tables are generated, not real.
NOT_COLLECTIONS = (Source.SYNTHETIC.value, Source.DEMO.value)
# A table's caption (with its units line) and its footnotes and source lines.
TABLE_TITLE_MAX_CHARS = 1_000
TABLE_NOTES_MAX_CHARS = 10_000


class Collection(models.Model):
    """Where real tables come from: a publisher's series of documents, e.g. "QNPC Statistical
    Abstract 2024". Its code is the source of its tables and the prefix of their ids, which is
    how per-source figures group them."""

    code = models.CharField(
        max_length=SOURCE_CODE_MAX_LENGTH,
        unique=True,
        validators=[
            RegexValidator(
                SOURCE_CODE_PATTERN,
                "lower-case letters and digits, words joined by single hyphens (e.g. qnpc-2024)",
            )
        ],
        help_text="Starts the ids of its tables: <code>--<document>--<n>.",
    )
    name = models.CharField(max_length=200, unique=True)
    publisher = models.CharField(max_length=200, blank=True)
    url = models.URLField("URL", max_length=500, blank=True)
    licence = models.CharField(max_length=200, blank=True)
    ocr_language = models.CharField(
        "OCR language",
        max_length=40,
        default=OCR_DEFAULT_LANGUAGE,
        validators=[RegexValidator(OCR_LANGUAGE_PATTERN.pattern, OCR_LANGUAGE_HELP)],
        help_text="Tesseract's code for scans and images: eng, ara, or eng+ara for both. "
        "Each language needs its data package on the ingest worker (tesseract-ocr-ara, …).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_collection"
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(code__regex=SOURCE_CODE_PATTERN) & ~Q(code__in=NOT_COLLECTIONS),
                name="collection_code_valid",
            ),
            models.CheckConstraint(
                condition=Q(ocr_language__regex=OCR_LANGUAGE_PATTERN.pattern),
                name="collection_ocr_language_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


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
    source = models.CharField(
        max_length=SOURCE_CODE_MAX_LENGTH,
        db_index=True,
        help_text="The code of its collection, 'synthetic' or 'demo'.",
    )
    split = models.CharField(max_length=10, choices=Split.choices, db_index=True)
    canonical_csv = models.TextField(help_text="Canonical CSV: '__' marks a merged cell.")
    image = models.ImageField(upload_to="tables/", blank=True)
    image_url = models.URLField(
        max_length=500, blank=True, help_text="Where the release says the source image lives."
    )
    table_properties = models.JSONField(default=dict, blank=True)
    # Shown with the table and carried in releases; never part of a prompt.
    title = models.CharField(
        max_length=TABLE_TITLE_MAX_CHARS,
        blank=True,
        default="",
        help_text="The caption above the table and its units line.",
    )
    notes = models.TextField(
        max_length=TABLE_NOTES_MAX_CHARS,
        blank=True,
        default="",
        help_text="The footnotes and source lines below the table.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "annotation_table"
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(source__regex=SOURCE_CODE_PATTERN), name="table_source_valid"
            ),
            models.CheckConstraint(condition=Q(split__in=Split.values), name="table_split_valid"),
            models.CheckConstraint(condition=~Q(canonical_csv=""), name="table_csv_not_empty"),
            # SQLite keeps no varchar length; TextField has none anywhere.
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("title"), TABLE_TITLE_MAX_CHARS),
                name="table_title_length",
            ),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("notes"), TABLE_NOTES_MAX_CHARS),
                name="table_notes_length",
            ),
        ]
        permissions = [("view_test_gold", "Can see gold answers of test-split questions")]

    def __str__(self) -> str:
        return self.id

    def get_absolute_url(self) -> str:
        return reverse("dataset:table_detail", args=[self.id])

    @property
    def is_synthetic(self) -> bool:
        return self.source == Source.SYNTHETIC

    @property
    def source_label(self) -> str:
        """The collection's name (one query), "Synthetic", "Demo…", or the code itself."""
        if self.source in NOT_COLLECTIONS:
            return Source(self.source).label
        name = Collection.objects.filter(code=self.source).values_list("name", flat=True).first()
        return name or self.source


class SyntheticTable(models.Model):
    """The synthetic generator's own files for a synthetic HCT."""

    table = models.OneToOneField(
        Table, on_delete=models.CASCADE, primary_key=True, related_name="synthetic"
    )
    family = models.CharField(max_length=120, db_index=True)
    hct_csv = models.TextField()
    hct_html = models.TextField()
    relational_csv = models.TextField(help_text="Line 1: display names; line 2: SQL names.")

    class Meta:
        db_table = "annotation_synthetictable"

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
    # Private gold: served to verifiers as gold control, so shown to admins only, and never
    # scored, exported or released (annotation.services.gold_pool).
    in_gold_pool = models.BooleanField(
        default=False,
        help_text="A gold-control question: hidden from everyone but admins, never scored.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "annotation_question"
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(origin__in=QuestionOrigin.values), name="question_origin_valid"
            ),
            models.CheckConstraint(
                condition=Q(in_gold_pool=False)
                | (Q(status=QuestionStatus.VERIFIED) & ~Q(origin=QuestionOrigin.SYNTHETIC)),
                name="gold_pool_questions_are_verified_and_not_templated",
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
        indexes = [
            models.Index(fields=["table", "origin"]),
            models.Index(
                fields=["in_gold_pool"], condition=Q(in_gold_pool=True), name="question_gold_pool"
            ),
        ]
        permissions = [
            (
                "view_private_questions",
                "Can see gold-pool questions and model-generated questions not yet verified",
            )
        ]

    def __str__(self) -> str:
        return self.id

    def get_absolute_url(self) -> str:
        return f"{self.table.get_absolute_url()}#q-{self.id}"

    @property
    def split(self) -> str:
        return self.table.split
