"""Submissions and what scoring keeps: scores, per-question and per-item results, uploads."""

from __future__ import annotations

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.db import models
from django.db.models import Case, Q, Value, When
from django.urls import reverse

from dataset.models import Question
from leaderboard.models.choices import (
    BOARD_SOURCES,
    BOARD_SPLITS,
    DEFAULT_RULES,
    QA_TRACK,
    TRACK_CHOICES,
    DataScope,
    EvalSplit,
    Kind,
    Modality,
    PromptStyle,
    Rules,
    SizeClass,
    Status,
    TableFormat,
    Visibility,
    Weights,
)
from plumbing.jobs import Job
from tracks.registry import TrackInfo
from tracks.registry import track as track_info


def private_storage() -> FileSystemStorage:
    # Uploaded predictions are never served: they live outside MEDIA_ROOT.
    return FileSystemStorage(location=settings.PRIVATE_FILES_ROOT)


# A Score's figures held between 0 and 1 (its constraints).
_SCORE_FIELDS = ("precision", "recall", "f1", "cc", *(f"recall_{s}" for s in BOARD_SOURCES))


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
