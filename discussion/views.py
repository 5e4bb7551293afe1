"""The discussion pages: a table's thread (with links to its questions' threads) and a
question's. Posting works as a plain form (the page comes back) and through htmx (the thread
is swapped in place)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from dataset.models import Question, Split, Table
from dataset.selectors import gold_answer_visible, table_get
from discussion import selectors, services
from discussion.models import COMMENT_MAX
from discussion.permissions import DISCUSSING
from plumbing.errors import ApplicationError
from plumbing.permissions import requires


def _thread_page(
    request: HttpRequest, *, table: Table, question: Question | None, template: str, **extra: Any
) -> HttpResponse:
    """GET shows the thread; POST adds a comment to it."""
    body = ""
    error = ""
    status = 200
    if request.method == "POST":
        body = request.POST.get("body", "")
        try:
            posted = services.comment_post(
                author=request.user, table=table, question=question, body=body
            )
        except ApplicationError as exc:
            error, status = exc.message, 400
        else:
            note = _posted_note(posted)
            if not request.htmx:
                messages.success(request, note)
                return redirect(selectors.comment_url(posted.comment))
            body, extra["posted_note"] = "", note
    context = {
        "table": table,
        "question": question,
        "page": selectors.thread(table=table, question=question, number=_page_number(request)),
        "body": body,
        "error": error,
        "comment_max": COMMENT_MAX,
        "test_split_table": question is None and table.split == Split.TEST,
        **extra,
    }
    if request.htmx:
        # htmx swaps 2xx answers only: a refused comment comes back in the thread, with its
        # reason and the text kept, as a 200.
        return render(request, "discussion/partials/_thread.html", context)
    return render(request, template, context, status=status)


def _page_number(request: HttpRequest) -> int | None:
    """The page asked for; none (the last) after a post, which shows the new comment."""
    number = request.GET.get("page", "")
    if request.method == "POST" or not number.isdigit():
        return None
    return max(1, min(int(number), 10**9))


def _posted_note(posted: services.Posted) -> str:
    note = "Comment added."
    if posted.told:
        note += f" Told: {', '.join(posted.told)}."
    if posted.not_told:
        note += (
            f" Not told (no such account, or this thread is not open to them): "
            f"{', '.join(posted.not_told)}."
        )
    return note


@login_required
@requires(DISCUSSING)
def table_thread(request: HttpRequest, table_id: str) -> HttpResponse:
    table = table_get(table_id=table_id)
    return _thread_page(
        request,
        table=table,
        question=None,
        template="discussion/table_thread.html",
        question_threads=selectors.question_threads(table=table, viewer=request.user),
    )


@login_required
@requires(DISCUSSING)
def question_thread(request: HttpRequest, question_id: str) -> HttpResponse:
    question = selectors.discussable_question_get(user=request.user, question_id=question_id)
    return _thread_page(
        request,
        table=question.table,
        question=question,
        template="discussion/question_thread.html",
        show_gold=gold_answer_visible(user=request.user, split=question.table.split),
    )
