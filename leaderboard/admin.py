from django.contrib import admin

from leaderboard.models import DailyLimitEntry, PropertyRegression, QuestionResult, Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "model_name",
        "kind",
        "modality",
        "split",
        "data_scope",
        "status",
        "visibility",
        "recall",
        "owner",
        "created_at",
    )
    list_filter = ("kind", "status", "modality", "split", "data_scope", "visibility", "size_class")
    search_fields = ("model_name", "organisation", "owner__username")
    readonly_fields = ("size_class", "predictions_sha256", "created_at", "updated_at")
    raw_id_fields = ("owner",)


@admin.register(QuestionResult)
class QuestionResultAdmin(admin.ModelAdmin):
    list_display = ("submission", "question", "recall", "cc")
    list_filter = ("cc",)
    raw_id_fields = ("submission", "question")
    search_fields = ("question__id",)


@admin.register(DailyLimitEntry)
class DailyLimitEntryAdmin(admin.ModelAdmin):
    list_display = ("user", "submission", "created_at")
    raw_id_fields = ("user", "submission")


@admin.register(PropertyRegression)
class PropertyRegressionAdmin(admin.ModelAdmin):
    list_display = ("computed_at", "submissions", "tables", "r_squared")
