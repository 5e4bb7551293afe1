from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from dataset import selectors
from dataset.forms import TableFilterForm, TableFormatForm
from hctqa.core import taxonomy
from pagecache.pages import public_page
from plumbing.csv_export import escaped_csv_text
from plumbing.pagination import page_with_count

PAGE_SIZE = 50

_DOWNLOAD_TYPES = {
    "html": ("text/html", "html"),
    "csv": ("text/csv", "csv"),
    "markdown": ("text/markdown", "md"),
    "json": ("application/json", "json"),
    "pandas": ("text/plain", "txt"),
}


@public_page
def home(request: HttpRequest) -> HttpResponse:
    """The home page: what the dataset holds."""
    return render(
        request, "dataset/home.html", {"overview": selectors.dataset_overview(viewer=request.user)}
    )


@public_page(form=TableFilterForm)
def dataset(request: HttpRequest) -> HttpResponse:
    form = TableFilterForm(request.GET)
    status = 200
    page = None
    hits: dict[str, selectors.SearchHit] = {}
    page_numbers: list[int | str] = []
    if form.is_valid():
        filters = form.filters()
        tables = selectors.table_list(filters=filters, viewer=request.user)
        page = page_with_count(tables, number=form.cleaned_data["page"] or 1, size=PAGE_SIZE)
        hits = selectors.search_hits(
            table_ids=[t.id for t in page.object_list],
            search=filters.search,
            viewer=request.user,
        )
        page_numbers = list(
            page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1)
        )
        for table in page.object_list:
            table.hit = hits.get(table.id)
    else:
        status = 400
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "page_numbers": page_numbers,
    }
    template = "dataset/partials/_table_results.html" if request.htmx else "dataset/dataset.html"
    return render(request, template, context, status=status)


@public_page(form=TableFormatForm)
def table_detail(request: HttpRequest, table_id: str) -> HttpResponse:
    table = selectors.table_get(table_id=table_id)
    form = TableFormatForm(request.GET)
    if not form.is_valid():
        return render(request, "400.html", {"errors": form.errors}, status=400)
    fmt = form.fmt()
    rendering = selectors.table_rendering(table=table, fmt=fmt)
    context = {
        "table": table,
        "fmt": fmt,
        "formats": list(_DOWNLOAD_TYPES),
        # Our own renderer escapes every cell; only the HTML format is markup.
        "rendering": mark_safe(rendering) if fmt == "html" else rendering,  # noqa: S308
    }
    if request.htmx:
        return render(request, "dataset/partials/_table_view.html", context)
    context.update(
        questions=selectors.question_list_for_table(table=table, viewer=request.user),
        show_gold=selectors.gold_answer_visible(user=request.user, split=table.split),
        property_tree=taxonomy.tree(taxonomy.TABLE_PROPERTIES, table.table_properties),
    )
    return render(request, "dataset/table_detail.html", context)


@public_page
def table_download(request: HttpRequest, table_id: str, fmt: str) -> HttpResponse:
    table = selectors.table_get(table_id=table_id)
    if fmt not in _DOWNLOAD_TYPES:
        formats = ", ".join(_DOWNLOAD_TYPES)
        return HttpResponse(
            f"Unknown format {fmt!r}; choose one of {formats}",
            status=400,
            content_type="text/plain",
        )
    content_type, extension = _DOWNLOAD_TYPES[fmt]
    body = selectors.table_rendering(table=table, fmt=fmt)
    if fmt == "csv":
        # Cells come from PDFs and web pages: none may start a formula in a spreadsheet.
        body = escaped_csv_text(body)
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{table.id}.{extension}"'
    return response


@public_page
def coverage(request: HttpRequest) -> HttpResponse:
    """How many real and synthetic tables have each table property."""
    rows, real_total, synthetic_total = selectors.property_coverage()
    context = {"rows": rows, "real_total": real_total, "synthetic_total": synthetic_total}
    return render(request, "dataset/coverage.html", context)
