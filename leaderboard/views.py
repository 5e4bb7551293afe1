from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRefresh

from accounts.selectors import can_submit_to_test_split
from endpoints.selectors import endpoint_choices
from hctqa.core.disclosure import DISCLOSURE_MARGIN
from hctqa.core.reported import PAPER_REAL_QUESTIONS, PAPER_RUN
from leaderboard import exports, selectors, services
from leaderboard.forms import (
    BoardFilterForm,
    CompareForm,
    InferenceResumeForm,
    InferenceRunForm,
    RulesForm,
    SubmissionForm,
    TrackBoardForm,
    TrackSubmissionForm,
    form_problems,
)
from leaderboard.models import DEFAULT_RULES, DataScope, EvalSplit, InferenceRun, Modality, Score
from leaderboard.permissions import STARTING_INFERENCE, WATCHING_RESCORES
from pagecache.pages import public_page
from plumbing.csv_export import dict_rows_csv
from plumbing.errors import ApplicationError, add_problems
from plumbing.pagination import page_with_count
from plumbing.permissions import requires
from plumbing.throttles import PageRateLimit, seconds_to_wait
from tracks import selectors as track_selectors
from tracks.registry import TRACKS, item_tracks

BOARD_PAGE_SIZE = 100


def _recall_by_size(rows: list[Score]) -> dict:
    """The board chart's points, one per row with a parameter count (recall against it),
    the paper's rows apart; the rows of unknown size are named instead."""
    chart: dict[str, list] = {"computed": [], "reported": [], "unplotted": []}
    for row in rows:
        s = row.submission
        if row.recall is None:
            continue
        if s.parameters_billions is None:
            chart["unplotted"].append(s.model_name)
            continue
        point = {"x": float(s.parameters_billions), "y": round(row.recall, 4), "name": s.model_name}
        chart["reported" if s.is_reported else "computed"].append(point)
    return chart


@public_page(form=BoardFilterForm)
def board(request: HttpRequest, modality: str = Modality.TEXT) -> HttpResponse:
    form = BoardFilterForm(request.GET, modality=modality)
    page, status, filters, being_rescored = None, 200, None, []
    if form.is_valid():
        filters = form.filters()
        rows = selectors.board(filters=filters)
        page = page_with_count(rows, number=form.cleaned_data["page"] or 1, size=BOARD_PAGE_SIZE)
        being_rescored = selectors.board_being_rescored(filters=filters)
    else:
        status = 400
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("sort", None)
    scope = filters.data_scope if filters else DataScope.REAL
    elsewhere = []
    if page is not None and not page.object_list:
        # An empty board (a fresh platform holds only the demo rows): where rows are.
        for other, label, count in selectors.board_other_scopes(filters=filters):
            there = query.copy()
            there["data_scope"] = other
            elsewhere.append((label, count, there.urlencode()))
    context = {
        "form": form,
        "page": page,
        "modality": modality,
        "filters": filters,
        "sort": filters.sort if filters else "-recall",
        "being_rescored": being_rescored,
        "query": query.urlencode(),
        "offset": (page.number - 1) * BOARD_PAGE_SIZE if page else 0,
        "shown": form.shown_columns(),
        "scope_label": DataScope(scope).label,
        "narrowed": bool(
            filters
            and any((filters.size_class, filters.weights, filters.table_format, filters.search))
        ),
        "elsewhere": elsewhere,
        "chart": _recall_by_size(page.object_list) if page else {},
        "has_reported": bool(page) and any(r.submission.is_reported for r in page.object_list),
    }
    template = (
        "leaderboard/partials/_board_table.html" if request.htmx else "leaderboard/board.html"
    )
    return render(request, template, context, status=status)


@public_page(form=BoardFilterForm)
def board_export(request: HttpRequest, modality: str, fmt: str) -> HttpResponse:
    if modality not in Modality.values:
        raise Http404("The boards are text and vision")
    form = BoardFilterForm(request.GET, modality=modality)
    if not form.is_valid():
        return HttpResponse(json.dumps(form.errors), status=400, content_type="application/json")
    filters = form.filters()
    # The ranked rows only: submissions being scored again are not ranked (see the board).
    rows = exports.board_rows(selectors.board(filters=filters))
    name = f"hctqa-leaderboard-{modality}-{filters.split}-{filters.rules}"
    return _download(rows, fmt, name, exports.BOARD_COLUMNS)


def _download(rows: list[dict], fmt: str, name: str, columns: tuple[str, ...]) -> HttpResponse:
    if fmt == "json":
        body = json.dumps(rows, indent=1, default=str)
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
    elif fmt == "csv":
        # Cells that would start a spreadsheet formula are escaped; the JSON stays exact.
        body = dict_rows_csv(rows, columns)
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    else:
        raise Http404("Export formats are csv and json")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


_TOO_MANY = "You have sent many uploads, runs and re-scorings lately; try again in {wait} s."


def _uploads_wait(request: HttpRequest) -> int | None:
    """Seconds to wait when the user has used up API_THROTTLE_UPLOADS (shared with the API):
    every upload, run and re-scoring costs a worker's time, whichever way it comes."""
    return seconds_to_wait(request, "uploads")


def _too_many(
    request: HttpRequest, template: str, form: Form, wait: int, context: dict | None = None
) -> HttpResponse:
    form.add_error(None, _TOO_MANY.format(wait=wait))
    response = render(request, template, {**(context or {}), "form": form}, status=429)
    response["Retry-After"] = str(wait)
    return response


def _test_allowance(user: Any) -> dict[str, Any]:
    """What the submit page says about the test split: how many of today's test-split
    submissions are left, or that the account needs approval first."""
    if not can_submit_to_test_split(user=user):
        return {"test_split_closed": True}
    left, limit = selectors.test_split_submissions_left(user=user)
    return {"test_left": left, "test_limit": limit}


@login_required
def submit(request: HttpRequest, track: str = "qa") -> HttpResponse:
    """The submission form, of QA or of a track beside it. Everything is checked in one pass
    and every problem shown at once; a file that is fine itself is kept for the next try
    (``kept_upload``)."""
    info = track_selectors.track_or_404(track)
    # Bound on any POST: an empty one is a form with every field missing, not an unbound one.
    posted = request.method == "POST"
    args = (request.POST if posted else None, request.FILES if posted else None)
    initial = _split_initial(request.user)
    if info.is_qa:
        form: SubmissionForm = SubmissionForm(*args, initial=initial)
        template = "leaderboard/submit.html"
    else:
        form = TrackSubmissionForm(*args, initial=initial, info=info)
        template = "leaderboard/track_submit.html"
    allowance = {**_test_allowance(request.user), "info": info}
    if request.method != "POST":
        return render(request, template, {"form": form, **allowance})
    form.is_valid()
    if (wait := _uploads_wait(request)) is not None:
        return _too_many(request, template, form, wait, allowance)
    upload = form.cleaned_data.get("predictions")
    kept = services.kept_upload_get(
        owner=request.user, token=form.cleaned_data.get("kept_upload", "")
    )
    if kept is not None and upload is not None:
        services.kept_upload_discard(kept=kept)  # a new file replaces the kept one
        kept = None
    if upload is None and kept is not None:
        upload = kept.file.open("rb")
    try:
        submission = services.submission_create(
            owner=request.user,
            data=form.to_input(),
            predictions=upload,
            problems=form_problems(form),
        )
    except ApplicationError as exc:
        add_problems(form, exc)
        if upload is not None and not any(p.code == services.BROKEN_FILE for p in exc.problems):
            kept = kept or services.kept_upload_save(owner=request.user, upload=upload)
        elif kept is not None:
            services.kept_upload_discard(kept=kept)
            kept = None
        context = {"form": form, "kept": kept, **allowance}
        return render(request, template, context, status=400)
    finally:
        if upload is not None:
            upload.close()
    if kept is not None:
        services.kept_upload_discard(kept=kept)
    messages.success(request, "Your predictions are saved; this page follows their scoring.")
    return redirect(submission)


@login_required
def my_submissions(request: HttpRequest) -> HttpResponse:
    submissions = selectors.submissions_of(user=request.user)
    return render(request, "leaderboard/my_submissions.html", {"submissions": submissions})


@public_page(form=RulesForm, params=("part",))
def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
    if not submission.is_qa:
        return _track_submission_detail(request, submission)
    form = RulesForm(request.GET, modality=submission.modality)
    rules = form.cleaned_data["rules"] if form.is_valid() else DEFAULT_RULES
    context = {
        "submission": submission,
        "can_manage": selectors.can_manage(user=request.user, submission=submission),
        "rules": rules,
        "rules_form": form,
    }
    if request.htmx and request.GET.get("part") == "status":
        if submission.is_finished:
            # Scores or an error are in: show the whole page.
            return HttpResponseClientRefresh()
        return render(request, "leaderboard/partials/_submission_status.html", context)
    scores = selectors.scores_of(submission=submission)
    score = scores.get(rules)
    context["scores"] = scores
    context["score"] = score
    if score is not None:
        breakdowns = selectors.breakdowns_for_viewer(score=score)
        medians = selectors.board_medians(submission=submission, rules=rules)
        for kind in selectors.MEDIAN_KINDS:
            breakdowns[kind] = selectors.beside_medians(breakdowns[kind], (medians or {}).get(kind))
        context["breakdowns"] = breakdowns
        context["on_a_board"] = medians is not None
        context["figures_withheld"] = score.withheld or any(
            figures.get("withheld") for figures in (score.by_source or {}).values()
        )
        context["disclosure_margin"] = DISCLOSURE_MARGIN
    if submission.status == "scored" and not submission.is_reported:
        context["hardest"] = selectors.hardest_questions(submission=submission, rules=rules)
    if not submission.is_reported:
        run = selectors.answers_run(submission=submission)
        context["run"] = run
        context["recipe"] = selectors.inference_recipe(run=run)
    context["named_alike"] = selectors.same_model_rows(submission=submission)
    context["paper_real_questions"] = PAPER_REAL_QUESTIONS
    context["paper_run"] = PAPER_RUN
    return render(request, "leaderboard/submission_detail.html", context)


@login_required
@require_POST
def submission_visibility(request: HttpRequest, pk: int) -> HttpResponse:
    submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
    visibility = request.POST.get("visibility", "")
    try:
        services.submission_visibility_set(
            submission=submission, user=request.user, visibility=visibility
        )
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            "Public: it is on the board."
            if visibility == "public"
            else "Private: only you see it; it is off the board.",
        )
    return redirect(submission)


@login_required
@require_POST
def submission_rescore(request: HttpRequest, pk: int) -> HttpResponse:
    submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
    if (wait := _uploads_wait(request)) is not None:
        messages.error(request, _TOO_MANY.format(wait=wait))
        return redirect(submission)
    try:
        services.submission_rescore(submission=submission, user=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Sent for scoring again.")
    return redirect(submission)


@login_required
@require_POST
def submission_delete(request: HttpRequest, pk: int) -> HttpResponse:
    submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
    services.submission_delete(submission=submission, user=request.user)
    messages.success(request, f"Deleted the submission of {submission.model_name}.")
    return redirect("leaderboard:my_submissions")


@login_required
def submission_results(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    submission = selectors.submission_for_viewer(submission_id=pk, user=request.user)
    if not selectors.can_manage(user=request.user, submission=submission):
        raise Http404("Only the owner can download per-question results")
    name = f"submission-{submission.pk}-results"
    if not submission.is_qa:
        rows, columns = exports.item_result_rows(
            track_selectors.track_or_404(submission.track),
            selectors.item_results_export(submission=submission, user=request.user),
        )
        return _download(rows, fmt, name, columns)
    rows = selectors.results_export(submission=submission, user=request.user)
    return _download(rows, fmt, name, exports.RESULT_COLUMNS)


def _track_submission_detail(request: HttpRequest, submission: Any) -> HttpResponse:
    """A submission to a track beside QA: its figures with intervals, per item source and per
    table property (withheld ones kept by no one), and why items scored 0."""
    info = track_selectors.track_or_404(submission.track)
    context = {
        "submission": submission,
        "info": info,
        "mode_label": info.mode_label(submission.mode),
        "can_manage": selectors.can_manage(user=request.user, submission=submission),
    }
    if request.htmx and request.GET.get("part") == "status":
        if submission.is_finished:
            return HttpResponseClientRefresh()
        return render(request, "leaderboard/partials/_submission_status.html", context)
    score = selectors.track_score_for_viewer(submission=submission)
    context.update(
        score=score,
        figures=info.figures(submission.mode),
        origins=track_selectors.gold_origins(info),
        disclosure_margin=DISCLOSURE_MARGIN,
        recipe=selectors.inference_recipe(run=selectors.answers_run(submission=submission)),
    )
    return render(request, "leaderboard/track_submission_detail.html", context)


@public_page(form=TrackBoardForm, params=("page",))
def track_board(request: HttpRequest, track: str) -> HttpResponse:
    """A track's public board: the test split's figures of every public submission and of
    the platform's baselines, sortable, on all items or one item source or table property."""
    info = track_selectors.track_or_404(track)
    if info.is_qa:
        return redirect("leaderboard:board")
    form = TrackBoardForm(request.GET, info=info, sources=track_selectors.source_labels())
    tabs = [(t.slug, t.short) for t in item_tracks()]
    context: dict[str, Any] = {"form": form, "info": info, "track_tabs": tabs}
    status = 200
    if form.is_valid():
        filters = form.filters()
        rows = selectors.track_board(filters=filters)
        page = Paginator(rows, BOARD_PAGE_SIZE).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        query.pop("sort", None)
        group_label = dict(_flat(form.fields["group"].choices)).get(filters.group, "")
        context.update(
            filters=filters,
            page=page,
            offset=(page.number - 1) * BOARD_PAGE_SIZE,
            sort=filters.sort,
            query=query.urlencode(),
            figures=info.figures(filters.mode),
            sources=selectors.track_board_sources(rows),
            source_labels=track_selectors.source_labels(),
            origins=track_selectors.gold_origins(info),
            group_label=group_label,
            mode_label=info.mode_label(filters.mode),
            being_rescored=selectors.track_being_rescored(filters=filters),
        )
    else:
        status = 400
    template = (
        "leaderboard/partials/_track_board_table.html"
        if request.htmx
        else "leaderboard/track_board.html"
    )
    return render(request, template, context, status=status)


def _flat(choices: Any) -> list[tuple[str, str]]:
    out = []
    for value, label in choices:
        if isinstance(label, list | tuple):
            out += list(label)
        else:
            out.append((value, label))
    return out


@public_page(form=TrackBoardForm)
def track_board_export(request: HttpRequest, track: str, fmt: str) -> HttpResponse:
    info = track_selectors.track_or_404(track)
    if info.is_qa:
        raise Http404("QA's boards export from the leaderboard")
    form = TrackBoardForm(request.GET, info=info, sources=track_selectors.source_labels())
    if not form.is_valid():
        return HttpResponse(json.dumps(form.errors), status=400, content_type="application/json")
    filters = form.filters()
    rows, columns = exports.track_board_rows(info, filters, selectors.track_board(filters=filters))
    name = f"hctqa-{info.slug}{'-' + filters.mode if filters.mode else ''}-test"
    return _download(rows, fmt, name, columns)


def compare(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    context: dict = {"form": form, "choices": selectors.comparable_submissions()}
    status = 200
    if request.GET and form.is_valid():
        try:
            a = selectors.submission_for_viewer(
                submission_id=form.cleaned_data["a"], user=request.user
            )
            b = selectors.submission_for_viewer(
                submission_id=form.cleaned_data["b"], user=request.user
            )
            if DataScope.DEMO in (a.data_scope, b.data_scope):
                # Demo rows are offered only to compare demo rows (ticked on their board).
                context["choices"] = selectors.comparable_submissions(demo=True)
            if a.modality != b.modality:
                # Their recall is not computed the same way (docs: SCORING.md).
                context["mixed"] = sorted((a, b), key=lambda s: s.modality != Modality.TEXT)
            rules = form.cleaned_data["rules"]
            comparison = selectors.comparison_cached(a=a, b=b, rules=rules)
            limit = PageRateLimit("compare")
            if comparison is None and not limit.allows(request):
                wait = limit.retry_after_seconds()
                form.add_error(
                    None,
                    f"You have asked for many new comparisons lately; try again in {wait} s. "
                    "Comparisons already made are shown at once.",
                )
                response = render(request, "leaderboard/compare.html", context, status=429)
                response["Retry-After"] = str(wait)
                return response
            context["comparison"] = comparison or selectors.compare(a=a, b=b, rules=rules)
        except (ValueError, Http404) as exc:
            form.add_error(None, str(exc) if isinstance(exc, ValueError) else "No such submission")
            status = 400
    elif request.GET:
        status = 400
    return render(request, "leaderboard/compare.html", context, status=status)


@public_page
def regression(request: HttpRequest) -> HttpResponse:
    result = selectors.current_regression()
    coefficients = selectors.coefficient_intervals(result) if result else []
    chart = {
        "labels": [c["label"] for c in coefficients],
        "coef": [round(c["coef"], 4) for c in coefficients],
        "interval": [[round(c["low"], 4), round(c["high"], 4)] for c in coefficients],
    }
    context = {
        "regression": result,
        "coefficients": coefficients,
        "chart": chart,
        "min_coverage": 100 * selectors.REGRESSION_MIN_COVERAGE,
    }
    return render(request, "leaderboard/regression.html", context)


@login_required
@requires(WATCHING_RESCORES)
def rescores(request: HttpRequest) -> HttpResponse:
    """Re-scorings after the questions or gold answers changed, with their progress
    (admins)."""
    progress = services.rescore_progress(selectors.rescores_recent())
    context = {"progress": progress, "any_active": any(p.rescore.is_active for p in progress)}
    if request.htmx:
        return render(request, "leaderboard/partials/_rescore_rows.html", context)
    return render(request, "leaderboard/rescores.html", context)


# --- Inference runs ------------------------------------------------------------------------

RUNS_SHOWN = 100


@login_required
@requires(STARTING_INFERENCE)
def inference_runs(request: HttpRequest) -> HttpResponse:
    runs = list(selectors.inference_runs_for(user=request.user)[:RUNS_SHOWN])
    context = {"runs": runs, "any_unsettled": any(not r.is_settled for r in runs)}
    if request.htmx:
        return render(request, "leaderboard/partials/_inference_run_rows.html", context)
    return render(request, "leaderboard/inference_runs.html", context)


def _split_initial(user: object) -> dict[str, str]:
    """The forms start on the test split for accounts that may submit to it, and on the
    validation split for the others (the test split would be refused)."""
    return {} if can_submit_to_test_split(user=user) else {"split": EvalSplit.VALIDATION}


@login_required
@requires(STARTING_INFERENCE)
def inference_run_new(request: HttpRequest) -> HttpResponse:
    initial = _split_initial(request.user)
    if request.GET.get("track") in TRACKS:
        initial["track"] = request.GET["track"]
        if initial["track"] == "extraction":
            initial.update(mode="region", modality=Modality.VISION, table_format="image")
    form = InferenceRunForm(
        request.POST if request.method == "POST" else None,
        endpoints=endpoint_choices(user=request.user),
        initial=initial,
    )
    if request.method != "POST":
        return render(request, "leaderboard/inference_run_new.html", {"form": form})
    form.is_valid()
    if (wait := _uploads_wait(request)) is not None:
        return _too_many(request, "leaderboard/inference_run_new.html", form, wait)
    try:
        run = services.inference_run_create(
            user=request.user, data=form.to_input(), problems=form_problems(form)
        )
    except ApplicationError as exc:
        add_problems(form, exc)  # every problem at once
        return render(request, "leaderboard/inference_run_new.html", {"form": form}, status=400)
    # No banner: the run page's status line says "Queued", and follows the run.
    return redirect(run)


def _run_context(run: InferenceRun) -> dict:
    return {
        "run": run,
        "problems": selectors.inference_run_problems(run=run),
        "config_json": json.dumps(run.config, indent=1, sort_keys=True),
        "resume_form": InferenceResumeForm(),
    }


@login_required
def inference_run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.inference_run_for_viewer(run_id=pk, user=request.user)
    if request.htmx and request.GET.get("part") == "progress":
        if request.GET.get("running") and not run.is_active:
            # Just finished: the whole page has more to show (the errors); it goes on
            # following the board entry until that is scored.
            return HttpResponseClientRefresh()
        return render(
            request, "leaderboard/partials/_inference_run_progress.html", _run_context(run)
        )
    return render(request, "leaderboard/inference_run_detail.html", _run_context(run))


@login_required
@require_POST
def inference_run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.inference_run_for_viewer(run_id=pk, user=request.user)
    try:
        run = services.inference_run_cancel(user=request.user, run_id=run.pk)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    if request.htmx:
        return render(
            request, "leaderboard/partials/_inference_run_progress.html", _run_context(run)
        )
    return redirect(run)


@login_required
@require_POST
def inference_run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.inference_run_for_viewer(run_id=pk, user=request.user)
    form = InferenceResumeForm(request.POST)
    api_key = form.cleaned_data["api_key"] if form.is_valid() else ""
    if (wait := _uploads_wait(request)) is not None:
        messages.error(request, _TOO_MANY.format(wait=wait))
        return redirect(run)
    try:
        services.inference_run_resume(user=request.user, run_id=run.pk, api_key=api_key)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Resumed: the answers already saved are kept.")
    return redirect(run)
