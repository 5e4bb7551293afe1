"""Test-split gold answers and gold-pool questions reach admins only: crawl every page and
endpoint as every other role.

New URLs must be added to the crawl (or, if they cannot show gold, to NO_GOLD_POSSIBLE):
test_every_url_is_crawled fails otherwise.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from annotation.models import VerificationSlot
from dataset.models import Question, SyntheticTable
from dataset.selectors import dataset_overview
from hctqa.core.render import FORMATS
from leaderboard import services
from releases.models import Release
from tests.factories import QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "SECRET-TEST-GOLD-7731"
# What computes the gold answer of a synthetic question: its SQL and its relational table.
SECRET_SQL = "SELECT SECRETSQL9 FROM t"
# In the Value column: a table's attribute values are its schema, an input of the NL-to-SQL
# items (the HCT shows them as labels anyway); its values are what the questions ask.
SECRET_ROWS = "73317.37"
T = "psa--5--5"
Q = f"{T}--M0"
OPEN_Q = "psa--5--6--M0"
# A private gold-control question, on a public training table beside a public question. It
# was public (and scored) before an admin put it in the pool: per-question results hold it.
POOL_T = "psa--5--7"
POOL_Q = f"{POOL_T}--M3"
POOL_TEXT = "Which ward had POOLWARD-5521 voters?"
POOL_SECRETS = (POOL_Q, "POOLWARD-5521", "POOLGOLD-8830")


VERSION = "9.9.0"


def crawl(
    mine: int,
    theirs: int,
    runs: tuple[int, int] = (1, 2),
    release_files: tuple[str, ...] = ("hf/README.md",),
    build: int = 1,
    track_submissions: tuple[int, ...] = (),
) -> dict[str, list[str]]:
    return {
        "home": ["/"],
        "dataset:dataset": [
            "/dataset/",
            "/dataset/?q=hidden",
            "/dataset/?split=test",
            "/dataset/?q=ward+had",
            "/dataset/?has_human_question=yes",
        ],
        "dataset:table_detail": [f"/tables/{T}/", f"/tables/{POOL_T}/"]
        + [f"/tables/{T}/?format={f}" for f in FORMATS],
        "dataset:table_download": [f"/tables/{T}/download/{f}/" for f in FORMATS],
        "api-table-list": ["/api/tables/", "/api/tables/?split=test", "/api/tables/?q=ward+had"],
        "api-table-detail": [f"/api/tables/{T}/", f"/api/tables/{POOL_T}/"],
        "api-table-rendering": [f"/api/tables/{T}/formats/{f}/" for f in FORMATS],
        "api-question-list": [
            "/api/questions/",
            "/api/questions/?split=test",
            f"/api/questions/?table={T}",
            # The attack: look a claimed item up by its table and words.
            f"/api/questions/?table={POOL_T}&q=ward+had",
            "/api/questions/?status=verified&origin=human",
        ],
        "api-question-detail": [f"/api/questions/{Q}/", f"/api/questions/{POOL_Q}/"],
        "api-index": ["/api/"],
        "api-schema": ["/api/schema/"],
        "api-docs": ["/api/docs/"],
        "accounts:account": ["/accounts/"],
        "accounts:approval_requests": ["/accounts/approval-requests/"],
        # Discussions: the test-split question's thread holds its gold, the pool question's
        # its secrets; the tables' threads list the questions' threads.
        "discussion:table": [f"/discussion/tables/{T}/", f"/discussion/tables/{POOL_T}/"],
        "discussion:question": [
            f"/discussion/questions/{Q}/",
            f"/discussion/questions/{POOL_Q}/",
            f"/discussion/questions/{OPEN_Q}/",
        ],
        "accounts:notifications": ["/accounts/notifications/"],
        "leaderboard:board": [
            "/leaderboard/",
            "/leaderboard/?sort=recall",
            "/leaderboard/?split=test&rules=2025-10",
        ],
        "leaderboard:board_vision": ["/leaderboard/vision/"],
        "leaderboard:board_export": [
            "/leaderboard/text/export.csv",
            "/leaderboard/text/export.json?rules=2025-10",
        ],
        "leaderboard:submit": ["/leaderboard/submit/"],
        "leaderboard:my_submissions": ["/leaderboard/submissions/"],
        "leaderboard:submission_detail": [
            f"/leaderboard/submissions/{pk}/{suffix}"
            for pk in (mine, theirs, *track_submissions)
            for suffix in ("", "?part=status", "?rules=2025-10")
        ],
        "leaderboard:submission_results": [
            f"/leaderboard/submissions/{pk}/results.{fmt}"
            for pk in (mine, theirs, *track_submissions)
            for fmt in ("csv", "json")
        ],
        "leaderboard:compare": [f"/leaderboard/compare/?a={mine}&b={theirs}"],
        "leaderboard:regression": ["/leaderboard/regression/"],
        "leaderboard:rescores": ["/leaderboard/rescores/"],
        "leaderboard:inference_runs": ["/leaderboard/inference/"],
        "leaderboard:inference_run_new": ["/leaderboard/inference/new/"],
        "leaderboard:inference_run_detail": [
            f"/leaderboard/inference/{pk}/{suffix}"
            for pk in runs
            for suffix in ("", "?part=progress")
        ],
        "api-inference-run-list": ["/api/inference-runs/"],
        "api-inference-run-detail": [f"/api/inference-runs/{pk}/" for pk in runs],
        "api-endpoint-list": ["/api/endpoints/"],
        "api-endpoint-detail": ["/api/endpoints/gpu-host/"],
        "api-leaderboard": ["/api/leaderboard/", "/api/leaderboard/?split=test&rules=2025-10"],
        "api-submission-list": ["/api/submissions/"],
        "api-submission-detail": [
            f"/api/submissions/{pk}/" for pk in (mine, theirs, *track_submissions)
        ],
        "api-submission-results": [
            f"/api/submissions/{pk}/results/" for pk in (mine, theirs, *track_submissions)
        ],
        "api-submission-item-results": [
            f"/api/submissions/{pk}/item-results/" for pk in (mine, theirs, *track_submissions)
        ],
        "annotate:hub": ["/annotate/"],
        "annotate:properties_next": ["/annotate/properties/"],
        "annotate:properties": [f"/annotate/properties/{T}/"],
        "annotate:questions_next": ["/annotate/questions/"],
        "annotate:questions": [f"/annotate/questions/{T}/", f"/annotate/questions/{POOL_T}/"],
        "annotate:agreement": ["/annotate/agreement/"],
        "annotate:resolve": [f"/annotate/agreement/{T}/"],
        "api-annotate-taxonomies": ["/api/annotate/taxonomies/"],
        "api-annotate-property-next": ["/api/annotate/properties/next/"],
        "api-annotate-property-work": [f"/api/annotate/properties/{T}/"],
        "api-annotate-question-next": ["/api/annotate/questions/next/"],
        "api-annotate-question-work": [
            f"/api/annotate/questions/{T}/",
            f"/api/annotate/questions/{POOL_T}/",
        ],
        "api-annotate-agreement": ["/api/annotate/agreement/"],
        "annotate:verify_next": ["/annotate/verify/"],
        "annotate:verify": [
            "/annotate/verify/00000000-0000-4000-8000-000000000001/",
            "/annotate/verify/00000000-0000-4000-8000-000000000002/",
        ],
        "annotate:adjudication": ["/annotate/adjudication/"],
        "annotate:adjudicate": [f"/annotate/adjudication/{Q}/"],
        "annotate:verification_dashboard": ["/annotate/verification/"],
        "annotate:generation": ["/annotate/generation/"],
        "annotate:generation_run": ["/annotate/generation/1/"],
        "annotate:synthetic": ["/annotate/synthetic/"],
        "annotate:synthetic_run": ["/annotate/synthetic/1/"],
        "dataset:coverage": ["/dataset/coverage/"],
        "api-verify-adjudication": ["/api/verify/adjudication/"],
        "api-verify-dashboard": ["/api/verify/dashboard/"],
        "api-generation-runs": ["/api/verify/generation-runs/"],
        "api-generation-run": ["/api/verify/generation-runs/1/"],
        "releases:list": ["/releases/"],
        "releases:detail": [f"/releases/{VERSION}/"],
        "releases:build": [f"/releases/builds/{build}/"],
        # Every file of both editions; the full one is for admins only.
        "releases:download": [
            f"/releases/{VERSION}/{edition}/{path}"
            for edition in ("public", "full")
            for path in release_files
        ],
        "api-release-list": ["/api/releases/"],
        "api-release-detail": [f"/api/releases/{VERSION}/"],
        "api-release-build": [f"/api/releases/builds/{build}/"],
        "annotate:gold_pool": ["/annotate/gold/", "/annotate/gold/?verifier=crawl-owner"],
        "annotate:recent": ["/annotate/mine/"],
        "annotate:question_change": [f"/annotate/mine/questions/{Q}/"],
        "annotate:verdict_change": [
            "/annotate/mine/verdicts/00000000-0000-4000-8000-000000000000/"
        ],
        "annotate:flags": ["/annotate/flags/"],
        "annotate:assignments": ["/annotate/assignments/"],
        "landing": ["/welcome/"],
        "api-gold-pool": ["/api/verify/gold-pool/"],
        "api-gold-verdicts": ["/api/verify/gold-verdicts/"],
        # The tracks: the test table's transformation and NL-to-SQL items hold the secret
        # as gold; a rival's submission predicts it exactly.
        "tracks:index": ["/tracks/"],
        "tracks:build_status": ["/tracks/build/status/"],
        "leaderboard:track_board": [
            f"/leaderboard/tracks/{t}/{q}"
            for t in ("extraction", "transformation", "sql")
            for q in ("", "?group=source:synthetic", "?sort=-model")
        ],
        "leaderboard:track_board_export": [
            f"/leaderboard/tracks/{t}/export.{fmt}"
            for t in ("transformation", "sql")
            for fmt in ("csv", "json")
        ],
        "leaderboard:track_submit": [
            f"/leaderboard/tracks/{t}/submit/" for t in ("sql", "extraction")
        ],
        "api-track-list": ["/api/tracks/"],
        "api-track-board": ["/api/tracks/sql/board/", "/api/tracks/transformation/board/"],
        "ingest:home": ["/ingest/"],
        "ingest:quality": ["/ingest/quality/"],
        "ingest:collection_new": ["/ingest/collections/new/"],
        "api-ingest-documents": ["/api/ingest/documents/"],
        "api-ingest-collections": ["/api/ingest/collections/"],
        "api-ingest-quality": ["/api/ingest/quality/"],
    }


# Endpoints that take no table or question and cannot carry a gold answer (writes, log-in).
NO_GOLD_POSSIBLE = {
    "healthz",
    "media",
    "login",
    "logout",
    "accounts:sign_up",
    "accounts:token_rotate",
    # Account writes and the notification link (a redirect to its page, which is crawled).
    "accounts:approval_request",
    "accounts:approval_request_decide",
    "accounts:email_preferences",
    # Sending and following an address's confirmation link: the account's own address only.
    "accounts:email_confirmation_send",
    "accounts:email_confirm",
    "accounts:notifications_read",
    "accounts:notification_open",
    "api-token",
    "leaderboard:submission_rescore",
    "leaderboard:submission_delete",
    "leaderboard:submission_visibility",
    "api-submission-visibility",
    "api-submission-create",
    "api-submission-rescore",
    "api-submission-delete",
    "leaderboard:inference_run_cancel",
    "leaderboard:inference_run_resume",
    "api-inference-run-create",
    "api-inference-run-cancel",
    "api-inference-run-resume",
    # Annotation writes: they echo back only what the annotator sent.
    "api-annotate-property-draft",
    "api-annotate-property-save",
    "api-annotate-property-skip",
    "api-annotate-answer-check",
    "api-annotate-question-draft",
    "api-annotate-question-save",
    "api-annotate-question-skip",
    "api-annotate-resolve",
    # Verification writes. Claims never serve test-split gold: gold control draws from the
    # other splits (tests/annotation/test_verification.py checks it).
    "annotate:verify_skip",
    "annotate:verifier_reinstate",
    "annotate:generation_cancel",
    "annotate:generation_resume",
    "annotate:synthetic_run_cancel",
    # Claims serve gold-pool questions by design (that is gold control); never one that the
    # claimant can look up (tests/annotation/test_verification*.py).
    "api-verify-claim",
    "api-verify-renew",
    "api-verify-submit",
    "api-verify-release",
    "api-verify-decide",
    "api-generation-cancel",
    # Cutting a release answers with the build's progress, never a gold answer.
    "releases:cut",
    "api-release-create",
    "api-gold-pool-add",
    "api-gold-pool-remove",
    # Raising and resolving a flag redirect; the queue that lists flags is crawled.
    "annotate:flag_new",
    "annotate:flag_resolve",
    # Taking back assignments redirects to their page, which is crawled.
    "annotate:assignments_withdraw",
    # Ingest: documents, pages and candidates hold tables being extracted, never a question.
    "ingest:document",
    "ingest:page",
    "ingest:page_image",
    "ingest:candidate",
    "ingest:crop",
    "ingest:reject",
    "ingest:image",
    "api-ingest-document",
    "api-ingest-draw",
    "api-ingest-candidate",
    "api-ingest-candidate-draft",
    "api-ingest-candidate-save",
    "api-ingest-candidate-reject",
    "api-ingest-candidate-extract",
    "api-ingest-preview",
    # Starting a build of the tracks' items redirects to /tracks/, which is crawled.
    "tracks:build_start",
}


def _names(resolver: URLResolver, namespace: str = "") -> Iterator[str]:
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _names(pattern, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield namespace + pattern.name


def test_every_url_is_crawled() -> None:
    names = {n for n in _names(get_resolver()) if not n.startswith("admin:")}
    assert names == set(crawl(1, 2)) | NO_GOLD_POSSIBLE


def _scored(owner, predictions: dict[str, str], name: str) -> int:
    data = services.SubmissionInput(
        model_name=name,
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split="all",
        data_scope="real",
    )
    lines = "\n".join(json.dumps({"id": q, "response": a}) for q, a in predictions.items())
    upload = SimpleUploadedFile("p.jsonl", lines.encode())
    submission = services.submission_create(owner=owner, data=data, predictions=upload)
    services.submission_score(submission_id=submission.pk)
    return submission.pk


def _track_scored(owner, track: str, predictions: dict[str, str]) -> int:
    data = services.SubmissionInput(
        model_name=f"{track} rival",
        weights="open",
        modality="text",
        table_format="other",
        split="test",
        data_scope="",
        track=track,
    )
    lines = "\n".join(json.dumps({"id": k, "prediction": v}) for k, v in predictions.items())
    upload = SimpleUploadedFile("p.jsonl", lines.encode())
    submission = services.submission_create(owner=owner, data=data, predictions=upload)
    services.submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == "scored", submission.error
    return submission.pk


def _inference_run(owner, answer: str) -> int:
    from endpoints.models import Endpoint
    from leaderboard.models import InferenceResponse, InferenceRun

    endpoint, _ = Endpoint.objects.get_or_create(
        name="gpu-host", base_url="http://gpu-host:8000/v1", api_key_env="GPU_API_KEY"
    )
    run = InferenceRun.objects.create(
        created_by=owner,
        model_name=f"run-of-{owner.username}",
        endpoint=endpoint,
        base_url=endpoint.base_url,
        modality="text",
        table_format="csv",
        split="all",
        data_scope="real",
        weights="closed",
        status="failed",
        error="No answer to 1 question",
        total=2,
        answered=1,
        failed=1,
    )
    InferenceResponse.objects.create(run=run, question_id=Q, response=answer, prompt_sha256="0")
    InferenceResponse.objects.create(
        run=run, question_id=OPEN_Q, status="failed", error="HTTP 503: busy", prompt_sha256="1"
    )
    InferenceResponse.objects.create(
        run=run, question_id=POOL_Q, status="failed", error="HTTP 503: busy", prompt_sha256="2"
    )
    return run.pk


@pytest.fixture
def secret_question(tmp_path, settings) -> dict:
    settings.RELEASES_ROOT = tmp_path / "releases"
    settings.TRACK_FILES_ROOT = tmp_path / "track-files"
    settings.RELEASE_BUILD_PROCESSES = 1
    table = TableFactory(id=T, split="test")
    SyntheticTable.objects.create(
        table=table,
        family="t3qa",
        hct_csv="a,b\n1,2",
        hct_html="<table></table>",
        relational_csv=f"A,Value\na,Value\nb,{SECRET_ROWS}",
    )
    QuestionFactory(
        table=table,
        id=Q,
        gold_answer=f"{{{SECRET}}}",
        text="What is hidden?",
        sql=SECRET_SQL,
    )
    QuestionFactory(
        table=TableFactory(id="psa--5--6", split="train"), id=OPEN_Q, gold_answer="{open}"
    )
    pool_table = TableFactory(id=POOL_T, split="train")
    # An id of its own: a sequence number like M31 would contain the pool question's id M3.
    QuestionFactory(
        table=pool_table, id=f"{POOL_T}--M1", text="A public question on the same table?"
    )
    pool_question = QuestionFactory(
        table=pool_table, id=POOL_Q, text=POOL_TEXT, gold_answer="{POOLGOLD-8830}"
    )
    owner = UserFactory(username="crawl-owner", role="researcher")
    rival = UserFactory(username="rival", role="researcher")
    made = {
        "owner": owner,
        # The crawling researcher guessed wrong; a rival's public submission got it right.
        "mine": _scored(owner, {Q: "a guess", OPEN_Q: "wrong", POOL_Q: "ward 9"}, "mine"),
        "theirs": _scored(rival, {Q: SECRET, OPEN_Q: "nope", POOL_Q: "POOLGOLD-8830"}, "theirs"),
        # Inference runs: the rival's model answered the hidden question right.
        "runs": (_inference_run(owner, "a guess"), _inference_run(rival, SECRET)),
    }
    # Then an admin made it gold, and a verifier was served it (the audit names both).
    Question.objects.filter(pk=pool_question.pk).update(in_gold_pool=True)
    VerificationSlot.objects.create(
        question=pool_question,
        kind="gold",
        annotator=owner,
        status="done",
        rating="good",
        answer_correct=True,
        submitted_at=timezone.now(),
        gold_shown_answer="{POOLGOLD-8830}",
        gold_shown_wrong=False,
        gold_passed=True,
    )
    # An admin discusses both in their threads, mentioning an annotator, who may see
    # neither, so is not told.
    from discussion.services import comment_post

    admin = UserFactory(username="crawl-admin", role="admin")
    made["watcher"] = UserFactory(username="watcher", role="annotator")
    test_question = Question.objects.get(pk=Q)
    comment_post(
        author=admin,
        table=test_question.table,
        question=test_question,
        body=f"@watcher the gold is {SECRET}, from {SECRET_SQL}",
    )
    comment_post(
        author=admin,
        table=pool_question.table,
        question=Question.objects.get(pk=POOL_Q),
        body=f"@watcher {POOL_Q} is gold control: POOLGOLD-8830",
    )
    # The tracks' items of the test table hold the secret as gold (its relational rows, its
    # SQL and result); the rival predicts them exactly, on the sql and transformation
    # tracks, and the executed result of its SQL would hold the hidden table's rows.
    from tracks.services.items import items_build

    items_build()
    made["track_submissions"] = (
        _track_scored(rival, "sql", {Q: "SELECT * FROM DBdata -- " + SECRET_SQL}),  # noqa: S608
        _track_scored(rival, "transformation", {T: f"A,Value\nb,{SECRET_ROWS}\n"}),
    )
    # A release holding the secret: its full edition has it, the public one never does;
    # neither holds the pool question. (Every file's contents, archives unpacked, are
    # checked in tests/releases.)
    out = io.StringIO()
    call_command("cut_release", VERSION, stdout=out)
    release = Release.objects.get(version=VERSION)
    made["release_files"] = tuple(sorted({f["path"] for f in release.files}))
    made["build"] = release.build.pk
    return made


@pytest.mark.parametrize("role", [None, "annotator", "adjudicator", "researcher"])
def test_no_page_or_endpoint_shows_test_split_gold(
    client: Client, secret_question: dict, role: str | None
) -> None:
    if role == "researcher":
        client.force_login(secret_question["owner"])
    elif role == "annotator":
        client.force_login(secret_question["watcher"])  # mentioned where they may not read
    elif role:
        client.force_login(UserFactory(role=role))
    urls = crawl(
        secret_question["mine"],
        secret_question["theirs"],
        secret_question["runs"],
        secret_question["release_files"],
        secret_question["build"],
        secret_question["track_submissions"],
    )
    reached = _crawl_finds_no_secret(client, urls)
    if role == "researcher":
        # The owner reaches their own per-question results, predictions and all.
        mine = secret_question["mine"]
        assert client.get(f"/leaderboard/submissions/{mine}/results.json").status_code == 200
        assert client.get(f"/api/submissions/{mine}/results/").status_code == 200
    assert reached > 30


def _crawl_finds_no_secret(client: Client, urls: dict[str, list[str]]) -> int:
    """Every URL answered without a secret; how many with a page (200)."""
    reached = 0
    for paths in urls.values():
        for url in paths:
            response = client.get(url)
            # The comparison on the one test question shared is refused (400): a mean on it
            # would give its score away.
            refused = (400,) if url.startswith("/leaderboard/compare/") else ()
            allowed = (200, 302, 401, 403, 404, *refused)
            assert response.status_code in allowed, (url, response.status_code)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            for secret in (SECRET, SECRET_SQL, SECRET_ROWS, *POOL_SECRETS):
                assert secret not in body.decode(errors="replace"), (url, secret)
            reached += response.status_code == 200
    return reached


@pytest.mark.django_db(transaction=True)
def test_no_kept_page_shows_test_split_gold(
    client: Client, secret_question: dict, settings
) -> None:
    """The same crawl with public pages kept (pagecache), which only happens outside
    a transaction: an admin first, whose pages show the gold, then anonymous visitors twice,
    the second time served the pages the first kept."""
    settings.PAGE_CACHE_SECONDS = 300
    urls = crawl(
        secret_question["mine"],
        secret_question["theirs"],
        secret_question["runs"],
        secret_question["release_files"],
        secret_question["build"],
        secret_question["track_submissions"],
    )
    admin = Client()
    admin.force_login(UserFactory(role="admin"))
    for paths in urls.values():
        for url in paths:
            admin.get(url)
    assert SECRET in admin.get(f"/tables/{T}/").content.decode()
    assert _crawl_finds_no_secret(client, urls) > 30
    assert _crawl_finds_no_secret(client, urls) > 30
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(f"/tables/{T}/").status_code == 200
    assert not ctx.captured_queries  # served as kept: the crawl above was of kept pages


def test_the_crawl_would_see_gold_if_it_leaked(client: Client, secret_question: dict) -> None:
    # The same pages as an admin show the secret: the crawl above is not blind.
    client.force_login(UserFactory(role="admin"))
    table_page = client.get(f"/tables/{T}/").content.decode()
    assert SECRET in table_page and SECRET_SQL in table_page and SECRET_ROWS in table_page
    assert SECRET_SQL in client.get(f"/api/questions/{Q}/").content.decode()
    assert SECRET in client.get(f"/discussion/questions/{Q}/").content.decode()
    assert "POOLGOLD-8830" in client.get(f"/discussion/questions/{POOL_Q}/").content.decode()
    assert SECRET in client.get(f"/api/questions/{Q}/").content.decode()
    theirs = secret_question["theirs"]
    assert SECRET in client.get(f"/leaderboard/submissions/{theirs}/results.json").content.decode()
    # The rival's SQL ran on the hidden table: its result is in the per-item detail, which
    # only admins (who may see test gold) read for a test item.
    sql_submission = secret_question["track_submissions"][0]
    detail = client.get(f"/api/submissions/{sql_submission}/item-results/").content.decode()
    assert SECRET_ROWS in detail
    full = client.get(f"/releases/{VERSION}/full/hf/data/test.jsonl")
    body = b"".join(full.streaming_content).decode()
    assert SECRET in body and SECRET_SQL in body
    # The gold pool is in no edition, the full one included; its table's public question is.
    train = client.get(f"/releases/{VERSION}/full/hf/data/train.jsonl")
    body = b"".join(train.streaming_content).decode()
    assert "A public question on the same table?" in body and POOL_Q not in body
    # Admins see the pool question wherever the dataset is shown, and on the gold pages.
    for url in (f"/tables/{POOL_T}/", f"/api/questions/{POOL_Q}/", "/annotate/gold/"):
        body = client.get(url).content.decode()
        assert POOL_Q in body and "POOLWARD-5521" in body, url
    found = client.get(f"/api/questions/?table={POOL_T}&q=ward+had").json()
    assert [q["id"] for q in found["results"]] == [POOL_Q]


def test_searching_for_a_gold_answer_does_not_find_its_table(
    client: Client, secret_question: dict
) -> None:
    # Search covers ids, cells and question text, never gold answers: no oracle for the test split.
    response = client.get(f"/dataset/?q={SECRET}")
    assert response.context["page"].paginator.count == 0
    assert client.get(f"/api/tables/?q={SECRET}").json()["count"] == 0


@pytest.mark.parametrize("role", [None, "annotator", "adjudicator", "researcher"])
def test_counts_and_filters_do_not_reveal_a_pool_question(
    client: Client, secret_question: dict, role: str | None
) -> None:
    if role:
        client.force_login(UserFactory(role=role))
    tables = {t["id"]: t for t in client.get("/api/tables/?page_size=500").json()["results"]}
    # The pool table shows its one public question, as if the pool question did not exist.
    assert (tables[POOL_T]["question_count"], tables[POOL_T]["human_question_count"]) == (1, 1)
    assert client.get("/api/tables/?q=ward+had").json()["count"] == 0
    assert client.get(f"/api/questions/?table={POOL_T}").json()["count"] == 1
    assert client.get(f"/api/questions/{POOL_Q}/").status_code == 404
    # The home page's counts: the pool question counts for admins only.
    viewer = client.get("/").wsgi_request.user
    ours = dataset_overview(viewer=viewer)
    theirs = dataset_overview(viewer=UserFactory(role="admin"))
    assert ours.questions == theirs.questions - 1
