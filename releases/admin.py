from django.contrib import admin
from django.http import HttpRequest

from releases.models import Release, ReleaseBuild


class _ReadOnlyAdmin(admin.ModelAdmin):
    """A release never changes once cut, and builds are records of work: read them here; cut
    releases at /releases/ or with manage.py cut_release."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Release)
class ReleaseAdmin(_ReadOnlyAdmin):
    list_display = ("version", "title", "created_at", "created_by", "commit")
    search_fields = ("version", "title")
    exclude = ("changelog", "files")


@admin.register(ReleaseBuild)
class ReleaseBuildAdmin(_ReadOnlyAdmin):
    list_display = ("id", "version", "status", "progress", "created_at", "finished_at")
    list_filter = ("status",)
