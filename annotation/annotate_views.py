"""Pages of the annotation tools. The tools' scripts drive them through the REST API; each
page also takes a plain form post, so an annotator without JavaScript can still work."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from accounts import selectors as accounts
from annotation import permissions as rules
from annotation import selectors, services, shortcuts
from annotation.annotate_api import table_payload
from annotation.forms import AssignForm
from annotation.templatetags.flag_tags import REFUSED_FLAG
from dataset.selectors import table_get
from hctqa.core import taxonomy
from hctqa.core.query_templates import TEMPLATES
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError, ConflictError, add_problems
from plumbing.permissions import requires
from plumbing.redirects import local_url


@dataclass
class PanelNode:
    """A property for the checklist, with its value and its children grouped as the
    taxonomy groups them."""

    prop: taxonomy.Property
    value: Any
    groups: list[tuple[str, str, list[PanelNode]]] = field(default_factory=list)
    loose: list[PanelNode] = field(default_factory=list)


_RULE_TEXT = {"one": "choose one", "some": "at least one", "at_most_one": "at most one"}


def panel(tax: taxonomy.Taxonomy, values: dict[str, Any]) -> list[PanelNode]:
    def node(prop: taxonomy.Property) -> PanelNode:
        children = tax.children(prop.code)
        grouped: set[str] = set()
        groups = []
        for group in tax.groups:
            if group.parent == prop.code:
                members = [node(tax.get(m)) for m in group.members]
                grouped.update(group.members)
                groups.append((group.label, _RULE_TEXT[group.rule], members))
        loose = [node(c) for c in children if c.code not in grouped]
        return PanelNode(prop, values.get(prop.code), groups, loose)

    return [node(root) for root in tax.roots()]


def _form_values(request: HttpRequest, tax: taxonomy.Taxonomy) -> dict[str, Any]:
    """Checkboxes named "on" and number inputs named by code, from a plain form post."""
    chosen = set(request.POST.getlist("on"))
    values: dict[str, Any] = {}
    for prop in tax.properties:
        if prop.kind == "flag":
            values[prop.code] = prop.code in chosen
        else:
            raw = request.POST.get(prop.code, "").strip()
            values[prop.code] = raw or None
    return values


# Approval requests shown on the hub; the rest are on their own page.
HUB_REQUESTS = 5
# Open assignments listed on an annotator's hub (their queue serves them all).
HUB_ASSIGNED = 8


@login_required
@requires(rules.ANNOTATING)
def hub(request: HttpRequest) -> HttpResponse:
    user = request.user
    context = {
        "properties": selectors.property_progress(annotator=user)
        if user.has_perm("annotation.annotate_table")
        else None,
        "questions": selectors.question_progress(annotator=user)
        if user.has_perm("annotation.write_question")
        else None,
        "verifying": selectors.verifier_progress(annotator=user)
        if user.has_perm("annotation.verify_question")
        else None,
        "removal": selectors.pool_removal(annotator=user),
        "flags_open": selectors.flags_open_count()
        if user.has_perm("annotation.adjudicate_question")
        else 0,
        "assigned_rows": selectors.assignment_overview(annotator=user),
        "assigned_next": selectors.assigned_tables(annotator=user, limit=HUB_ASSIGNED),
        # Admins decide researchers' requests for test-split approval from here.
        "approval_requests": accounts.approval_requests_waiting(limit=HUB_REQUESTS)
        if accounts.may_decide_approval_requests(user)
        else None,
    }
    return render(request, "annotation/annotate/hub.html", context)


# --- Table properties ----------------------------------------------------------------------


@login_required
@requires(rules.PROPERTY_TOOL)
def property_next(request: HttpRequest) -> HttpResponse:
    table = selectors.property_queue_next(annotator=request.user)
    if table is None:
        messages.success(request, "You have annotated every table. Thank you!")
        return redirect("annotate:hub")
    return redirect("annotate:properties", table_id=table.id)


def _whole_number(raw: str | None) -> int:
    """A hidden form field; a tampered or garbled one is a 400, not a server error."""
    try:
        value = int(raw or 0)
    except ValueError:
        raise ApplicationError("The form was damaged; reload the page") from None
    if not 0 <= value < 2**31:
        raise ApplicationError("The form was damaged; reload the page")
    return value


@login_required
@requires(rules.PROPERTY_TOOL)
def property_tool(request: HttpRequest, table_id: str) -> HttpResponse:
    table = table_get(table_id=table_id)
    status = 200
    if request.method == "POST":
        values = _form_values(request, taxonomy.TABLE_PROPERTIES)
        try:
            services.property_annotation_save(
                annotator=request.user,
                table=table,
                properties=values,
                base_version=_whole_number(request.POST.get("base_version")),
            )
        except ConflictError as exc:
            messages.error(request, f"{exc.message}; the saved version is shown below.")
            status = 409
        except ApplicationError as exc:
            messages.error(request, exc.message)
            status = 400
        else:
            messages.success(request, f"Saved {table.id}.")
            following = selectors.property_queue_next(annotator=request.user, after=table.id)
            return (
                redirect("annotate:properties", table_id=following.id)
                if following
                else redirect("annotate:hub")
            )
    work = selectors.property_work(annotator=request.user, table=table)
    state = {
        "table": table.id,
        "version": work.version,
        "properties": work.properties,
        "has_draft": work.has_draft,
        "draft_client_ms": work.draft_client_ms,
        "user": request.user.get_username(),
        "api": reverse("api-annotate-property-work", args=[table.id]),
    }
    context = {
        "table": table,
        "table_html": mark_safe(table_payload(table)["html"]),  # noqa: S308 - our renderer escapes cells
        "panel": panel(taxonomy.TABLE_PROPERTIES, work.properties),
        "work": work,
        "progress": selectors.property_progress(annotator=request.user),
        "taxonomy": taxonomy.as_json(taxonomy.TABLE_PROPERTIES),
        "state": state,
        "violations": taxonomy.check(taxonomy.TABLE_PROPERTIES, work.properties),
        "shortcuts": shortcuts.properties_tool(),
    }
    return render(request, "annotation/annotate/properties.html", context, status=status)


# --- Questions -----------------------------------------------------------------------------


@login_required
@requires(rules.QUESTION_TOOL)
def question_next(request: HttpRequest) -> HttpResponse:
    table = selectors.question_queue_next(annotator=request.user)
    if table is None:
        messages.success(request, "There is no table left for you to write questions on.")
        return redirect("annotate:hub")
    return redirect("annotate:questions", table_id=table.id)


@login_required
@requires(rules.QUESTION_TOOL)
def question_tool(request: HttpRequest, table_id: str) -> HttpResponse:
    table = table_get(table_id=table_id)
    status = 200
    form: dict[str, Any] = {}
    near_duplicate = ""
    key: uuid.UUID | None = None  # a refused post keeps its key: saving again is the same question
    if request.method == "POST":
        values = _form_values(request, taxonomy.QUERY_PROPERTIES)
        form = {
            "text": request.POST.get("text", ""),
            "gold_answer": request.POST.get("gold_answer", ""),
            "template": request.POST.get("template", ""),
            "query_properties": values,
        }
        try:
            key = uuid.UUID(request.POST.get("client_key", ""))
        except ValueError:
            key = uuid.uuid4()
        try:
            question = services.question_write(
                annotator=request.user,
                table=table,
                client_key=key,
                confirm_near_duplicate=request.POST.get("confirm_near_duplicate") == "1",
                **form,
            )
        except ApplicationError as exc:
            if exc.field == "near_duplicate":
                near_duplicate = exc.message
            else:
                messages.error(request, exc.message)
            status = 400
        else:
            messages.success(request, f"Saved question {question.id}.")
            following = selectors.question_queue_next(annotator=request.user, after=table.id)
            return (
                redirect("annotate:questions", table_id=following.id)
                if following
                else redirect("annotate:hub")
            )
    work = selectors.question_work(annotator=request.user, table=table)
    draft = work.draft
    current = form or {
        "text": draft.text if draft else "",
        "gold_answer": draft.gold_answer if draft else "",
        "template": draft.template if draft else "",
        "query_properties": {
            **taxonomy.QUERY_PROPERTIES.empty(),
            **(draft.query_properties if draft else {}),
        },
    }
    state = {
        "table": table.id,
        "user": request.user.get_username(),
        "api": reverse("api-annotate-question-work", args=[table.id]),
        "draft": None
        if draft is None
        else {
            "client_key": str(draft.client_key),
            "client_ms": draft.client_ms,
            "text": draft.text,
            "gold_answer": draft.gold_answer,
            "template": draft.template,
            "query_properties": draft.query_properties,
        },
    }
    total, mix = selectors.query_mix(annotator=request.user)
    context = {
        "table": table,
        "table_html": mark_safe(table_payload(table)["html"]),  # noqa: S308 - our renderer escapes cells
        "panel": panel(taxonomy.QUERY_PROPERTIES, current["query_properties"]),
        "current": current,
        "client_key": str(key or (draft.client_key if draft else uuid.uuid4())),
        "work": work,
        "progress": selectors.question_progress(annotator=request.user),
        "mix": mix,
        "mix_total": total,
        "templates": TEMPLATES,
        "taxonomy": taxonomy.as_json(taxonomy.QUERY_PROPERTIES),
        "template_data": {t.code: t.filled() for t in TEMPLATES},
        "state": state,
        "shortcuts": shortcuts.question_tool(),
        "near_duplicate": near_duplicate,
    }
    return render(request, "annotation/annotate/questions.html", context, status=status)


# --- Agreement -----------------------------------------------------------------------------


@login_required
@requires(rules.ADJUDICATION_TOOL)
def agreement(request: HttpRequest) -> HttpResponse:
    view = selectors.agreement_overview()
    labels = {
        p.code: p.label
        if p.parent is None
        else f"{taxonomy.TABLE_PROPERTIES.get(p.parent).label}: {p.label}"
        for p in taxonomy.TABLE_PROPERTIES.properties
    }
    return render(
        request,
        "annotation/annotate/agreement.html",
        {
            "view": view,
            "labels": labels,
            "time_spent": selectors.time_spent(),
            "mine": selectors.tables_annotated_by(
                annotator=request.user,
                table_ids=[d.table_id for d in view.open_disagreements],
            ),
        },
    )


@dataclass(frozen=True)
class ResolveRow:
    prop: taxonomy.Property
    marks: list[bool]
    chosen: bool
    tie: bool


@login_required
@requires(rules.ADJUDICATION_TOOL)
def resolve(request: HttpRequest, table_id: str) -> HttpResponse:
    status = 200
    if request.method == "POST":
        values = _form_values(request, taxonomy.TABLE_PROPERTIES)
        try:
            services.table_properties_resolve(
                adjudicator=request.user,
                table=table_get(table_id=table_id),
                properties=values,
            )
        except ApplicationError as exc:
            messages.error(request, exc.message)
            status = 400
        else:
            messages.success(request, f"Resolved {table_id}: its properties are set.")
            return redirect("annotate:agreement")
    work = selectors.resolution_work(table_id=table_id)
    chosen = work.resolution.properties if work.resolution else work.majority
    rows = []
    for prop in taxonomy.TABLE_PROPERTIES.flags():
        marks = [bool(props.get(prop.code)) for props in work.by_coder.values()]
        # A tie (one annotation for, one against) has no majority: it is left unset and
        # marked, so the page never claims a majority that is not there.
        tie = bool(marks) and sum(marks) * 2 == len(marks)
        rows.append(ResolveRow(prop, marks, bool(chosen.get(prop.code)), tie))
    context = {
        "work": work,
        "coders": list(work.by_coder),
        "rows": rows,
        "ties": sum(1 for r in rows if r.tie),
        "shortcuts": shortcuts.resolve_tool(),
        "table_html": mark_safe(table_payload(work.table)["html"]),  # noqa: S308
    }
    return render(request, "annotation/annotate/resolve.html", context, status=status)


# --- My recent work ------------------------------------------------------------------------


@login_required
@requires(rules.ANNOTATING)
def recent(request: HttpRequest) -> HttpResponse:
    items = selectors.recent_work(annotator=request.user)
    context = {"items": items, "settings_window": settings.ANNOTATION_CHANGE_WINDOW_HOURS}
    return render(request, "annotation/annotate/recent.html", context)


@login_required
@requires(rules.QUESTION_TOOL)
def question_change(request: HttpRequest, question_id: str) -> HttpResponse:
    authoring = selectors.question_authored(annotator=request.user, question_id=question_id)
    question = authoring.question
    status = 200
    near_duplicate = ""
    saved_elsewhere: dict[str, object] | None = None
    current = {
        "text": question.text,
        "gold_answer": question.gold_answer,
        "query_properties": {**taxonomy.QUERY_PROPERTIES.empty(), **question.query_properties},
    }
    version = authoring.version
    if request.method == "POST":
        current = {
            "text": request.POST.get("text", ""),
            "gold_answer": request.POST.get("gold_answer", ""),
            "query_properties": _form_values(request, taxonomy.QUERY_PROPERTIES),
        }
        version = _whole_number(request.POST.get("base_version"))
        try:
            services.question_change(
                annotator=request.user,
                question_id=question.pk,
                base_version=version,
                confirm_near_duplicate=request.POST.get("confirm_near_duplicate") == "1",
                **current,
            )
        except ConflictError as exc:
            # The change stays in the form, now based on the saved version: saving again
            # replaces that version knowingly, Cancel keeps it. Nothing typed is thrown away.
            saved_elsewhere = exc.current
            version = int(str(exc.current["version"]))
            status = 409
        except ApplicationError as exc:
            if exc.field == "near_duplicate":
                near_duplicate = exc.message
            else:
                messages.error(request, f"Not saved: {exc.message}.")
            status = 400
        else:
            messages.success(request, f"Saved your change to {question.pk}.")
            return redirect("annotate:recent")
    context = {
        "question": question,
        "table": question.table,
        "table_html": mark_safe(table_payload(question.table)["html"]),  # noqa: S308
        "current": current,
        "version": version,
        "panel": panel(taxonomy.QUERY_PROPERTIES, current["query_properties"]),
        "allowed": selectors.question_change_allowed(authoring),
        "near_duplicate": near_duplicate,
        "saved_elsewhere": saved_elsewhere,
    }
    return render(request, "annotation/annotate/question_change.html", context, status=status)


# --- Flags ---------------------------------------------------------------------------------


@login_required
@require_POST
def flag_new(request: HttpRequest) -> HttpResponse:
    table = table_get(table_id=request.POST.get("table", ""))
    question = selectors.flag_target_question(
        user=request.user,
        table=table,
        question_id=request.POST.get("question", ""),
        slot_id=request.POST.get("slot", ""),
    )
    back = local_url(request, request.POST.get("next", ""), table.get_absolute_url())
    reason, note = request.POST.get("reason", ""), request.POST.get("note", "")
    try:
        services.flag_raise(
            user=request.user, table=table, question=question, reason=reason, note=note
        )
    except ApplicationError as exc:
        # The page comes back with the form open, as it was sent, saying what to change.
        request.session[REFUSED_FLAG] = {
            "table": table.id,
            "reason": reason,
            "note": note,
            "field": exc.field or "reason",
            "error": exc.message,
        }
        return redirect(f"{back}#flag-box")
    else:
        messages.success(request, f"Flagged {table.id}: an adjudicator will look at it. Thank you.")
    return redirect(back)


@login_required
@requires(rules.ADJUDICATION_TOOL)
def flags(request: HttpRequest) -> HttpResponse:
    context = {
        "open_flags": selectors.flags_open(),
        "resolved": selectors.flags_resolved(),
    }
    return render(request, "annotation/annotate/flags.html", context)


@login_required
@require_POST
@requires(rules.ADJUDICATION_TOOL)
def flag_resolve(request: HttpRequest, flag_id: int) -> HttpResponse:
    try:
        services.flag_resolve(
            adjudicator=request.user,
            flag_id=flag_id,
            resolution=request.POST.get("resolution", ""),
        )
    except ApplicationError as exc:
        messages.error(request, f"Not resolved: {exc.message}.")
    else:
        messages.success(request, "Flag resolved.")
    return redirect("annotate:flags")


# --- Assignments ---------------------------------------------------------------------------


@login_required
@requires(rules.ASSIGNING)
def assignments(request: HttpRequest) -> HttpResponse:
    """Give tables (by list, or by the dataset's filters) to annotators, and see how far each
    person is with what they were given."""
    form = AssignForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            ids = services.parse_table_ids(form.cleaned_data["table_ids"])
            annotators = list(form.cleaned_data["annotators"])
            try:
                result = services.tables_assign(
                    by=request.user,
                    annotator_ids=[a.pk for a in annotators],
                    kind=form.cleaned_data["kind"],
                    table_ids=ids,
                    filters=None if ids else form.filters(),
                )
            except ApplicationError as exc:
                add_problems(form, exc)
            else:
                messages.success(
                    request, services.describe_assignment(result, annotators=len(annotators))
                )
                return redirect("annotate:assignments")
        status = 400
    context = {"form": form, "overview": selectors.assignment_overview()}
    return render(request, "annotation/annotate/assignments.html", context, status=status)


@login_required
@require_POST
@requires(rules.ASSIGNING)
def assignments_withdraw(request: HttpRequest) -> HttpResponse:
    try:
        taken = services.assignments_withdraw(
            by=request.user,
            annotator_id=_whole_number(request.POST.get("annotator")),
            kind=request.POST.get("kind", ""),
        )
    except ApplicationError as exc:
        messages.error(request, f"Nothing was taken back: {exc.message}.")
    else:
        messages.success(request, f"Took back {counted(taken, 'open assignment')}.")
    return redirect("annotate:assignments")
