"""Pages of the synthetic generator: start runs (admins) and follow them. The coverage page
is the dataset's."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import permissions as rules
from annotation import services
from annotation.selectors import synthetic as selectors
from hctqa.core import taxonomy
from plumbing.errors import ApplicationError
from plumbing.permissions import requires


@login_required
@requires(rules.SYNTHETIC)
def synthetic(request: HttpRequest) -> HttpResponse:
    status = 200
    try:
        families = [f.prefix for f in services.synthetic_params().families]
        params_error = ""
    except ApplicationError as exc:
        families, params_error = [], exc.message
    if request.method == "POST":
        mode = request.POST.get("mode", "families")
        try:
            if mode == "targeted":
                try:
                    count = int(request.POST.get("count", ""))
                except ValueError:
                    raise ApplicationError(
                        "The number of tables should be a whole number"
                    ) from None
                run = services.synthetic_run_create(
                    user=request.user,
                    required_properties=request.POST.getlist("properties"),
                    table_count=count,
                )
            else:
                run = services.synthetic_run_create(
                    user=request.user, families=request.POST.getlist("families")
                )
        except ApplicationError as exc:
            messages.error(request, f"Not started: {exc.message}.")
            status = 400
        else:
            # No banner: the run page's status line says "Queued", and follows the run.
            return redirect("annotate:synthetic_run", run_id=run.pk)
    context = {
        "families": families,
        "params_error": params_error,
        "properties": [
            p for p in taxonomy.TABLE_PROPERTIES.properties if p.code != "standard_relational_table"
        ],
        "runs": selectors.synthetic_runs_recent(),
    }
    return render(request, "annotation/synthetic/start.html", context, status=status)


@login_required
@requires(rules.SYNTHETIC)
def synthetic_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.synthetic_run_get(run_id=run_id)
    if run is None:
        raise Http404(f"No synthetic run {run_id}")
    context = {"run": run}
    if request.htmx:
        return render(request, "annotation/synthetic/partials/run_progress.html", context)
    return render(request, "annotation/synthetic/run.html", context)


@login_required
@require_POST
def synthetic_run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        services.synthetic_run_cancel(user=request.user, run_id=run_id)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Synthetic run {run_id} is cancelled.")
    return redirect("annotate:synthetic_run", run_id=run_id)
