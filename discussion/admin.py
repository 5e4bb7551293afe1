from django.contrib import admin
from django.http import HttpRequest

from discussion.models import Comment


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    """Comments are written on the discussion pages; here admins find them and delete one
    that should not stand. Read only otherwise."""

    list_display = ("table", "question", "author", "created_at", "short_body")
    search_fields = ("table__id", "question__id", "author__username", "body")
    list_select_related = ("author",)
    readonly_fields = ("table", "question", "author", "body", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="comment")
    def short_body(self, comment: Comment) -> str:
        return comment.body if len(comment.body) <= 80 else comment.body[:79] + "…"
