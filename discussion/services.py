"""Writing comments, and telling those they mention."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.mail import one_line
from accounts.models import Notification
from accounts.services import lock_user, notify
from dataset.models import Question, Table
from discussion.models import COMMENT_MAX, Comment
from discussion.permissions import DISCUSSING
from discussion.selectors import (
    can_discuss,
    comment_url,
    may_read_question_thread,
    mentioned_names,
    thread_url,
)
from hctqa.core.hidden_text import LINE_BREAKS, hidden_problem
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError

# People one comment may mention: a longer list is a broadcast, not a mention.
MENTIONS_MAX = 10
_RATE_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class Posted:
    comment: Comment
    told: list[str] = field(default_factory=list)
    # Mentioned, but not told: no such account, or one that may not read this thread.
    not_told: list[str] = field(default_factory=list)


def _check_rate(author: Any) -> None:
    limit = settings.COMMENTS_PER_HOUR
    if limit <= 0:
        return
    since = timezone.now() - _RATE_WINDOW
    recent = list(
        Comment.objects.filter(author=author, created_at__gte=since)
        .order_by("created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(recent) >= limit:
        wait = max(1, int((recent[0] + _RATE_WINDOW - timezone.now()).total_seconds() // 60) + 1)
        raise ApplicationError(
            f"You have written {counted(limit, 'comment')} in the last hour, the most one "
            f"person may; write again in {counted(wait, 'minute')} (your text is kept below)",
            field="body",
        )


def _may_read(user: Any, question: Question | None) -> bool:
    if not can_discuss(user):
        return False
    return question is None or may_read_question_thread(user=user, question=question)


@transaction.atomic
def comment_post(*, author: Any, table: Table, question: Question | None, body: str) -> Posted:
    """Add a comment to the table's thread, or to its question's. Those it mentions (@name)
    who may read the thread are told, in the menu and (if they asked) by email; the others
    are listed for the author. At most COMMENTS_PER_HOUR comments per person an hour."""
    DISCUSSING.check(author)
    if not author.has_perm("discussion.add_comment"):
        raise ApplicationError("Your account may read discussions but not write in them")
    if question is not None and (
        question.table_id != table.pk
        or not may_read_question_thread(user=author, question=question)
    ):
        raise ApplicationError("That question's thread is not open to you", field="question")
    body = body.strip()
    if not body:
        raise ApplicationError("Write something first", field="body")
    if wrong := hidden_problem("The comment", body, allowed=LINE_BREAKS):
        raise ApplicationError(wrong, field="body")
    if len(body) > COMMENT_MAX:
        raise ApplicationError(
            f"A comment is at most {COMMENT_MAX:,} characters; this one has {len(body):,}",
            field="body",
        )
    names = mentioned_names(body)
    if len(names) > MENTIONS_MAX:
        raise ApplicationError(
            f"Mention at most {MENTIONS_MAX} people in one comment", field="body"
        )
    lock_user(author)  # two tabs posting at once count one after the other
    _check_rate(author)
    comment = Comment.objects.create(table=table, question=question, author=author, body=body)
    told, not_told = _tell_mentioned(comment, names)
    return Posted(comment, told, not_told)


def _tell_mentioned(comment: Comment, names: list[str]) -> tuple[list[str], list[str]]:
    """Tell those mentioned who may read the thread. Each name is echoed as the author typed
    it, and one not told is one not told whether the account does not exist or may not read
    the thread: the answer tells no more than the author wrote. Someone who has not read
    their last mention on this thread has it brought up to date instead of getting another
    (nor another email): a thread mentions a person once until they look."""
    author = comment.author
    wanted = {name.casefold(): name for name in names}
    if not wanted:
        return [], []
    lookup = Q()
    for name in wanted.values():
        lookup |= Q(username__iexact=name)
    users = {
        u.username.casefold(): u
        for u in get_user_model().objects.filter(lookup, is_active=True).select_related("account")
    }
    where = (
        f"question {comment.question_id}" if comment.question_id else f"table {comment.table_id}"
    )
    url = thread_url(table_id=comment.table_id, question_id=comment.question_id)
    text = f"{author.username} mentioned you on {where}: “{one_line(comment.body, 120)}”"
    readers = [
        user
        for user in users.values()
        if user.pk != author.pk and _may_read(user, comment.question)
    ]
    unread = {
        n.recipient_id: n
        for n in Notification.objects.filter(
            Q(url__startswith=f"{url}?page=") | Q(url__startswith=f"{url}#c-"),
            recipient__in=readers,
            read_at__isnull=True,
        ).order_by("recipient_id", "created_at")  # the latest last, kept
    }
    link = comment_url(comment) if readers else ""
    told_ids = set()
    for user in readers:
        told_ids.add(user.pk)
        if (pending := unread.get(user.pk)) is not None:
            pending.text, pending.url = one_line(text, 400), link
            pending.created_at = timezone.now()
            pending.save(update_fields=["text", "url", "created_at"])
            continue
        account = getattr(user, "account", None)
        notify(
            recipient=user,
            text=text,
            url=link,
            email=bool(account and account.email_on_mention),
            body=f"{author.username} wrote on {where}:\n\n{comment.body}",
        )
    told, not_told = [], []
    for key, name in wanted.items():
        user = users.get(key)
        if user is not None and user.pk == author.pk:
            continue
        (told if user is not None and user.pk in told_ids else not_told).append(name)
    return told, not_told
