from django.contrib import admin
from django.http import HttpRequest

from annotation.models import (
    AnnotationSkip,
    DiscardedVerification,
    GenerationItem,
    GenerationRun,
    PropertyAnnotation,
    Question,
    QuestionAuthoring,
    QuestionDraft,
    SyntheticRun,
    SyntheticTable,
    Table,
    VerificationOutcome,
    VerificationSlot,
    VerifierStanding,
)


class QuestionInline(admin.TabularInline):
    model = Question
    fields = ("id", "origin", "text", "gold_answer", "status")
    extra = 0
    show_change_link = True


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("id", "source", "split", "updated_at")
    list_filter = ("source", "split")
    search_fields = ("id",)
    inlines = [QuestionInline]


@admin.register(SyntheticTable)
class SyntheticTableAdmin(admin.ModelAdmin):
    list_display = ("table", "family")
    list_filter = ("family",)
    search_fields = ("table__id",)
    raw_id_fields = ("table",)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("id", "table", "origin", "status", "template_number")
    list_filter = ("origin", "status", "table__source", "table__split")
    search_fields = ("id", "text", "gold_answer")
    raw_id_fields = ("table",)
    list_select_related = ("table",)


class _WorkflowRecordAdmin(admin.ModelAdmin):
    """Records the annotation and verification services write. Admins read them here; edits
    go through the tools, which keep the invariants (leases, slot counts, versions)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(PropertyAnnotation)
class PropertyAnnotationAdmin(_WorkflowRecordAdmin):
    list_display = ("table", "annotator", "source", "version", "saved_at", "seconds_spent")
    list_filter = ("source",)
    search_fields = ("table__id", "annotator__username")
    list_select_related = ("annotator",)


@admin.register(AnnotationSkip)
class AnnotationSkipAdmin(_WorkflowRecordAdmin):
    list_display = ("table", "annotator", "tool", "created_at")
    list_filter = ("tool",)
    list_select_related = ("annotator",)


@admin.register(QuestionDraft)
class QuestionDraftAdmin(_WorkflowRecordAdmin):
    list_display = ("table", "annotator", "updated_at", "seconds_spent")
    search_fields = ("table__id", "annotator__username")
    list_select_related = ("annotator",)


@admin.register(QuestionAuthoring)
class QuestionAuthoringAdmin(_WorkflowRecordAdmin):
    list_display = ("question", "annotator", "template", "seconds_spent", "created_at")
    search_fields = ("question__id", "annotator__username")
    list_select_related = ("annotator",)


@admin.register(VerificationSlot)
class VerificationSlotAdmin(_WorkflowRecordAdmin):
    list_display = (
        "question",
        "kind",
        "slot_number",
        "status",
        "annotator",
        "rating",
        "lease_expires_at",
        "submitted_at",
    )
    list_filter = ("kind", "status", "rating")
    search_fields = ("question__id", "annotator__username")
    list_select_related = ("annotator",)


@admin.register(VerificationOutcome)
class VerificationOutcomeAdmin(_WorkflowRecordAdmin):
    list_display = ("question", "rating", "answer_corrected", "adjudicator", "decided_at")
    list_filter = ("rating", "answer_corrected")
    search_fields = ("question__id",)
    list_select_related = ("adjudicator",)


@admin.register(DiscardedVerification)
class DiscardedVerificationAdmin(_WorkflowRecordAdmin):
    list_display = ("question", "annotator", "rating", "submitted_at", "discarded_at")
    search_fields = ("question__id", "annotator__username")
    list_select_related = ("annotator",)


@admin.register(VerifierStanding)
class VerifierStandingAdmin(_WorkflowRecordAdmin):
    list_display = ("user", "removed_at", "reason")
    list_select_related = ("user",)


class GenerationItemInline(admin.TabularInline):
    model = GenerationItem
    fields = ("table", "status", "attempts", "questions_created", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(GenerationRun)
class GenerationRunAdmin(_WorkflowRecordAdmin):
    list_display = (
        "id",
        "model",
        "endpoint",
        "status",
        "tables_done",
        "tables_total",
        "created_at",
    )
    list_filter = ("status", "endpoint")
    list_select_related = ("endpoint",)
    inlines = [GenerationItemInline]


@admin.register(SyntheticRun)
class SyntheticRunAdmin(_WorkflowRecordAdmin):
    list_display = ("id", "status", "stage", "tables_created", "questions_created", "created_at")
    list_filter = ("status",)


@admin.register(GenerationItem)
class GenerationItemAdmin(_WorkflowRecordAdmin):
    list_display = ("run", "table", "status", "attempts", "questions_created")
    list_filter = ("status",)
    search_fields = ("table__id",)
