"""Comments: a discussion thread on each table and on each question, among those who make the
dataset (annotators, adjudicators, admins). Who may read a question's thread follows who may
see the question and its gold answer (discussion.selectors)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual

# The longest comment.
COMMENT_MAX = 2000


class Comment(models.Model):
    """One comment, on a table's own thread (``question`` empty) or on one of its questions'."""

    table = models.ForeignKey("dataset.Table", on_delete=models.CASCADE, related_name="comments")
    question = models.ForeignKey(
        "dataset.Question",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="comments",
    )
    # Kept when the account goes: the thread still reads.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="comments",
    )
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.CheckConstraint(condition=~Q(body=""), name="comment_not_empty"),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("body"), COMMENT_MAX),
                name="comment_short",
            ),
        ]
        indexes = [
            models.Index(fields=["table", "question", "created_at"]),
            models.Index(fields=["author", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.question_id or self.table_id}"
