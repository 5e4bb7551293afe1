"""Inference runs, their responses as they arrive, and the cache of answers."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from dataset.models import Question
from hctqa.core.outcomes import Outcome
from hctqa.core.prompts import PROMPT_STYLES, TABLE_FORMATS
from leaderboard.models.choices import (
    QA_TRACK,
    TRACK_CHOICES,
    DataScope,
    EvalSplit,
    Modality,
    PromptStyle,
    TableFormat,
    Visibility,
    Weights,
)
from leaderboard.models.submissions import Submission
from plumbing.jobs import Job, RunStatus


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
