"""Reads of the discussion threads, and who may read which.

A table's thread is for those who make the dataset: annotators, adjudicators and admins
(``discussion.view_comment``), never the public nor researchers. A question's thread is for
those of them who may see the question (``questions_visible``: gold-pool and unverified model
questions are admins') and its gold answer (``gold_answer_visible``: test-split gold is
admins'), since a comment may well quote that answer."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page
from django.db.models import Count, Q, QuerySet
from django.http import Http404
from django.urls import reverse

from dataset.models import Question, Split, Table
from dataset.selectors import can_see_test_gold, question_list_for_table, questions_visible
from discussion.models import Comment
from plumbing.pagination import page_with_count

# @name: a username as Django allows it (letters, digits, @ . + - _), after a space or at the
# start; a full stop ending a sentence is not part of it.
# Comments on a page of a thread.
THREAD_PAGE_SIZE = 50
MENTION = re.compile(r"(?<![\w@.+-])@([\w.@+-]+)")


def can_discuss(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm("discussion.view_comment"))


def questions_discussable(*, user: Any) -> QuerySet[Question]:
    """The questions whose threads this user may read: those they may see, with a gold answer
    they may see."""
    if not can_discuss(user):
        return Question.objects.none()
    questions = questions_visible(user=user)
    if not can_see_test_gold(user):
        questions = questions.exclude(table__split=Split.TEST)
    return questions


def may_read_question_thread(*, user: Any, question: Question) -> bool:
    return questions_discussable(user=user).filter(pk=question.pk).exists()


def discussable_question_get(*, user: Any, question_id: str) -> Question:
    """The question, if this user may read its thread; otherwise 404, as if it did not exist
    (a refusal would tell that a private question exists)."""
    question = (
        questions_discussable(user=user)
        .select_related("table")
        .defer("table__canonical_csv")
        .filter(pk=question_id)
        .first()
    )
    if question is None:
        raise Http404("There is no question with this id, or its thread is not open to you")
    return question


@dataclass(frozen=True)
class Part:
    text: str
    mention: bool


def parts(body: str) -> list[Part]:
    """The comment's text in pieces, each @name marked, for the page to escape and show."""
    out: list[Part] = []
    at = 0
    for match in MENTION.finditer(body):
        name = match.group(1).rstrip(".")
        start, end = match.start(), match.start() + 1 + len(name)
        if start > at:
            out.append(Part(body[at:start], False))
        out.append(Part(body[start:end], True))
        at = end
    if at < len(body):
        out.append(Part(body[at:], False))
    return out


def mentioned_names(body: str) -> list[str]:
    """The @names in a comment, each once, in order."""
    return list(dict.fromkeys(m.group(1).rstrip(".") for m in MENTION.finditer(body)))


def _thread_comments(*, table_id: str, question_id: str | None) -> QuerySet[Comment]:
    return Comment.objects.filter(table_id=table_id, question_id=question_id).order_by(
        "created_at", "pk"
    )


def thread(*, table: Table, question: Question | None, number: int | None = None) -> Page:
    """A page of a thread's comments, oldest first, each with ``parts``: page ``number``, or
    the last (the newest comments, next to the form). Two queries at most."""
    comments = _thread_comments(table_id=table.pk, question_id=question.pk if question else None)
    if number is None:
        number = max(1, -(-comments.count() // THREAD_PAGE_SIZE))
    page = page_with_count(comments.select_related("author"), number=number, size=THREAD_PAGE_SIZE)
    for comment in page.object_list:
        comment.parts = parts(comment.body)  # type: ignore[attr-defined]
    return page


def comment_url(comment: Comment) -> str:
    """Where a comment is: its thread's page, at the comment. One query."""
    before = _thread_comments(table_id=comment.table_id, question_id=comment.question_id)
    position = before.filter(
        Q(created_at__lt=comment.created_at) | Q(created_at=comment.created_at, pk__lte=comment.pk)
    ).count()
    number = max(1, -(-position // THREAD_PAGE_SIZE))
    url = thread_url(table_id=comment.table_id, question_id=comment.question_id)
    return f"{url}?page={number}#c-{comment.pk}"


@dataclass(frozen=True)
class QuestionThread:
    question: Question
    comments: int


def question_threads(*, table: Table, viewer: Any) -> list[QuestionThread]:
    """The table's questions whose threads this viewer may read, each with its number of
    comments, in the table page's order. Two queries."""
    if not can_discuss(viewer) or (table.split == Split.TEST and not can_see_test_gold(viewer)):
        return []
    questions = question_list_for_table(table=table, viewer=viewer)
    counts = dict(
        Comment.objects.filter(table=table, question_id__in=[q.pk for q in questions])
        .values("question_id")
        .annotate(n=Count("pk"))
        .values_list("question_id", "n")
    )
    return [QuestionThread(q, counts.get(q.pk, 0)) for q in questions]


def comment_counts(*, table: Table, viewer: Any) -> tuple[int, int]:
    """(comments on the table's own thread, on the threads of its questions this viewer may
    read): for the links to the discussion. One query; nothing for anyone else."""
    if not can_discuss(viewer):
        return 0, 0
    found = Comment.objects.filter(table=table).aggregate(
        own=Count("pk", filter=Q(question__isnull=True)),
        questions=Count(
            "pk", filter=Q(question__in=questions_discussable(user=viewer).filter(table=table))
        ),
    )
    return found["own"], found["questions"]


def mentions_withdrawn(user: Any, notifications: list[Any]) -> set[int]:
    """The notifications that lead to a thread this person may no longer read (a question
    made admins', a role taken away): their excerpt of the comment is not shown. One query."""
    tables = reverse("discussion:table", args=["x"])[: -len("x/")]
    questions = reverse("discussion:question", args=["x"])[: -len("x/")]
    asked: dict[int, str] = {}
    withdrawn: set[int] = set()
    for item in notifications:
        path = item.url.partition("#")[0].partition("?")[0]
        if path.startswith(questions):
            asked[item.pk] = path[len(questions) :].strip("/")
        elif path.startswith(tables) and not can_discuss(user):
            withdrawn.add(item.pk)
    if asked:
        readable = set(
            questions_discussable(user=user)
            .filter(pk__in=set(asked.values()))
            .values_list("pk", flat=True)
        )
        withdrawn |= {pk for pk, question in asked.items() if question not in readable}
    return withdrawn


def thread_url(*, table_id: str, question_id: str | None) -> str:
    if question_id:
        return reverse("discussion:question", args=[question_id])
    return reverse("discussion:table", args=[table_id])
