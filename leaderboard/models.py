"""Submissions, their per-question results and scores, and the property regression."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.db import models
from django.db.models import Case, F, Q, Value, When
from django.urls import reverse
from django.utils import timezone

from dataset.models import Question
from hctqa.core.outcomes import Outcome
from hctqa.core.prompts import PROMPT_STYLES, TABLE_FORMATS
from hctqa.core.wording import counted
from plumbing.jobs import Job, RunStatus
from tracks.registry import TrackInfo
from tracks.registry import choices as track_choices
from tracks.registry import track as track_info


def private_storage() -> FileSystemStorage:
    # Uploaded predictions are never served: they live outside MEDIA_ROOT.
    return FileSystemStorage(location=settings.PRIVATE_FILES_ROOT)


class Kind(models.TextChoices):
    SUBMISSION = "submission", "Submission"
    REPORTED = "reported", "Reported in paper"
    # The platform's own systems on a track's board (its extractor, pdfplumber, the unpivot),
    # scored like any submission.
    BASELINE = "baseline", "Baseline"


# The tracks a submission may be for (tracks.registry): QA, then the three beside it.
TRACK_CHOICES = track_choices()
QA_TRACK = "qa"


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
    """Which tables a submission is scored on: the benchmark's real or synthetic ones, or the
    demo tables made up to try the platform (a board of their own, never beside the
    others)."""

    REAL = "real", "Real tables"
    SYNTHETIC = "synthetic", "Synthetic tables"
    DEMO = "demo", "Demo tables"


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private"


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    SCORING = "scoring", "Scoring"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"


class Rules(models.TextChoices):
    """The reference scorer's published versions (hctqa.core.scoring.RULES)."""

    V2025_05 = "2025-05", "2025-05"
    V2025_10 = "2025-10", "2025-10"


DEFAULT_RULES = Rules.V2025_05.value
# The splits a public board ranks: all questions (the paper's Table 1 protocol, where its
# rows belong) and the test split. Train and validation scores are for their owners only.
BOARD_SPLITS = (EvalSplit.ALL, EvalSplit.TEST)

# The sources with their own recall column on the board, in the paper's order.
BOARD_SOURCES = ("psa", "pak", "census", "arxiv")
_SCORE_FIELDS = ("precision", "recall", "f1", "cc", *(f"recall_{s}" for s in BOARD_SOURCES))
# A Score's figures, breakdowns aside.
SCORE_FIGURES = (
    "n_questions",
    "excluded",
    "coverage",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "cc",
    "cc_low",
    "cc_high",
    *(f"recall_{s}" for s in BOARD_SOURCES),
    "by_source",
    "withheld",
)
# A QuestionResult's figures: the 2025-05 ones, then whether 2025-10 counted it and its.
RESULT_FIGURES = (
    "precision",
    "recall",
    "f1",
    "cc",
    "counted_2025_10",
    "precision_2025_10",
    "recall_2025_10",
    "f1_2025_10",
    "cc_2025_10",
)


class Submission(Job):
    """One model's answers to one split, and their scores. Rows reported in the paper are
    submissions too (kind=reported), so the board sorts and filters them alike."""

    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.SUBMISSION)
    # The task it is for. QA's questions and scores are below (QuestionResult, Score); the
    # other tracks' items are tracks.TrackItem, their scores a TrackScore and ItemResults.
    track = models.CharField(max_length=16, choices=TRACK_CHOICES, default=QA_TRACK, db_index=True)
    # The extraction track's item set: the region given, or the whole page; blank elsewhere.
    mode = models.CharField(max_length=8, blank=True)
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
    too_long_prompts = models.PositiveIntegerField(
        default=0,
        help_text="Questions of the inference run that made it whose prompt was over the "
        "model's context length: not answered, scored as empty answers.",
    )

    # The upload, kept so a submission can be scored again.
    predictions = models.FileField(
        storage=private_storage, upload_to="predictions/%Y/%m/", blank=True
    )
    predictions_sha256 = models.CharField(max_length=64, blank=True)

    # Lifecycle (plumbing.jobs.Job): its scorings are told apart by attempt number, and it
    # ends scored (``scored_at``) or failed.
    status = models.CharField(
        max_length=7, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    lease = None
    finished_at = None
    scored_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The file's own gold answers (``gt``), compared with the platform's on the questions
    # whose gold is public (never on test-split ones); see services.submissions.
    gold_claims = models.JSONField(default=dict, blank=True)

    # The question set it was last scored on: question_set_sha256 of the sorted question ids
    # and their gold answers. Its scores, one row per rules version, are in Score.
    question_set_sha256 = models.CharField(max_length=64, blank=True)
    # How many tables that question set spans (its questions are the score's n and excluded).
    question_set_tables = models.PositiveIntegerField(null=True, blank=True)
    # Its scores are for questions or gold answers that have changed since: it is queued to
    # be scored again (by ``rescore``) and is never ranked beside fresh rows until then.
    stale = models.BooleanField(default=False)
    rescore = models.ForeignKey(
        "Rescore",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="submissions",
        help_text="The re-scoring that last took it up, after its question set changed.",
    )
    # Set at each scoring: the newest release holding exactly the questions and gold answers
    # scored (for this split and data scope); null when no release does.
    release = models.ForeignKey(
        "releases.Release",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The release whose questions it was scored on, if any.",
    )

    class Meta:
        ordering = ["id"]
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
            # A QA submission is on real, synthetic or demo tables; another track's is on
            # the track's items, of every source (the board shows each apart).
            models.CheckConstraint(
                condition=Q(track=QA_TRACK, data_scope__in=DataScope.values)
                | (~Q(track=QA_TRACK) & Q(data_scope="")),
                name="submission_scope_valid",
            ),
            models.CheckConstraint(
                condition=Q(track__in=[t for t, _ in TRACK_CHOICES]),
                name="submission_track_valid",
            ),
            models.CheckConstraint(
                condition=Q(track="extraction", mode__in=["region", "page"])
                | (~Q(track="extraction") & Q(mode="")),
                name="submission_mode_valid",
            ),
            models.CheckConstraint(
                condition=Q(visibility__in=Visibility.values),
                name="submission_visibility_valid",
            ),
            # A researcher's submission has an owner; a row from the paper, or a baseline
            # of the platform's own, has none. Baselines are on the tracks beside QA.
            models.CheckConstraint(
                condition=(Q(kind=Kind.SUBMISSION, owner__isnull=False))
                | Q(kind=Kind.REPORTED, owner__isnull=True)
                | (Q(kind=Kind.BASELINE, owner__isnull=True) & ~Q(track=QA_TRACK)),
                name="submission_owner_matches_kind",
            ),
            # Open models state their size; closed ones are large whatever it is. On the
            # other tracks a system may be no model at all (a PDF library).
            models.CheckConstraint(
                condition=Q(weights=Weights.CLOSED)
                | Q(parameters_billions__isnull=False)
                | ~Q(track=QA_TRACK),
                name="submission_open_models_state_size",
            ),
            models.CheckConstraint(
                condition=Q(parameters_billions__isnull=True) | Q(parameters_billions__gt=0),
                name="submission_parameters_positive",
            ),
            models.CheckConstraint(
                condition=Q(progress__lte=100), name="submission_progress_percent"
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

    def score_for(self, rules: str = DEFAULT_RULES) -> Score | None:
        """Its score under these rules, if it has one."""
        return next((s for s in self.scores.all() if s.rules == rules), None)

    @property
    def owner_only(self) -> bool:
        """Train and validation scores are never public: only the owner (and admins) see them."""
        return self.split not in BOARD_SPLITS

    @property
    def is_baseline(self) -> bool:
        return self.kind == Kind.BASELINE

    @property
    def is_qa(self) -> bool:
        return self.track == QA_TRACK

    @property
    def track_info(self) -> TrackInfo:
        return track_info(self.track)

    @property
    def main_figure(self) -> tuple[str, float | None] | None:
        """A track submission's main figure (label, value; None when withheld), from its
        score (select_related ``track_score``); None for QA or before scoring."""
        if self.is_qa:
            return None
        try:
            score = self.track_score
        except TrackScore.DoesNotExist:
            return None
        info = self.track_info
        return info.figure(info.primary, self.mode).label, score.figures.get(info.primary)


class Score(models.Model):
    """A submission's figures under one rules version of the reference scorer. Text
    submissions have both versions, vision ones 2025-05 only, and the paper's rows the
    2025-05 figures it reports."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="scores")
    rules = models.CharField(max_length=7, choices=Rules.choices)
    # Macro-averages over the answers counted (n_questions of them); null where the modality
    # has no such figure, or the paper gives none (nor any n).
    n_questions = models.PositiveIntegerField(null=True, blank=True)
    excluded = models.PositiveIntegerField(
        default=0, help_text="Answers left out of every average (2025-10: no answer, error)."
    )
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
    # Per source: its figures, or only its n and "withheld" (as below).
    by_source = models.JSONField(default=dict, blank=True)
    # Every group; those that would give hidden answers away are marked "withheld", with no
    # figure (hctqa.core.disclosure).
    breakdowns = models.JSONField(default=dict, blank=True)
    withheld = models.BooleanField(
        default=False,
        help_text="The overall figures rest on 1 to 10 test-split answers counted: they are "
        "not kept, for anyone (hctqa.core.disclosure).",
    )

    class Meta:
        ordering = ["submission_id", "rules"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "rules"], name="one_score_per_rules"),
            models.CheckConstraint(condition=Q(rules__in=Rules.values), name="score_rules_valid"),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{f}__isnull": True}) | Q(**{f"{f}__gte": 0, f"{f}__lte": 1}),
                    name=f"score_{f}_in_unit_range",
                )
                for f in _SCORE_FIELDS
            ],
        ]
        indexes = [models.Index(fields=["rules", "-recall"])]

    def __str__(self) -> str:
        return f"submission {self.submission_id} under {self.rules}"


class Rescore(Job):
    """Submissions scored again together because the questions or gold answers they were
    scored on changed: an import that moved splits or changed gold answers, the gold pool,
    a new rules version. A task on the scoring queue works through them; its progress is
    read off the submissions themselves."""

    reason = models.TextField()
    status = models.CharField(
        max_length=9, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    total = models.PositiveIntegerField(default=0, help_text="Submissions it took up.")
    created_at = models.DateTimeField(auto_now_add=True)
    # Lifecycle (plumbing.jobs.Job): the task slice holding it has the lease (a requeued or
    # duplicate message finds another and stops); its queued_at is null when it was never
    # handed to the queue (a data migration made it: the sweeper does that). It never fails
    # and its progress is read off its submissions.
    attempts = None
    error = None
    progress = None

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="rescore_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"re-scoring {self.pk}: {counted(self.total, 'submission')} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (RunStatus.QUEUED, RunStatus.RUNNING)


class QuestionResult(models.Model):
    """One question's answer and scores in one submission: every breakdown is computed from
    these."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="results")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="results")
    # None: the file answered JSON null ("no answer"); "" with answered=False: no row at all.
    prediction = models.TextField(null=True, blank=True)
    answered = models.BooleanField(default=True, help_text="False: no prediction, scored as empty.")
    # Under the 2025-05 rules.
    precision = models.FloatField(null=True, blank=True)
    recall = models.FloatField()
    f1 = models.FloatField(null=True, blank=True)
    cc = models.BooleanField()
    # Under the 2025-10 rules (text only; null for vision): whether the answer counted, and
    # its scores when it did (with the GPT label:number split, as in the overall figures).
    counted_2025_10 = models.BooleanField(null=True, blank=True)
    precision_2025_10 = models.FloatField(null=True, blank=True)
    recall_2025_10 = models.FloatField(null=True, blank=True)
    f1_2025_10 = models.FloatField(null=True, blank=True)
    cc_2025_10 = models.BooleanField(null=True, blank=True)

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
            models.CheckConstraint(
                condition=Q(counted_2025_10=True, recall_2025_10__gte=0, recall_2025_10__lte=1)
                & (Q(cc_2025_10=False) | Q(recall_2025_10=1))
                | (
                    ~Q(counted_2025_10=True)
                    & Q(recall_2025_10__isnull=True, cc_2025_10__isnull=True)
                ),
                name="result_2025_10_scored_when_counted",
            ),
        ]
        indexes = [models.Index(fields=["question", "submission"])]

    def __str__(self) -> str:
        return f"{self.question_id} in submission {self.submission_id}"


class TrackScore(models.Model):
    """A submission's figures on a track beside QA (tracks.services.scoring): each figure
    (under the names ``score_track`` prints) with its 95% bootstrap interval, per item source
    and per table property. Figures the disclosure rule withholds are null, for everyone
    (``withheld``, and ``withheld`` in each group), so nothing can show them."""

    submission = models.OneToOneField(
        Submission, on_delete=models.CASCADE, related_name="track_score"
    )
    n = models.PositiveIntegerField(help_text="Items scored.")
    figures = models.JSONField(default=dict, help_text="Figure name → value (null: withheld).")
    intervals = models.JSONField(default=dict, help_text="Figure name → [low, high].")
    by_source = models.JSONField(default=list, help_text="Per item source: n and figures.")
    breakdowns = models.JSONField(default=dict, help_text="Per table property: n and figures.")
    reasons = models.JSONField(
        default=dict, help_text="How many items scored 0 for each reason (missing, a limit…)."
    )
    withheld = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"track score of submission {self.submission_id}"


class ItemResult(models.Model):
    """One item's figures in one submission to a track beside QA: every breakdown, and the
    owner's download, is read from these. ``reason``: why it scored 0 other than by being
    wrong (no prediction, an unreadable one, a limit the SQL broke)."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="item_results"
    )
    item = models.ForeignKey("tracks.TrackItem", on_delete=models.CASCADE, related_name="results")
    figures = models.JSONField(default=dict)
    reason = models.CharField(max_length=32, blank=True)
    message = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "item"], name="one_result_per_item"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id} in submission {self.submission_id}"


class KeptUpload(models.Model):
    """A predictions file kept for a short while after its submission form came back with
    problems elsewhere (the metadata, the split), so that the researcher does not have to
    choose it again. Private like every upload (never served), for its owner only, found
    by an unguessable token the form carries, and deleted once used or past
    ``expires_at`` (the sweeper)."""

    token = models.CharField(max_length=64, unique=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    file = models.FileField(storage=private_storage, upload_to="kept/%Y/%m/")
    name = models.CharField(max_length=255, help_text="The file's name on the researcher's side.")
    size = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"kept upload {self.name} of user {self.owner_id}"


class DailyLimitEntry(models.Model):
    """One submission scored against test gold answers, counted toward its owner's daily
    limit. Entries outlive their submission: deleting one does not give a submission back.
    An inference run on test questions takes its entry when it is started, and the entry
    names its submission once the run has produced one."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    inference_run = models.ForeignKey(
        "InferenceRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name_plural = "daily limit entries"

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
    left_out = models.JSONField(
        default=list, help_text="Rows below the coverage or sanity rule: id, model_name, why."
    )

    class Meta:
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return (
            f"regression over {counted(self.submissions, 'submission')} "
            f"at {self.computed_at:%Y-%m-%d %H:%M}"
        )


# --- Inference runs ------------------------------------------------------------------------


class ResponseStatus(models.TextChoices):
    ANSWERED = "answered", "Answered"
    # The endpoint refused the request itself (a 4xx such as an image sent to a text-only
    # model): final, and scored as an empty answer.
    REJECTED = "rejected", "Rejected by the endpoint"
    # The prompt is longer than the model's context: not answered, scored as the empty answer
    # (as the benchmark's own scripts did), and counted on the run, the submission and the
    # board row. Sent again when the run is resumed (the server may have a longer context).
    TOO_LONG = "too_long", "Over the model's context length"
    # No answer after every retry (429s, 5xx, timeouts): sent again when the run resumes.
    FAILED = "failed", "No answer after retries"


INFERENCE_FORMATS = [(v, label) for v, label in TableFormat.choices if v in TABLE_FORMATS]
INFERENCE_STYLES = [(v, label) for v, label in PromptStyle.choices if v in PROMPT_STYLES]
ACTIVE_RUN_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)


class InferenceRun(Outcome, Job):
    """The benchmark's questions sent to a model behind an OpenAI-compatible endpoint. Each
    answer is saved as it arrives; when all are in, the run becomes a scored submission.

    The endpoint is one an admin registered (its key stays on the worker, in the variable
    the endpoint names), or the researcher's own: then their key, if it needs one, is kept
    sealed only while the run may still send (see endpoints.keys), and no key the server
    holds is ever sent there."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="inference_runs"
    )

    # The model and where it answers
    model_name = models.CharField(max_length=200)
    endpoint = models.ForeignKey(
        "endpoints.Endpoint",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="inference_runs",
        help_text="The registered endpoint; empty for the researcher's own.",
    )
    base_url = models.CharField(max_length=500, help_text="Where the requests went.")
    # The researcher's own key, sealed; erased when the run ends. Never shown.
    sealed_api_key = models.TextField(blank=True, editable=False)
    api_key_given = models.BooleanField(
        default=False,
        editable=False,
        help_text="The researcher gave a key for their own endpoint (resuming asks for it).",
    )
    system_role = models.BooleanField(
        default=True, help_text="False: the system text starts the first user message."
    )

    # The task: QA's questions, or a track's items (its mode: extraction's region given).
    track = models.CharField(max_length=16, choices=TRACK_CHOICES, default=QA_TRACK, db_index=True)
    mode = models.CharField(max_length=8, blank=True)

    # How it is asked
    modality = models.CharField(max_length=6, choices=Modality.choices)
    table_format = models.CharField(max_length=16, choices=INFERENCE_FORMATS)
    prompt_style = models.CharField(
        max_length=16, choices=INFERENCE_STYLES, default=PromptStyle.ZERO_SHOT
    )
    split = models.CharField(max_length=10, choices=EvalSplit.choices)
    data_scope = models.CharField(max_length=9, choices=DataScope.choices)
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=128)
    concurrency = models.PositiveSmallIntegerField(
        default=8, help_text="Requests in flight at once."
    )
    use_cache = models.BooleanField(
        default=True, help_text="Reuse saved answers to the same prompt by the same model."
    )

    # The board row it becomes
    organisation = models.CharField(max_length=200, blank=True)
    parameters_billions = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    weights = models.CharField(max_length=6, choices=Weights.choices)
    visibility = models.CharField(
        max_length=7, choices=Visibility.choices, default=Visibility.PUBLIC
    )
    description = models.TextField(blank=True)

    # Lifecycle
    status = models.CharField(
        max_length=9, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    cancel_requested = models.BooleanField(default=False)
    total = models.PositiveIntegerField(default=0)
    answered = models.PositiveIntegerField(default=0, help_text="Cache hits included.")
    cached = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    too_long = models.PositiveIntegerField(
        default=0,
        help_text="Prompts over the model's context length: not answered, scored as empty.",
    )
    # Lifecycle (plumbing.jobs.Job): the executor holding the run has the lease, which
    # heartbeats and saves check, so two workers can never work on one run at once.
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Executions started since it was last queued by hand."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    submission = models.OneToOneField(
        Submission,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="inference_run",
    )
    # Everything needed to run it again the same way (see services.inference).
    config = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="inference_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(modality__in=Modality.values), name="inference_modality_valid"
            ),
            models.CheckConstraint(
                condition=Q(table_format__in=TABLE_FORMATS)
                | (~Q(track=QA_TRACK) & Q(table_format=TableFormat.OTHER)),
                name="inference_format_valid",
            ),
            # A vision model reads the table as an image, a text model never does.
            models.CheckConstraint(
                condition=Q(modality=Modality.VISION, table_format=TableFormat.IMAGE)
                | (Q(modality=Modality.TEXT) & ~Q(table_format=TableFormat.IMAGE)),
                name="inference_format_matches_modality",
            ),
            models.CheckConstraint(
                condition=Q(track__in=[t for t, _ in TRACK_CHOICES]),
                name="inference_track_valid",
            ),
            models.CheckConstraint(
                condition=Q(prompt_style__in=PROMPT_STYLES), name="inference_style_valid"
            ),
            models.CheckConstraint(
                condition=Q(split__in=EvalSplit.values), name="inference_split_valid"
            ),
            models.CheckConstraint(
                condition=Q(track=QA_TRACK, data_scope__in=DataScope.values)
                | (~Q(track=QA_TRACK) & Q(data_scope="")),
                name="inference_scope_valid",
            ),
            models.CheckConstraint(
                condition=Q(weights__in=Weights.values), name="inference_weights_valid"
            ),
            models.CheckConstraint(
                condition=Q(visibility__in=Visibility.values), name="inference_visibility_valid"
            ),
            models.CheckConstraint(
                condition=Q(weights=Weights.CLOSED)
                | Q(parameters_billions__isnull=False)
                | ~Q(track=QA_TRACK),
                name="inference_open_models_state_size",
            ),
            models.CheckConstraint(
                condition=Q(parameters_billions__isnull=True) | Q(parameters_billions__gt=0),
                name="inference_parameters_positive",
            ),
            models.CheckConstraint(
                condition=Q(temperature__gte=0, temperature__lte=2),
                name="inference_temperature_range",
            ),
            models.CheckConstraint(
                condition=Q(max_tokens__gte=1, max_tokens__lte=8192),
                name="inference_max_tokens_range",
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1, concurrency__lte=256),
                name="inference_concurrency_range",
            ),
            models.CheckConstraint(
                condition=~Q(model_name="") & ~Q(base_url=""), name="inference_endpoint_given"
            ),
            # A registered endpoint's key stays on the worker; a researcher's own key is
            # held only while the run can still send (queued or running).
            models.CheckConstraint(
                condition=Q(endpoint__isnull=True) | Q(sealed_api_key="", api_key_given=False),
                name="inference_registered_endpoint_holds_no_key",
            ),
            models.CheckConstraint(
                condition=Q(sealed_api_key="") | Q(status__in=ACTIVE_RUN_STATUSES),
                name="inference_key_erased_when_run_ends",
            ),
            models.CheckConstraint(
                condition=Q(cached__lte=F("answered")), name="inference_cached_within_answered"
            ),
            models.CheckConstraint(
                condition=Q(answered__lte=F("total") - F("failed") - F("too_long")),
                name="inference_counts_within_total",
            ),
        ]
        indexes = [models.Index(fields=["created_by", "-created_at"])]

    def __str__(self) -> str:
        return f"inference run {self.pk}: {self.model_name} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:inference_run_detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_RUN_STATUSES

    @property
    def is_qa(self) -> bool:
        return self.track == QA_TRACK

    @property
    def is_settled(self) -> bool:
        """Nothing about it changes any more: the run has stopped, and its board entry, if it
        has one, is scored or failed. Its pages follow it until then."""
        return not self.is_active and (self.submission is None or self.submission.is_finished)

    @property
    def own_endpoint(self) -> bool:
        return self.endpoint_id is None

    @property
    def needs_api_key(self) -> bool:
        """Resuming needs the researcher's key again: it was erased when the run ended."""
        return self.own_endpoint and self.api_key_given and not self.sealed_api_key

    @property
    def is_resumable(self) -> bool:
        """Stopped, or with no sign of a worker for INFERENCE_STALE_AFTER_SECONDS."""
        if self.status in (RunStatus.FAILED, RunStatus.CANCELLED):
            return True
        if self.status == RunStatus.RUNNING:
            return self.is_silent(settings.INFERENCE_STALE_AFTER_SECONDS)
        stale = timezone.now() - timedelta(seconds=settings.INFERENCE_STALE_AFTER_SECONDS)
        if self.status == RunStatus.QUEUED:
            return self.queued_at is None or self.queued_at < stale
        return False

    def tally(self) -> tuple[int, int]:
        return self.answered, self.failed

    @property
    def progress(self) -> int:
        """Percent of the questions settled (answered, given up, or over the model's context),
        for the progress bar."""
        if not self.total:
            return 0
        return min(100, (100 * (self.answered + self.failed + self.too_long)) // self.total)

    @property
    def context_length(self) -> int | None:
        """The model's context length in tokens, as the endpoint reported it when the run
        started (None: it does not say)."""
        value = self.config.get("context_length")
        return value if isinstance(value, int) else None


class InferenceResponse(models.Model):
    """One question's (or a track item's) reply in one run, saved the moment it arrives."""

    run = models.ForeignKey(InferenceRun, on_delete=models.CASCADE, related_name="responses")
    question = models.ForeignKey(
        Question, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    item = models.ForeignKey(
        "tracks.TrackItem", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(
        max_length=8, choices=ResponseStatus.choices, default=ResponseStatus.ANSWERED
    )
    response = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=32, blank=True)
    error = models.TextField(blank=True)
    prompt_sha256 = models.CharField(max_length=64)
    from_cache = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=1, help_text="0 for a cache hit.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "question"], name="one_response_per_question"),
            models.UniqueConstraint(fields=["run", "item"], name="one_response_per_item"),
            # A reply is to a question (QA) or to a track's item, never both.
            models.CheckConstraint(
                condition=Q(question__isnull=True) ^ Q(item__isnull=True),
                name="response_question_or_item",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ResponseStatus.values), name="response_status_valid"
            ),
            # An answer carries no error; anything else says what went wrong.
            models.CheckConstraint(
                condition=Q(status=ResponseStatus.ANSWERED, error="")
                | (~Q(status=ResponseStatus.ANSWERED) & ~Q(error="")),
                name="response_error_matches_status",
            ),
            models.CheckConstraint(
                condition=Q(from_cache=False) | Q(status=ResponseStatus.ANSWERED),
                name="response_cache_hits_are_answers",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]

    def __str__(self) -> str:
        return f"{self.question_id or self.item_id} in run {self.run_id} ({self.status})"


class CachedResponse(models.Model):
    """A model's answer to one prompt, keyed by model, endpoint, prompt, decoding parameters
    and the credential it was made under (``key`` is their SHA-256), so an identical request
    under the same credential is never sent twice. The credential is a registered endpoint
    and its key (shared by the people who may use it) or a person and their own key; keys
    enter only as a keyed hash. Deleting the endpoint or the person deletes its answers."""

    key = models.CharField(max_length=64, unique=True)
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Made on this person's own endpoint.",
    )
    model_name = models.CharField(max_length=200)
    base_url = models.CharField(max_length=500)
    prompt_sha256 = models.CharField(max_length=64)
    response = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(endpoint__isnull=True) ^ Q(owner__isnull=True),
                name="cached_response_endpoint_or_owner",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model_name}: {self.prompt_sha256[:12]}"
