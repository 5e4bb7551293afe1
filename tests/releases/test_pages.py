"""The releases page, the downloads, the API, cutting from the web, and board rows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from dataset.models import Question
from leaderboard import services as board
from releases.models import BuildStatus, ReleaseBuild
from releases.tasks import build_release
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def released(dataset: dict, cut) -> object:
    release, _ = cut("2026.11", "--notes", "First public cut.")
    return release


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_page_lists_releases_with_counts_changelog_and_public_downloads(
    client: Client, released
) -> None:
    page = client.get("/releases/").content.decode()
    assert "2026.11" in page and "First public cut." in page
    assert f"{released.counts['questions']:,}" in page
    readme = next(
        f for f in released.files if f["edition"] == "public" and f["path"] == "hf/README.md"
    )
    assert readme["sha256"] in page and "/releases/2026.11/public/hf/README.md" in page
    assert "/releases/2026.11/full/" not in page and "Cut a release" not in page
    assert "The first release." in page
    detail = client.get("/releases/2026.11/").content.decode()
    assert "hf/data/test.parquet" in detail and readme["sha256"] in detail


def test_admins_see_the_full_edition_and_the_form(client: Client, released) -> None:
    client.force_login(UserFactory(role="admin"))
    page = client.get("/releases/").content.decode()
    assert "/releases/2026.11/full/hf/data/test.jsonl" in page and "Cut a release" in page


def test_a_download_is_the_file_as_released(client: Client, released, releases_root: Path) -> None:
    response = client.get("/releases/2026.11/public/hf/data/test.jsonl")
    data = body(response)
    assert response.status_code == 200
    assert data == (releases_root / "2026.11/public/hf/data/test.jsonl").read_bytes()
    entry = next(
        f for f in released.files if f["edition"] == "public" and f["path"] == "hf/data/test.jsonl"
    )
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    assert response["ETag"] == f'"{entry["sha256"]}"'
    assert "immutable" in response["Cache-Control"]
    assert "attachment" in response["Content-Disposition"]
    again = client.get(
        "/releases/2026.11/public/hf/data/test.jsonl", HTTP_IF_NONE_MATCH=response["ETag"]
    )
    assert again.status_code == 304


@pytest.mark.parametrize("role", [None, "annotator", "researcher"])
def test_the_full_edition_is_for_admins_only(client: Client, released, role: str | None) -> None:
    if role:
        client.force_login(UserFactory(role=role))
    assert client.get("/releases/2026.11/full/hf/data/test.jsonl").status_code == 403
    client.force_login(UserFactory(role="admin"))
    response = client.get("/releases/2026.11/full/hf/data/test.jsonl")
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"


@pytest.mark.parametrize(
    "path",
    [
        "/releases/2026.11/public/../snapshot.json.gz",
        "/releases/2026.11/public/hf/nothing.jsonl",
        "/releases/2026.11/other/hf/README.md",
        "/releases/2030.1/public/hf/README.md",
        "/releases/2026.11/public/%2e%2e/full/hf/data/test.jsonl",
    ],
)
def test_only_recorded_files_are_served(client: Client, released, path: str) -> None:
    assert client.get(path).status_code == 404


def test_the_api_lists_releases_and_their_files(client: Client, released) -> None:
    listing = client.get("/api/releases/").json()
    assert listing["count"] == 1
    (row,) = listing["results"]
    assert (
        row["version"] == "2026.11" and row["counts"]["questions"] == released.counts["questions"]
    )
    assert row["changes"]["questions_added"] == released.counts["questions"]
    detail = client.get("/api/releases/2026.11/").json()
    assert set(detail["files"]) == {"public"}
    paths = {f["path"]: f for f in detail["files"]["public"]}
    assert paths["hf/README.md"]["url"].endswith("/releases/2026.11/public/hf/README.md")
    assert detail["changelog"]["previous"] is None
    client.force_login(UserFactory(role="admin"))
    assert set(client.get("/api/releases/2026.11/").json()["files"]) == {"public", "full"}
    assert client.get("/api/releases/2030.1/").status_code == 404


def test_admins_cut_a_release_through_the_api_and_follow_it(
    client: Client, dataset: dict, releases_root: Path, django_capture_on_commit_callbacks
) -> None:
    admin = UserFactory(role="admin")
    headers = {"Authorization": f"Token {Token.objects.create(user=admin).key}"}
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            "/api/releases/create/",
            {"version": "2026.11", "title": "November"},
            headers=headers,
            content_type="application/json",
        )
    assert response.status_code == 202, response.content
    build = response.json()
    assert build["status"] == "queued" and len(callbacks) == 1
    # The task the callback queues, run here: it builds the release and records progress.
    assert build_release.apply(args=[build["id"]]).get() == "built release 2026.11"
    followed = client.get(f"/api/releases/builds/{build['id']}/", headers=headers).json()
    assert followed["status"] == "done" and followed["progress"] == 100
    assert followed["release"] == "2026.11"
    # A second run of the same task message changes nothing.
    assert build_release.apply(args=[build["id"]]).get() == "not queued"
    again = client.post(
        "/api/releases/create/",
        {"version": "2026.11", "title": "again"},
        headers=headers,
        content_type="application/json",
    )
    assert again.status_code == 400 and again.json()["field"] == "version"


def test_others_cannot_cut_releases(client: Client, dataset: dict) -> None:
    researcher = UserFactory(role="researcher")
    headers = {"Authorization": f"Token {Token.objects.create(user=researcher).key}"}
    response = client.post(
        "/api/releases/create/",
        {"version": "2026.11", "title": "mine"},
        headers=headers,
        content_type="application/json",
    )
    assert response.status_code == 403
    client.force_login(researcher)
    assert client.post("/releases/cut/", {"version": "2026.11", "title": "x"}).status_code == 403
    assert client.get("/releases/builds/1/").status_code == 403
    assert not ReleaseBuild.objects.exists()


def test_the_web_form_starts_a_build_and_shows_its_progress(
    client: Client, dataset: dict, django_capture_on_commit_callbacks
) -> None:
    client.force_login(UserFactory(role="admin"))
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            "/releases/cut/", {"version": "2026.11", "title": "November", "notes": ""}
        )
    build = ReleaseBuild.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/releases/builds/{build.pk}/"
    assert len(callbacks) == 1
    page = client.get(response["Location"]).content.decode()
    assert "Queued" in page and 'hx-trigger="every 1s"' in page
    assert "is being built" not in page  # the status line follows the build; no banner
    fragment = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<section id="build-progress"')
    refused = client.post("/releases/cut/", {"version": "2026.12", "title": "Too soon"})
    assert refused.status_code == 400 and "2026.11 is being built" in refused.content.decode()
    bad = client.post("/releases/cut/", {"version": "november", "title": "x"})
    assert bad.status_code == 400 and "Not a version" in bad.content.decode()
    assert ReleaseBuild.objects.count() == 1 and build.status == BuildStatus.QUEUED
    # The list's notice follows the build for admins, and only for them.
    poll = f"/releases/?build={build.pk}"
    fragment = client.get(poll, HTTP_HX_REQUEST="true").content.decode()
    assert "Release 2026.11 is being built" in fragment and "<html" not in fragment
    for other in (Client(), _logged_in(UserFactory(role="annotator"))):
        answer = other.get(poll, HTTP_HX_REQUEST="true")
        assert answer.status_code == 403 and "being built" not in answer.content.decode()


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _score(owner, split: str) -> object:
    gold = dict(
        Question.objects.filter(
            status="verified",
            table__split=split,
            table__source__in=["psa", "pak", "census", "arxiv"],
        ).values_list("id", "gold_answer")
    )
    lines = "\n".join(json.dumps({"id": q, "response": a}) for q, a in gold.items())
    data = board.SubmissionInput(
        model_name="m",
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split=split,
        data_scope="real",
    )
    submission = board.submission_create(
        owner=owner, data=data, predictions=SimpleUploadedFile("p.jsonl", lines.encode())
    )
    board.submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission


def test_a_board_row_records_the_release_it_was_scored_on(client: Client, released) -> None:
    owner = UserFactory(role="researcher")
    submission = _score(owner, "test")
    assert submission.status == "scored" and submission.release == released
    page = client.get(f"/leaderboard/submissions/{submission.pk}/").content.decode()
    assert "release 2026.11" in page
    assert client.get(f"/api/submissions/{submission.pk}/").json()["release"] == "2026.11"

    # Once a gold answer of that split changes, the questions scored are no release's.
    q = Question.objects.filter(status="verified", table__split="test", table__source="psa").first()
    q.gold_answer = "{changed}"
    q.save()
    assert _score(owner, "test").release is None
    # Other splits still match the release.
    assert _score(owner, "train").release == released
