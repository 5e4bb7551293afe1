from django.contrib import admin

from ingest.models import Candidate, CandidateDraft, Document, DocumentPage


class PageInline(admin.TabularInline):
    model = DocumentPage
    fields = ("number", "status", "message", "seconds")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("__str__", "status", "page_count", "pages_done", "uploaded_by", "uploaded_at")
    list_filter = ("status", "kind", "collection")
    search_fields = ("file_name", "sha256")
    list_select_related = ("collection", "uploaded_by")
    readonly_fields = ("sha256", "stored_path", "size_bytes", "page_count", "uploaded_by")
    inlines = [PageInline]


@admin.register(DocumentPage)
class DocumentPageAdmin(admin.ModelAdmin):
    list_display = ("document", "number", "status", "seconds")
    list_filter = ("status",)
    raw_id_fields = ("document",)


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ("__str__", "page", "strategy", "status", "teds", "exact", "decided_by")
    list_filter = ("status", "strategy", "document__collection")
    raw_id_fields = ("document", "table", "decided_by")
    list_select_related = ("document__collection", "decided_by")


@admin.register(CandidateDraft)
class CandidateDraftAdmin(admin.ModelAdmin):
    list_display = ("candidate", "editor", "base_version", "updated_at")
    raw_id_fields = ("candidate", "editor")
