"""The dataset in the Django admin. Pool membership of questions is annotation's (its admin
adds the actions that change it)."""

from django.contrib import admin
from django.http import HttpRequest

from dataset.models import Collection, Question, SyntheticTable, Table


class QuestionInline(admin.TabularInline):
    model = Question
    fields = ("id", "origin", "text", "gold_answer", "status")
    extra = 0
    show_change_link = True


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ("code", "name", "publisher", "licence", "ocr_language", "created_at")
    search_fields = ("code", "name", "publisher")

    def get_readonly_fields(self, request: HttpRequest, obj: Collection | None = None) -> tuple:
        # The code is in its tables' ids: it never changes once there are any.
        return ("code",) if obj is not None else ()


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("id", "source", "split", "updated_at")
    list_filter = ("source", "split")
    search_fields = ("id", "title")
    inlines = [QuestionInline]


@admin.register(SyntheticTable)
class SyntheticTableAdmin(admin.ModelAdmin):
    list_display = ("table", "family")
    list_filter = ("family",)
    search_fields = ("table__id",)
    raw_id_fields = ("table",)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("id", "table", "origin", "status", "in_gold_pool", "template_number")
    list_filter = ("origin", "status", "in_gold_pool", "table__source", "table__split")
    search_fields = ("id", "text", "gold_answer")
    raw_id_fields = ("table",)
    list_select_related = ("table",)
    # Pool membership goes through annotation's service, which checks each question is fit
    # to be gold and has the affected submissions scored again.
    readonly_fields = ("in_gold_pool",)
