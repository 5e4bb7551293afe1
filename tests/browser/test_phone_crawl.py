"""Every page each role can reach, at 390 px wide: a crawl from the role's start page follows
the site's own links (a few pages per URL pattern) and fails on sideways scroll and on a
control placed off the screen."""

from __future__ import annotations

import io
import re
import uuid
from collections import Counter, deque
from pathlib import Path
from urllib.parse import parse_qsl, urldefrag, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import Resolver404, resolve
from django.utils import timezone
from playwright.sync_api import Page, expect

from annotation import services
from annotation.models import GenerationRun, PropertyAnnotation
from dataset.models import Table
from endpoints.models import Endpoint
from ingest import services as ingest_services
from tests.factories import LOOKUP_PROPERTIES as LOOKUP
from tests.factories import CollectionFactory, InferenceRunFactory, ModelQuestionFactory
from tests.ingest.pdfs import NESTED_COLUMNS, table_pdf
from tests.synthetic_params import write_small_params

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

PHONE = {"width": 390, "height": 844}
# Pages of one URL pattern (and one set of query keys) look alike: a few of each is enough.
PER_PATTERN = 2
PER_ROUTE = 4
# Not pages, or not ours to lay out: the JSON API, Django's admin, uploaded files, and links
# that download a file or change something.
SKIP_PATHS = re.compile(r"^/(admin|media|static)/|^/api/(?!docs/)|^/healthz|^/accounts/log")
SKIP_NAMES = {
    "download",
    "table_download",
    "board_export",
    "track_board_export",
    "submission_results",
    "page_image",
    "crop",
    "image",
    "media",
}

# A control off the right (or left) edge of the screen. A link in a wide data table that
# scrolls in its own box is reachable; a form field or button there is not (it must fit the
# screen), nor a link in a row of tabs or buttons that scrolls (the tabs past the edge are
# never seen).
OFF_SCREEN = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  const inside = (box) => box.left >= -0.5 && box.right <= width + 0.5;
  const controls = "a[href], summary, button, input:not([type=hidden]), select, textarea";
  for (const el of document.querySelectorAll(controls)) {
    if (el.matches(".skip-link") || !el.checkVisibility({visibilityProperty: true})) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (inside(box)) continue;
    if (el.matches("a[href], summary")) {
      let scroller = null;
      for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
        if (["auto", "scroll"].includes(getComputedStyle(up).overflowX)) { scroller = up; break; }
      }
      const inTable = scroller && el.closest("table") && scroller.contains(el.closest("table"));
      if (inTable && inside(scroller.getBoundingClientRect())) continue;
    }
    const name = (el.id ? "#" + el.id : el.tagName.toLowerCase())
      + (el.getAttribute("name") ? `[name=${el.getAttribute("name")}]` : "")
      + " " + (el.textContent || el.value || "").trim().replace(/\\s+/g, " ").slice(0, 30);
    found.push(`${name} at x=${Math.round(box.left)}..${Math.round(box.right)}`);
  }
  return found.slice(0, 5);
}"""


def _key(path: str, query: str) -> tuple[str, str] | None:
    """The URL pattern and query keys of a page to visit; None for what is no page."""
    if SKIP_PATHS.search(path):
        return None
    try:
        match = resolve(path)
    except Resolver404:
        return None
    if match.url_name in SKIP_NAMES or match.url_name.endswith(("cancel", "resume", "delete")):
        return None
    return match.route, ",".join(sorted({k for k, _ in parse_qsl(query, keep_blank_values=True)}))


def crawl(page: Page, base: str, start: list[str], limit: int = 80) -> tuple[list[str], list[str]]:
    """Visit pages breadth-first from ``start`` at 390 px; returns (pages seen, problems)."""
    page.set_viewport_size(PHONE)
    queue = deque(start)
    seen: set[str] = set(start)
    per_key: Counter = Counter()
    per_route: Counter = Counter()
    visited: list[str] = []
    problems: list[str] = []
    host = urlsplit(base).netloc
    while queue and len(visited) < limit:
        url = queue.popleft()
        response = page.goto(base + url)
        if response is None or response.status >= 400:
            problems.append(f"{url}: status {response and response.status}")
            continue
        page.wait_for_load_state("load")
        visited.append(url)
        scroll = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        if scroll[0] > scroll[1]:
            problems.append(f"{url}: scrolls sideways ({scroll[0]} px wide)")
        problems.extend(f"{url}: {where} is off the screen" for where in page.evaluate(OFF_SCREEN))
        hrefs = page.eval_on_selector_all(
            "a[href]:not([download])", "links => links.map(a => a.href)"
        )
        for href in hrefs:
            parts = urlsplit(urldefrag(href)[0])
            if parts.netloc != host or parts.scheme not in ("http", "https"):
                continue
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if target in seen:
                continue
            key = _key(parts.path, parts.query)
            if key is None or per_key[key] >= PER_PATTERN or per_route[key[0]] >= PER_ROUTE:
                continue
            per_key[key] += 1
            per_route[key[0]] += 1
            seen.add(target)
            queue.append(target)
    return visited, problems


def log_in(page: Page, base: str, role: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{base}/accounts/login/")
    page.locator("#id_username").fill(role)
    page.locator("#id_password").fill(f"{role}-demo-pass")
    page.locator("#id_password").press("Enter")
    expect(page).not_to_have_url(re.compile("/accounts/login/"))


@pytest.fixture
def site(data_dir: Path, print_pdf, settings, tmp_path: Path) -> None:
    """The demo, and one of each thing a page shows that the demo lacks: a synthetic run and
    its tables, an ingested PDF and its candidates, a release, a generation run, an inference
    run, a property disagreement, a question waiting for adjudication, a flag and an
    annotator's own question."""
    settings.SYNTHETIC_PARAMS_DIR = str(
        write_small_params(data_dir / "hctqa-synthetic", tmp_path / "params")
    )
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RELEASES_ROOT = tmp_path / "releases"
    settings.RELEASE_BUILD_PROCESSES = 1
    settings.VERIFICATION_GOLD_PERCENT = 0
    call_command("load_demo", stdout=io.StringIO())
    users = {u.username: u for u in User.objects.all()}
    annotator, judge, admin = users["annotator"], users["adjudicator"], users["admin"]

    run = services.synthetic_run_create(
        user=admin, required_properties=["row_nesting"], table_count=2
    )
    services.synthetic_run_execute(run_id=run.pk)

    collection = CollectionFactory(code="census", name="US Census")
    pdf = table_pdf(print_pdf, NESTED_COLUMNS)
    document = ingest_services.document_upload(
        user=judge, collection=collection, file_name="abstract.pdf", chunks=[pdf], enqueue=False
    )
    ingest_services.document_extract(document_id=document.pk)

    table = Table.objects.filter(id__startswith="synthetic--demo-").order_by("id").first()
    for person, props in (
        (annotator, {"row_nesting": True}),
        (admin, {"multi_level_column": True}),
    ):
        PropertyAnnotation.objects.create(
            table=table, annotator=person, properties=props, version=1, saved_at=timezone.now()
        )
    for person, verdict in (
        (annotator, services.Verdict("good", True)),
        (admin, services.Verdict("good", False, corrected_answer="{8}")),
    ):
        slot = services.verification_claim(annotator=person)
        services.verification_submit(annotator=person, slot_id=slot.pk, verdict=verdict)
    services.flag_raise(user=annotator, table=table, question=None, reason="other", note="Cut off.")
    services.question_write(
        annotator=annotator,
        table=table,
        client_key=uuid.uuid4(),
        text="Which value is the largest in the table?",
        gold_answer="{1}",
        query_properties=LOOKUP,
    )

    endpoint = Endpoint.objects.create(
        name="lab", base_url="https://lab.example/v1", api_key_env="LAB_KEY"
    )
    GenerationRun.objects.create(
        created_by=admin,
        endpoint=endpoint,
        base_url=endpoint.base_url,
        model="lab-7b",
        status="done",
        tables_total=2,
        tables_done=2,
        questions_created=8,
        finished_at=timezone.now(),
    )
    InferenceRunFactory(created_by=users["researcher"])
    call_command("cut_release", "2026.11", stdout=io.StringIO())


ROLES = ("public", "annotator", "adjudicator", "researcher", "admin")
# Pages the crawl must reach (by URL name), so that it keeps covering what it was written for.
MUST_REACH = {
    "dataset:table_detail",
    "dataset:coverage",
    "annotate:properties",
    "annotate:question_change",
    "annotate:verify",
    "annotate:adjudicate",
    "annotate:resolve",
    "annotate:flags",
    "annotate:synthetic_run",
    "annotate:generation_run",
    "annotate:gold_pool",
    "ingest:document",
    "ingest:page",
    "ingest:candidate",
    "leaderboard:submission_detail",
    "leaderboard:inference_run_detail",
    "leaderboard:compare",
    "leaderboard:regression",
    "releases:detail",
    "releases:build",
    "accounts:account",
    "api-docs",
}


def test_every_page_each_role_reaches_fits_a_phone(live_server, page: Page, site) -> None:
    problems = []
    reached = set()
    for role in ROLES:
        page.context.clear_cookies()
        start = ["/"]
        if role != "public":
            log_in(page, live_server.url, role)
            start.insert(0, urlsplit(page.url).path)  # the role's workspace
        visited, found = crawl(page, live_server.url, start)
        reached |= {resolve(urlsplit(url).path).view_name for url in visited}
        problems += [f"{role}: {problem}" for problem in found]
    assert not problems, "\n".join(problems)
    assert not MUST_REACH - reached, "the crawl did not reach these pages"


# A synthetic family's table id as the generator names it, and a release table's: no spaces,
# so a line cannot break at a word (issue 33).
LONG_IDS = (
    "synthetic--Evolution_of_pollution_in_percent_set1_1",
    "synthetic--Number_of_students_per_school_type_NONSEM_set12_3",
)


@pytest.fixture
def long_ids(settings) -> list[str]:
    """Every kind of page that shows a table's id, for tables with long ids: the table page,
    the dataset list, the discussion, the annotation tools, a disagreement to resolve, a
    flag, the annotator's recent work and a verification."""
    settings.VERIFICATION_GOLD_PERCENT = 0
    call_command("load_demo", stdout=io.StringIO())
    users = {u.username: u for u in User.objects.all()}
    annotator, admin = users["annotator"], users["admin"]
    tables = []
    for table_id in LONG_IDS:
        table = Table.objects.create(
            id=table_id,
            source="synthetic",
            split="train",
            canonical_csv="Region,Male,Female\nNorth,10,12\nSouth,20,22\n",
            table_properties={},
        )
        tables.append(table)
    table = tables[0]
    for person, props in ((annotator, {"row_nesting": True}), (admin, {"row_nesting": False})):
        PropertyAnnotation.objects.create(
            table=table, annotator=person, properties=props, version=1, saved_at=timezone.now()
        )
    services.flag_raise(user=annotator, table=table, question=None, reason="other", note="Cut.")
    question = services.question_write(
        annotator=annotator,
        table=table,
        client_key=uuid.uuid4(),
        text="Which value is the largest in the table?",
        gold_answer="{22}",
        query_properties=LOOKUP,
    )
    ModelQuestionFactory(table=tables[1])
    slot = services.verification_claim(annotator=admin)
    return [
        f"/tables/{table.id}/",
        f"/tables/{tables[1].id}/",
        "/dataset/?q=synthetic",
        f"/discussion/tables/{table.id}/",
        f"/discussion/questions/{question.id}/",
        f"/annotate/properties/{table.id}/",
        f"/annotate/questions/{table.id}/",
        f"/annotate/agreement/{table.id}/",
        "/annotate/flags/",
        "/annotate/mine/",
        f"/annotate/verify/{slot.public_id}/",
    ]


def test_long_table_ids_wrap_on_a_phone(live_server, page: Page, long_ids: list[str]) -> None:
    log_in(page, live_server.url, "admin")
    visited, problems = crawl(page, live_server.url, long_ids, limit=len(long_ids))
    assert visited == long_ids
    assert not problems, "\n".join(problems)


def test_the_resolve_page_shows_every_coder_beside_the_decision_on_a_phone(
    live_server, page: Page
) -> None:
    # A demo table's release labels count as one more coder: three columns of marks to read
    # across each row before deciding it.
    call_command("load_demo", stdout=io.StringIO())
    users = {u.username: u for u in User.objects.all()}
    table = Table.objects.filter(id__startswith="synthetic--demo-").order_by("id").first()
    for person, props in (
        (users["annotator"], {"row_nesting": True}),
        (users["admin"], {"multi_level_column": True}),
    ):
        PropertyAnnotation.objects.create(
            table=table, annotator=person, properties=props, version=1, saved_at=timezone.now()
        )
    log_in(page, live_server.url, "admin")
    visited, problems = crawl(page, live_server.url, [f"/annotate/agreement/{table.id}/"], 1)
    assert visited and not problems, problems
    coders = page.locator(".resolve-grid th.coder")
    expect(coders).to_have_text(["admin", "annotator", "release"])
    for box in (coders.nth(i).bounding_box() for i in range(3)):
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
