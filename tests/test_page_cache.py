"""Anonymous visitors' public pages are kept (pagecache) until a table they read
changes, and never mixed with a logged-in user's, a message or a CSRF token.

Transactional: a kept page must reflect committed rows, so inside the usual test
transaction the cache stands aside."""

from __future__ import annotations

import io
import json
import pickle
import uuid
from collections.abc import Callable, Iterator

import pytest
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.db import SessionStore
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import services as annotation_services
from dataset import services as dataset_services
from dataset.models import Table
from hctqa.core.release import ReleaseQuestion, ReleaseTable
from leaderboard import services
from leaderboard.models import Submission
from pagecache.pages import CACHE, TOKENS, public_page, written_tables
from tests.conftest import celery_conf
from tests.factories import QuestionFactory, SubmissionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

TABLE = "psa--4--1"
PRIVATE = "POOL-QUESTION-6612"
GOLD = "TEST-GOLD-4471"


@pytest.fixture
def public(settings, tmp_path) -> dict:
    settings.RELEASES_ROOT = tmp_path / "releases"
    settings.RELEASE_BUILD_PROCESSES = 1
    table = TableFactory(id=TABLE, canonical_csv="Region,Men\nNorth,10\nSouth,20\n")
    QuestionFactory(table=table, id=f"{TABLE}--M0", text="Which region has 20 men?")
    test_table = TableFactory(id="psa--4--2", split="test")
    QuestionFactory(table=test_table, id="psa--4--2--M0", gold_answer=f"{{{GOLD}}}")
    QuestionFactory(table=table, id=f"{TABLE}--M1", text=f"Which {PRIVATE}?", in_gold_pool=True)
    submission = SubmissionFactory(model_name="Kept-Model-7B")
    return {"table": table, "submission": submission}


def _urls(public: dict) -> list[str]:
    pk = public["submission"].pk
    return [
        "/",
        "/dataset/",
        "/dataset/?q=North",
        "/dataset/coverage/",
        f"/tables/{TABLE}/",
        f"/tables/{TABLE}/?format=markdown",
        f"/tables/{TABLE}/download/csv/",
        "/leaderboard/",
        "/leaderboard/vision/",
        "/leaderboard/text/export.json",
        f"/leaderboard/submissions/{pk}/",
        "/leaderboard/regression/",
        "/releases/",
    ]


def _queries(client: Client, url: str, **headers: str) -> tuple[HttpResponse, int]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, headers=headers)
    return response, len(ctx.captured_queries)


def test_a_kept_page_is_served_without_queries(client: Client, public: dict) -> None:
    for url in _urls(public):
        first, made = _queries(client, url)
        assert first.status_code == 200, url
        assert made > 0, url
        again, made = _queries(client, url)
        assert (again.status_code, made) == (200, 0), url
        assert again.content == first.content, url
        assert again["Content-Type"] == first["Content-Type"], url
        # Browsers and proxies are told that htmx's requests and logged-in users get other
        # content, a kept page as well as a rendered one.
        assert {"Cookie", "HX-Request"} <= {v.strip() for v in again["Vary"].split(",")}, url


def test_an_anonymous_page_holds_no_csrf_token_or_cookie(client: Client, public: dict) -> None:
    response = client.get("/leaderboard/")
    assert "X-CSRFToken" not in response.content.decode()
    assert "csrftoken" not in response.cookies


def _fresh(url: str, settings) -> str:
    """The page rendered now, kept nowhere."""
    settings.PAGE_CACHE_SECONDS = 0
    try:
        return Client().get(url).content.decode()
    finally:
        settings.PAGE_CACHE_SECONDS = 300


def _new_score(public: dict) -> tuple[str, str]:
    owner = public["submission"].owner
    data = services.SubmissionInput(
        model_name="Fresh-Model-13B",
        weights="open",
        parameters_billions=13,
        modality="text",
        table_format="paper",
        split="all",
        data_scope="real",
    )
    answers = {f"{TABLE}--M0": "South", "psa--4--2--M0": "a guess"}
    lines = "\n".join(json.dumps({"id": q, "response": a}) for q, a in answers.items())
    with celery_conf(task_always_eager=True):
        submission = services.submission_create(
            owner=owner, data=data, predictions=SimpleUploadedFile("p.jsonl", lines.encode())
        )
    submission.refresh_from_db()
    assert submission.status == "scored", submission.error
    return "/leaderboard/", "Fresh-Model-13B"


def _made_private(public: dict) -> tuple[str, str]:
    submission = public["submission"]
    services.submission_visibility_set(
        submission=submission, user=submission.owner, visibility="private"
    )
    return "/leaderboard/", "-Kept-Model-7B"


def _imported(public: dict) -> tuple[str, str]:
    record = ReleaseTable(
        id="census--4--9",
        source="census",
        canonical_csv="County,Farms\nKent,12\n",
        table_properties={},
        questions=(ReleaseQuestion("census--4--9--M0", "How many farms?", "{12}", "human", {}),),
    )
    dataset_services.release_import(tables=[record])
    return "/dataset/", "census--4--9"


def _annotated(public: dict) -> tuple[str, str]:
    adjudicator = UserFactory(role="adjudicator")
    properties = {**public["table"].table_properties, "row_group_label": True}
    annotation_services.table_properties_resolve(
        adjudicator=adjudicator, table=public["table"], properties=properties
    )
    return "/dataset/?table_property=row_group_label", TABLE


def _question_written(public: dict) -> tuple[str, str]:
    annotator = UserFactory(role="annotator")
    annotation_services.question_write(
        annotator=annotator,
        table=public["table"],
        client_key=uuid.uuid4(),
        text="How many men live in the North?",
        gold_answer="{10}",
        query_properties={
            "row_filter": True,
            "row_filter_lookup": True,
            "row_filter_single_column": True,
            "row_filter_single_row": True,
            "returned_columns": True,
            "returned_columns_plain": True,
            "returned_columns_outputs": 1,
        },
    )
    return f"/tables/{TABLE}/", "How many men live in the North?"


def _released(public: dict) -> tuple[str, str]:
    call_command("cut_release", "4.4.0", stdout=io.StringIO())
    return "/releases/", "4.4.0"


def _bulk_update(public: dict) -> tuple[str, str]:
    # A queryset update sends no model signal; the SQL is seen all the same.
    Table.objects.filter(pk=TABLE).update(canonical_csv="Region,Men\nNorth,10\nEast,30\n")
    return f"/tables/{TABLE}/", "East"


CHANGES: dict[str, Callable[[dict], tuple[str, str]]] = {
    "a new score": _new_score,
    "a visibility change": _made_private,
    "an import": _imported,
    "an annotation": _annotated,
    "a question written": _question_written,
    "a release": _released,
    "a bulk update": _bulk_update,
}


@pytest.mark.parametrize("change", CHANGES)
def test_every_change_shows_on_the_next_anonymous_request(
    client: Client, public: dict, settings, change: str
) -> None:
    # Every public page kept first, as a busy board would have them.
    pages = [*_urls(public), "/dataset/?table_property=row_group_label"]
    for url in pages:
        client.get(url)
    url, expected = CHANGES[change](public)
    body = client.get(url).content.decode()
    if expected.startswith("-"):
        assert expected[1:] not in body
    else:
        assert expected in body
    # Every other page as well: each equals what it renders into now.
    for other in pages:
        assert client.get(other).content.decode() == _fresh(other, settings), other


def test_a_heartbeat_keeps_the_pages_and_progress_does_not(client: Client, public: dict) -> None:
    client.get("/leaderboard/")
    rows = Submission.objects.filter(pk=public["submission"].pk)
    rows.update(heartbeat_at=timezone.now())
    assert _queries(client, "/leaderboard/")[1] == 0
    rows.update(heartbeat_at=timezone.now(), progress=99)
    assert _queries(client, "/leaderboard/")[1] > 0


def test_a_transaction_renews_the_pages_on_commit_and_not_on_rollback(
    client: Client, public: dict
) -> None:
    client.get(f"/tables/{TABLE}/")

    class Undone(Exception):
        pass

    with pytest.raises(Undone), transaction.atomic():
        Table.objects.filter(pk=TABLE).update(canonical_csv="Region,Men\nWest,1\n")
        raise Undone
    assert _queries(client, f"/tables/{TABLE}/")[1] == 0
    with transaction.atomic():
        Table.objects.filter(pk=TABLE).update(canonical_csv="Region,Men\nWest,1\n")
        # Within the transaction the writer's own reads skip the pages kept before it.
        assert "West" in Client().get(f"/tables/{TABLE}/").content.decode()
    assert "West" in client.get(f"/tables/{TABLE}/").content.decode()


@pytest.mark.parametrize("role", ["researcher", "annotator", "admin"])
def test_a_logged_in_user_never_gets_a_kept_page_nor_leaves_one(
    client: Client, public: dict, role: str
) -> None:
    anonymous = Client()
    anonymous.get(f"/tables/{TABLE}/")  # kept
    user = UserFactory(role=role)
    client.force_login(user)
    mine, made = _queries(client, f"/tables/{TABLE}/")
    assert made > 0 and user.username in mine.content.decode()
    caches[CACHE].clear()
    client.get(f"/tables/{TABLE}/")
    client.get("/leaderboard/")
    # Nothing the user saw was kept: the anonymous visitor's pages are rendered for them.
    for url in (f"/tables/{TABLE}/", "/leaderboard/"):
        theirs, made = _queries(anonymous, url)
        assert made > 0 and user.username not in theirs.content.decode(), url


def test_private_questions_and_gold_never_enter_the_kept_pages(
    client: Client, public: dict
) -> None:
    admin = Client()
    admin.force_login(UserFactory(role="admin"))
    urls = [*_urls(public), "/tables/psa--4--2/", "/dataset/?q=Which"]
    for url in urls:
        admin.get(url)
    assert PRIVATE in admin.get(f"/tables/{TABLE}/").content.decode()
    assert GOLD in admin.get("/tables/psa--4--2/").content.decode()
    for _ in range(2):  # rendered, then served as kept
        for url in urls:
            body = client.get(url).content.decode()
            assert PRIVATE not in body and GOLD not in body, url
    # The test process's own locmem cache.
    kept = [pickle.loads(v) for v in caches[CACHE]._cache.values()]  # noqa: S301
    pages = [entry[3].decode() for entry in kept if isinstance(entry, tuple)]
    assert len(pages) >= len(urls)
    assert not [p for p in pages if PRIVATE in p or GOLD in p]


def test_a_visitor_with_a_message_is_not_served_a_kept_page(client: Client, public: dict) -> None:
    client.get("/leaderboard/")
    request = RequestFactory().get("/")
    storage = CookieStorage(request)
    storage.add(20, "Logged out: see you soon.")
    response = HttpResponse()
    storage.update(response)
    client.cookies["messages"] = response.cookies["messages"].value
    shown, made = _queries(client, "/leaderboard/")
    assert made > 0 and "see you soon" in shown.content.decode()
    # The message is gone once shown, and the page it was in was not kept.
    assert "see you soon" not in client.get("/leaderboard/").content.decode()


calls: list[int] = []


@public_page
def _page_with_a_form(request: HttpRequest) -> HttpResponse:
    calls.append(1)
    return HttpResponse(f"<form>{get_token(request)}</form>")


@public_page
def _plain_page(request: HttpRequest) -> HttpResponse:
    calls.append(1)
    return HttpResponse("<p>Public</p>")


def _anonymous_request(path: str) -> HttpRequest:
    request = RequestFactory().get(path)
    request.user = AnonymousUser()
    request.session = SessionStore()
    request._messages = FallbackStorage(request)
    return request


def test_a_page_with_a_csrf_token_is_not_kept() -> None:
    calls.clear()
    for _ in range(2):
        _page_with_a_form(_anonymous_request("/form/"))
    assert len(calls) == 2
    calls.clear()
    for _ in range(2):
        _plain_page(_anonymous_request("/plain/"))
    assert len(calls) == 1


def test_fragments_and_query_strings_are_kept_apart(client: Client, public: dict) -> None:
    page = client.get("/dataset/").content.decode()
    fragment = client.get("/dataset/", headers={"HX-Request": "true"}).content.decode()
    assert "<html" in page and "<html" not in fragment
    assert client.get("/dataset/").content.decode() == page
    assert client.get("/dataset/", headers={"HX-Request": "true"}).content.decode() == fragment
    assert TABLE in client.get("/dataset/?q=North").content.decode()
    assert TABLE not in client.get("/dataset/?q=Nowhere").content.decode()


def _kept() -> int:
    """How many entries the pages cache holds (the test process's own locmem cache)."""
    return len(caches[CACHE]._cache)


def test_unknown_query_parameters_are_rendered_and_not_kept(client: Client, public: dict) -> None:
    client.get("/leaderboard/")
    before = _kept()
    for i in range(20):
        response, made = _queries(client, f"/leaderboard/?junk{i}={uuid.uuid4().hex}")
        assert response.status_code == 200 and made > 0
    assert _kept() == before
    # Asked again, rendered again: nothing was kept for it.
    assert _queries(client, "/leaderboard/?junk0=x")[1] > 0
    assert _queries(client, "/leaderboard/?junk0=x")[1] > 0


@pytest.mark.parametrize(
    "query",
    [
        "q=North&q=South",  # a single parameter twice: which counts is the view's business
        f"q={'x' * 201}",  # a value longer than any the forms take
        "&".join(f"col=recall&split=all&q={'n' * 100}" for _ in range(10)),  # too long
        "format=html",  # another view's parameter
    ],
)
def test_odd_query_strings_are_not_kept(client: Client, public: dict, query: str) -> None:
    before = _kept()
    for _ in range(2):
        assert _queries(client, f"/dataset/?{query}")[1] > 0
    assert _kept() == before


def test_the_same_parameters_in_another_order_are_one_kept_page(
    client: Client, public: dict
) -> None:
    first = client.get("/leaderboard/?split=all&q=Kept&col=recall&col=cc&cols=1")
    assert first.status_code == 200 and "Kept-Model-7B" in first.content.decode()
    kept = _kept()
    for again in (
        "/leaderboard/?cols=1&col=cc&col=recall&q=Kept&split=all",
        "/leaderboard/?col=cc&q=Kept&col=recall&col=cc&split=all&cols=1",
    ):
        response, made = _queries(client, again)
        assert (response.status_code, made) == (200, 0), again
    assert _kept() == kept
    # Another value is another page.
    assert _queries(client, "/leaderboard/?split=all&q=Fresh&col=recall&col=cc&cols=1")[1] > 0


def test_the_tokens_are_kept_apart_from_the_pages(client: Client, public: dict) -> None:
    for url in _urls(public):
        client.get(url)
    assert caches[TOKENS].get("table:annotation_table") is not None
    # Culling the pages (a full cache) takes no token with it.
    assert not [k for k in caches[CACHE]._cache if "table:" in k]


def test_a_lost_token_never_serves_a_stale_page(client: Client, public: dict, settings) -> None:
    url = f"/tables/{TABLE}/"
    client.get(url)
    caches[TOKENS].clear()  # evicted, as a full Redis may
    assert _queries(client, url)[1] > 0
    assert _queries(client, url)[1] == 0
    Table.objects.filter(pk=TABLE).update(canonical_csv="Region,Men\nNorth,10\nEast,30\n")
    caches[TOKENS].clear()  # the new token lost too
    body = client.get(url).content.decode()
    assert "East" in body and body == _fresh(url, settings)


@pytest.mark.parametrize(
    ("sql", "tables"),
    [
        ('INSERT INTO "leaderboard_score" ("a") VALUES (%s)', {"leaderboard_score"}),
        ('UPDATE "annotation_table" SET "split" = %s WHERE "id" = %s', {"annotation_table"}),
        ('DELETE FROM "releases_release" WHERE "id" IN (%s)', {"releases_release"}),
        ('TRUNCATE "annotation_table", "annotation_question";', {"*"}),
        ('UPDATE "leaderboard_submission" SET "heartbeat_at" = %s WHERE "id" = %s', set()),
        (
            'UPDATE "leaderboard_submission" SET "heartbeat_at" = %s, "progress" = %s WHERE x',
            {"leaderboard_submission"},
        ),
        # An assignment the reader cannot follow counts as a change.
        (
            'UPDATE "leaderboard_submission" SET "heartbeat_at" = (SELECT 1 WHERE 1), '
            '"status" = %s WHERE x',
            {"leaderboard_submission"},
        ),
        ('SELECT "annotation_table"."id" FROM "annotation_table"', set()),
        ("SAVEPOINT s1", set()),
    ],
)
def test_written_tables(sql: str, tables: set[str]) -> None:
    assert written_tables(sql) == tables


@pytest.fixture(autouse=True)
def _kept_pages_on(settings) -> Iterator[None]:
    settings.PAGE_CACHE_SECONDS = 300
    yield
