"""Pages of the verification workflow: verifying a model-generated question, adjudicating
disagreements, the dashboard and question-generation runs. Each form also works as a plain
post, without JavaScript."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from annotation import permissions as rules
from annotation import selectors, services, shortcuts
from annotation.annotate_api import table_payload
from annotation.models import Rating
from annotation.verify_api import release_and_skip, skipped_questions
from dataset.selectors import source_choices
from endpoints.selectors import endpoint_choices
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError, ConflictError
from plumbing.pagination import page_with_count
from plumbing.permissions import requires

# --- Verifying -----------------------------------------------------------------------------


@login_required
def verify_next(request: HttpRequest) -> HttpResponse:
    slot = services.verification_claim(
        annotator=request.user, avoid_questions=skipped_questions(request)
    )
    if slot is None:
        messages.success(request, "There is nothing left to verify right now. Thank you!")
        return redirect("annotate:hub")
    return redirect("annotate:verify", slot_id=slot.public_id)


def _verdict_from(post: Any) -> services.Verdict:
    return services.Verdict(
        rating=post.get("rating", ""),
        answer_correct=post.get("answer_correct", "yes") != "no",
        corrected_answer=post.get("corrected_answer", ""),
        rewritten_question=post.get("rewritten_question", ""),
    )


def _elapsed_ms(raw: str | None) -> int:
    """Time on the page, sent by the script; garbage counts as no time, never as an error."""
    try:
        return max(0, int(raw or 0))
    except ValueError:
        return 0


@login_required
@requires(rules.VERIFYING)
def verify(request: HttpRequest, slot_id: uuid.UUID) -> HttpResponse:
    public_id, slot_id = slot_id, selectors.verification_slot_pk(public_id=slot_id)
    status = 200
    form: dict[str, str] = {}
    if request.method == "POST":
        form = {
            k: request.POST.get(k, "")
            for k in ("rating", "answer_correct", "corrected_answer", "rewritten_question")
        }
        try:
            result = services.verification_submit(
                annotator=request.user,
                slot_id=slot_id,
                verdict=_verdict_from(request.POST),
                elapsed_ms=_elapsed_ms(request.POST.get("elapsed_ms")),
            )
        except ConflictError as exc:
            messages.error(request, f"Not saved: {exc.message}.")
            return redirect("annotate:verify_next")
        except ApplicationError as exc:
            messages.error(request, f"Not saved: {exc.message}.")
            status = 400
        else:
            if result.removed_from_pool:
                # The hub says why and who can reinstate them, and no longer offers verifying.
                return redirect("annotate:hub")
            messages.success(request, "Saved.")
            return redirect("annotate:verify_next")
    slot = selectors.verification_slot_held(annotator=request.user, slot_id=slot_id)
    if slot is None:
        messages.info(
            request, "That question is no longer yours (its lease ran out); here is the next one."
        )
        return redirect("annotate:verify_next")
    payload = selectors.slot_payload(slot)
    context = {
        "slot": slot,
        "table": slot.question.table,
        "table_html": mark_safe(table_payload(slot.question.table)["html"]),  # noqa: S308 - our renderer escapes cells
        "payload": payload,
        "form": form,
        "ratings": Rating.choices,
        "progress": selectors.verifier_progress(annotator=request.user),
        "shortcuts": shortcuts.verify_tool(),
        "state": {
            "slot": str(public_id),
            "user": request.user.get_username(),
            "lease_expires_at": slot.lease_expires_at.isoformat(),
            # The slot's endpoints share this prefix: renew/, submit/, release/.
            "api": reverse("api-verify-renew", args=[public_id]).removesuffix("renew/"),
        },
    }
    return render(request, "annotation/verify/verify.html", context, status=status)


@login_required
@require_POST
@requires(rules.VERIFYING)
def verify_skip(request: HttpRequest, slot_id: uuid.UUID) -> HttpResponse:
    release_and_skip(request, selectors.verification_slot_pk(public_id=slot_id))
    return redirect("annotate:verify_next")


# --- Adjudication ----------------------------------------------------------------------------


@login_required
@requires(rules.ADJUDICATING)
def adjudication(request: HttpRequest) -> HttpResponse:
    total, items = selectors.adjudication_queue(adjudicator=request.user)
    return render(request, "annotation/verify/adjudication.html", {"total": total, "items": items})


@login_required
@requires(rules.ADJUDICATING)
def adjudicate(request: HttpRequest, question_id: str) -> HttpResponse:
    status = 200
    form: dict[str, str] = {}
    if request.method == "POST":
        form = {k: request.POST.get(k, "") for k in ("rating", "answer", "text")}
        try:
            services.adjudication_decide(adjudicator=request.user, question_id=question_id, **form)
        except ConflictError as exc:
            messages.error(request, exc.message)
            return redirect("annotate:adjudication")
        except ApplicationError as exc:
            messages.error(request, f"Not saved: {exc.message}.")
            status = 400
        else:
            messages.success(request, f"Decided {question_id}.")
            _, following = selectors.adjudication_queue(adjudicator=request.user, limit=1)
            if following:
                return redirect("annotate:adjudicate", question_id=following[0].question.pk)
            return redirect("annotate:adjudication")
    item = selectors.adjudication_item(question_id=question_id, adjudicator=request.user)
    if item is None or item.question.status != "adjudication":
        raise Http404("This question is not waiting for adjudication")
    context = {
        "item": item,
        "table": item.question.table,
        "table_html": mark_safe(table_payload(item.question.table)["html"]),  # noqa: S308
        "ratings": Rating.choices,
        "form": form,
        "shortcuts": shortcuts.adjudicate_tool(),
    }
    return render(request, "annotation/verify/adjudicate.html", context, status=status)


# --- Dashboard -----------------------------------------------------------------------------


@login_required
@requires(rules.DASHBOARD)
def dashboard(request: HttpRequest) -> HttpResponse:
    board = selectors.verification_dashboard(viewer=request.user)
    by_day = selectors.outcome_shares_by_day()
    chart = {
        "days": [d.day.isoformat() for d in by_day],
        "series": [
            {"label": label, "shares": [d.shares[value] for d in by_day]}
            for value, label in Rating.choices
        ],
    }
    context = {
        "board": board,
        "can_reinstate": rules.REINSTATING.allows(request.user),
        "by_day": by_day,
        "ratings": Rating.choices,
        "chart": chart,
    }
    return render(request, "annotation/verify/dashboard.html", context)


@login_required
@require_POST
# The role first: a 404 for a missing user would tell anyone which ids exist.
@requires(rules.REINSTATING)
def verifier_reinstate(request: HttpRequest, user_id: int) -> HttpResponse:
    person = get_object_or_404(get_user_model(), pk=user_id)
    services.verifier_reinstate(admin=request.user, user=person)
    name = person.get_username()
    messages.success(request, f"The annotator {name} is back in the verification pool.")
    return redirect("annotate:verification_dashboard")


# --- The gold pool -------------------------------------------------------------------------


GOLD_PAGE_SIZE = 100


@login_required
@requires(rules.GOLD_POOL)
def gold_pool(request: HttpRequest) -> HttpResponse:
    """The private gold pool (admins): its questions, adding and removing, and the latest
    gold verdicts with the answer each one showed."""
    status = 200
    question_ids = ""
    if request.method == "POST":
        action = request.POST.get("action", "")
        question_ids = request.POST.get("question_ids", "")
        change = {"add": services.gold_pool_add, "remove": services.gold_pool_remove}.get(action)
        try:
            if change is None:
                raise ApplicationError("Choose to add or to remove")
            done = change(admin=request.user, question_ids=question_ids.split())
        except ApplicationError as exc:
            messages.error(request, f"Not saved: {exc.message}.")
            status = 400
        else:
            verb = "added to" if action == "add" else "taken out of"
            messages.success(
                request,
                f"{counted(len(done.changed), 'question')} {verb} the gold pool "
                f"({len(done.unchanged)} already so).",
            )
            return redirect("annotate:gold_pool")
    try:
        number = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        number = 1
    username = request.GET.get("verifier", "").strip()
    context = {
        "summary": selectors.gold_control_summary(),
        "page": page_with_count(
            selectors.gold_pool_questions(), number=number, size=GOLD_PAGE_SIZE
        ),
        "verdicts": selectors.gold_verdicts(username=username),
        "verifier": username,
        "question_ids": question_ids,
    }
    return render(request, "annotation/verify/gold_pool.html", context, status=status)


# --- Question generation -------------------------------------------------------------------


@login_required
@requires(rules.GENERATING)
def generation(request: HttpRequest) -> HttpResponse:
    status = 200
    sources = source_choices()
    source = request.GET.get("source", "")
    source = source if source in dict(sources) else ""
    try:
        count = max(1, min(int(request.GET.get("count", "10")), 2000))
    except ValueError:
        count = 10
    endpoints = endpoint_choices(user=request.user)
    # The list of tables is filled only when asked ("Fill the list"), never on its own.
    offered = (
        selectors.tables_without_generated_questions(
            source=source, limit=count, include_test_split=settings.GENERATION_ALLOW_TEST_SPLIT
        )
        if "count" in request.GET or "source" in request.GET
        else []
    )
    form = {
        "endpoint": endpoints[0][0] if endpoints else "",
        "model": "",
        "questions_per_table": "8",
        "use_images": "",
        "table_ids": "\n".join(offered),
    }
    if request.method == "POST":
        form = {k: request.POST.get(k, "") for k in form}
        try:
            run = services.generation_run_create(
                user=request.user,
                endpoint=form["endpoint"],
                model=form["model"],
                table_ids=form["table_ids"].split(),
                use_images=bool(form["use_images"]),
                questions_per_table=int(form["questions_per_table"] or 0),
            )
        except ValueError:
            messages.error(request, "Not started: questions per table should be a number.")
            status = 400
        except ApplicationError as exc:
            messages.error(request, f"Not started: {exc.message}.")
            status = 400
        else:
            # No flash message: the run page's own status line says queued, then running,
            # done or failed; a "queued" banner would outlive it.
            return redirect("annotate:generation_run", run_id=run.pk)
    context = {
        "form": form,
        "endpoints": endpoints,
        "sources": sources,
        "source": source,
        "count": count,
        "runs": selectors.generation_runs(limit=20),
        "test_split_allowed": settings.GENERATION_ALLOW_TEST_SPLIT,
    }
    return render(request, "annotation/verify/generation.html", context, status=status)


@login_required
@requires(rules.GENERATING)
def generation_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.generation_run_get(run_id=run_id)
    if run is None:
        raise Http404(f"No generation run {run_id}")
    context = {"run": run, "failures": selectors.generation_failures(run_id=run.pk)}
    if request.htmx:
        return render(request, "annotation/verify/partials/run_progress.html", context)
    return render(request, "annotation/verify/generation_run.html", context)


@login_required
@require_POST
def generation_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        services.generation_run_cancel(user=request.user, run_id=run_id)
    except ApplicationError as exc:  # includes ConflictError
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Run {run_id} is cancelled; tables already done stay saved.")
    return redirect("annotate:generation_run", run_id=run_id)


@login_required
@require_POST
def generation_resume(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        services.generation_run_resume(user=request.user, run_id=run_id)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Run {run_id} resumed; failed tables will be retried.")
    return redirect("annotate:generation_run", run_id=run_id)


@login_required
@requires(rules.VERIFYING)
def verdict_change(request: HttpRequest, slot_id: uuid.UUID) -> HttpResponse:
    """Change a verdict already given, while its question waits for the other one."""
    slot = selectors.verdict_given(annotator=request.user, public_id=slot_id)
    status = 200
    form = {
        "rating": slot.rating,
        "answer_correct": "no" if slot.answer_correct is False else "yes",
        "corrected_answer": slot.corrected_answer,
        "rewritten_question": slot.rewritten_question,
    }
    base = slot.submitted_at.isoformat()
    if request.method == "POST":
        form = {k: request.POST.get(k, "") for k in form}
        base = request.POST.get("base_submitted_at", "")
        try:
            services.verification_change(
                annotator=request.user,
                slot_id=slot.pk,
                verdict=_verdict_from(request.POST),
                base_submitted_at=base,
            )
        except ConflictError as exc:
            messages.error(request, f"Not saved: {exc.message}.")
            return redirect("annotate:recent")
        except ApplicationError as exc:
            messages.error(request, f"Not saved: {exc.message}.")
            status = 400
        else:
            messages.success(request, "Saved your changed verdict.")
            return redirect("annotate:recent")
    context = {
        "slot": slot,
        "table": slot.question.table,
        "table_html": mark_safe(table_payload(slot.question.table)["html"]),  # noqa: S308
        "proposed_answer": selectors.slot_payload(slot)["proposed_answer"],
        "form": form,
        "base": base,
        "ratings": Rating.choices,
        "allowed": selectors.verdict_change_allowed(slot),
    }
    return render(request, "annotation/verify/verdict_change.html", context, status=status)
