from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest

from annotation import services
from annotation.models import (
    AnnotationSkip,
    Assignment,
    DiscardedVerification,
    Flag,
    GenerationItem,
    GenerationRun,
    PropertyAnnotation,
    QuestionAuthoring,
    QuestionDraft,
    SyntheticRun,
    VerificationOutcome,
    VerificationSlot,
    VerifierStanding,
)
from dataset import admin as dataset_admin
from dataset.models import Question
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError

# The dataset's question admin, with the actions that put questions in the private gold
# pool and take them out (dataset comes before annotation in INSTALLED_APPS).
admin.site.unregister(Question)


@admin.register(Question)
class QuestionAdmin(dataset_admin.QuestionAdmin):
    actions = ["add_to_gold_pool", "remove_from_gold_pool"]

    def _change_pool(self, request: HttpRequest, queryset: QuerySet[Question], add: bool) -> None:
        change = services.gold_pool_add if add else services.gold_pool_remove
        try:
            done = change(
                admin=request.user, question_ids=list(queryset.values_list("pk", flat=True))
            )
        except (ApplicationError, PermissionDenied) as exc:
            message = exc.message if isinstance(exc, ApplicationError) else str(exc)
            self.message_user(request, f"Not saved: {message}", messages.ERROR)
            return
        verb = "added to" if add else "taken out of"
        self.message_user(
            request,
            f"{counted(len(done.changed), 'question')} {verb} the gold pool, "
            f"{len(done.unchanged):,} already so.",
            messages.SUCCESS,
        )

    @admin.action(description="Add to the gold pool (private gold control)")
    def add_to_gold_pool(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        self._change_pool(request, queryset, add=True)

    @admin.action(description="Take out of the gold pool")
    def remove_from_gold_pool(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        self._change_pool(request, queryset, add=False)


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


@admin.register(Assignment)
class AssignmentAdmin(_WorkflowRecordAdmin):
    """Given out and taken back on /annotate/assignments/ (in bulk, checked)."""

    list_display = ("table", "annotator", "kind", "assigned_by", "created_at")
    list_filter = ("kind",)
    search_fields = ("table__id", "annotator__username")
    list_select_related = ("annotator", "assigned_by")


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


@admin.register(Flag)
class FlagAdmin(_WorkflowRecordAdmin):
    """Flags are resolved on /annotate/flags/, which records who did it and what was done."""

    list_display = ("table", "question", "reason", "raised_by", "raised_at", "resolved_at")
    list_filter = ("reason", ("resolved_at", admin.EmptyFieldListFilter))
    search_fields = ("table__id", "question__id", "note", "raised_by__username")
    list_select_related = ("raised_by",)


@admin.register(VerificationSlot)
class VerificationSlotAdmin(_WorkflowRecordAdmin):
    list_display = (
        "question",
        "kind",
        "slot_number",
        "status",
        "annotator",
        "rating",
        "gold_shown_wrong",
        "gold_passed",
        "lease_expires_at",
        "submitted_at",
    )
    list_filter = ("kind", "status", "rating", "gold_shown_wrong", "gold_passed")
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
