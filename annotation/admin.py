from django.contrib import admin

from annotation.models import Question, SyntheticTable, Table


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
