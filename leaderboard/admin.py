from django.contrib import admin

from leaderboard.models import (
    CachedResponse,
    DailyLimitEntry,
    InferenceResponse,
    InferenceRun,
    ItemResult,
    KeptUpload,
    PropertyRegression,
    QuestionResult,
    Rescore,
    Score,
    Submission,
    TrackScore,
)


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "model_name",
        "kind",
        "track",
        "mode",
        "modality",
        "split",
        "data_scope",
        "status",
        "stale",
        "visibility",
        "owner",
        "created_at",
    )
    list_filter = (
        "kind",
        "track",
        "status",
        "stale",
        "modality",
        "split",
        "data_scope",
        "visibility",
        "size_class",
    )
    search_fields = ("model_name", "organisation", "owner__username")
    readonly_fields = (
        "size_class",
        "predictions_sha256",
        "question_set_sha256",
        "created_at",
        "updated_at",
    )
    raw_id_fields = ("owner", "rescore")


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ("submission", "rules", "n_questions", "excluded", "precision", "recall", "cc")
    list_filter = ("rules",)
    raw_id_fields = ("submission",)
    search_fields = ("submission__model_name",)


@admin.register(Rescore)
class RescoreAdmin(admin.ModelAdmin):
    """Progress bars: the leaderboard's re-scoring page."""

    list_display = ("id", "reason", "status", "total", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("lease", "created_at", "queued_at", "started_at", "heartbeat_at")


@admin.register(QuestionResult)
class QuestionResultAdmin(admin.ModelAdmin):
    list_display = ("submission", "question", "recall", "cc", "counted_2025_10", "recall_2025_10")
    list_filter = ("cc", "counted_2025_10")
    raw_id_fields = ("submission", "question")
    search_fields = ("question__id",)


@admin.register(DailyLimitEntry)
class DailyLimitEntryAdmin(admin.ModelAdmin):
    list_display = ("user", "submission", "inference_run", "created_at")
    raw_id_fields = ("user", "submission", "inference_run")


@admin.register(KeptUpload)
class KeptUploadAdmin(admin.ModelAdmin):
    """Read-only: the token finds the file, so it is not shown."""

    list_display = ("name", "owner", "size", "created_at", "expires_at")
    fields = ("name", "owner", "size", "created_at", "expires_at")
    readonly_fields = fields

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(PropertyRegression)
class PropertyRegressionAdmin(admin.ModelAdmin):
    list_display = ("computed_at", "submissions", "tables", "r_squared")


@admin.register(InferenceRun)
class InferenceRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "model_name",
        "created_by",
        "modality",
        "table_format",
        "split",
        "status",
        "answered",
        "total",
        "created_at",
    )
    list_filter = ("status", "endpoint", "modality", "table_format", "split", "data_scope")
    search_fields = ("model_name", "base_url", "created_by__username")
    raw_id_fields = ("created_by", "submission")
    # A researcher's own key (sealed_api_key) is not editable, so never on this page. The
    # status changes through cancel and resume, which erase and ask for that key.
    readonly_fields = (
        "status",
        "endpoint",
        "base_url",
        "api_key_given",
        "lease",
        "heartbeat_at",
        "created_at",
        "config",
    )


@admin.register(InferenceResponse)
class InferenceResponseAdmin(admin.ModelAdmin):
    list_display = ("run", "question", "status", "from_cache", "attempts", "latency_ms")
    list_filter = ("status", "from_cache")
    raw_id_fields = ("run", "question")
    search_fields = ("question__id",)


@admin.register(CachedResponse)
class CachedResponseAdmin(admin.ModelAdmin):
    list_display = ("model_name", "base_url", "endpoint", "owner", "prompt_sha256", "created_at")
    list_select_related = ("endpoint", "owner")
    raw_id_fields = ("endpoint", "owner")
    search_fields = ("model_name", "key", "prompt_sha256")


@admin.register(TrackScore)
class TrackScoreAdmin(admin.ModelAdmin):
    list_display = ("submission", "n", "withheld")
    list_filter = ("submission__track", "withheld")
    raw_id_fields = ("submission",)
    search_fields = ("submission__model_name",)


@admin.register(ItemResult)
class ItemResultAdmin(admin.ModelAdmin):
    list_display = ("submission", "item", "reason")
    list_filter = ("reason",)
    raw_id_fields = ("submission", "item")
    search_fields = ("item__item_id", "submission__model_name")
