"""The tracks' pages: the four tracks, a board sorted and broken down, submitting by page
with the progress followed, a submission's page and its per-item download."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from leaderboard import services
from leaderboard.models import Submission
from tests.factories import UserFactory
from tests.tracks.helpers import gold_predictions, submit_track, track_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher():
    return UserFactory(role="researcher")


def test_the_tracks_page_shows_the_four_tracks_with_their_items(client: Client, built) -> None:
    body = client.get("/tracks/").content.decode()
    for name in ("Question answering", "Table extraction", "Table transformation", "NL-to-SQL"):
        assert name in body
    assert "track_items --track sql --split test" in body
    assert "/leaderboard/tracks/extraction/" in body
    assert "Synthetic tables" in body and "the generator" in body


def _board_rows(client: Client, url: str) -> list[str]:
    response = client.get(url)
    assert response.status_code == 200, response.content[:500]
    return [r.submission.model_name for r in response.context["page"].object_list]


def test_a_board_ranks_test_submissions_sorted_and_by_group(
    client: Client, built, researcher
) -> None:
    gold = gold_predictions("sql", "test")
    assert len(gold) > 20
    best = submit_track(researcher, "sql", gold, split="test", model_name="best")
    half = {k: (v if n % 2 else "SELECT 1") for n, (k, v) in enumerate(sorted(gold.items()))}
    submit_track(researcher, "sql", half, split="test", model_name="half")
    validation = gold_predictions("sql", "validation")
    submit_track(researcher, "sql", validation, model_name="mine only")
    submit_track(researcher, "sql", gold, split="test", model_name="hidden", visibility="private")
    rows = _board_rows(client, "/leaderboard/tracks/sql/")
    # The validation one is its owner's only; the private one is off the board.
    assert rows == ["best", "half"]
    assert _board_rows(client, "/leaderboard/tracks/sql/?sort=execution_accuracy") == [
        "half",
        "best",
    ]
    page = client.get("/leaderboard/tracks/sql/").content.decode()
    assert "1.000" in page and "[1.000, 1.000]" in page
    # Figures on one table property, and on the synthetic source.
    groups = best.track_score.breakdowns["table_properties"]
    part = next(g for g in groups if not g["withheld"] and g["n"] < len(gold))
    near = [g for g in groups if 0 < len(gold) - g["n"] <= 10 or 0 < g["n"] <= 10]
    assert all(g["withheld"] for g in near)  # they would give a few items away
    grouped = client.get(f"/leaderboard/tracks/sql/?group=property:{part['key']}")
    assert grouped.status_code == 200
    shown = grouped.context["page"].object_list
    assert [r.n for r in shown] == [part["n"], part["n"]]
    assert _board_rows(client, "/leaderboard/tracks/sql/?group=source:synthetic") == rows
    exported = client.get("/leaderboard/tracks/sql/export.json").json()
    assert [r["model"] for r in exported] == ["best", "half"]
    assert exported[0]["execution_accuracy"] == 1.0
    assert exported[1]["execution_accuracy"] == pytest.approx(0.5, abs=0.02)
    csv_text = client.get("/leaderboard/tracks/sql/export.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("rank,track,mode,figures_on,model")
    assert client.get(best.get_absolute_url()).status_code == 200
    assert client.get("/leaderboard/tracks/sql/?sort=teds").status_code == 400


def test_figures_on_ten_or_fewer_test_items_are_withheld_for_everyone(
    client: Client, built, researcher
) -> None:
    gold = gold_predictions("transformation", "test")
    assert 0 < len(gold) <= 10
    submission = submit_track(researcher, "transformation", gold, split="test", model_name="t")
    page = client.get("/leaderboard/tracks/transformation/").content.decode()
    assert "withheld-figure" in page and "1.000" not in page
    client.force_login(researcher)  # the owner too
    mine = client.get(submission.get_absolute_url()).content.decode()
    assert "withheld" in mine and "1.000" not in mine
    exported = client.get("/leaderboard/tracks/transformation/export.json").json()
    assert exported[0]["row_f1"] is None


def test_submitting_by_page_then_following_the_scoring(client: Client, built, researcher) -> None:
    client.force_login(researcher)
    form = client.get("/leaderboard/tracks/extraction/submit/")
    assert form.status_code == 200 and 'name="mode"' in form.content.decode()
    gold = gold_predictions("extraction", "validation", "page")
    response = client.post(
        "/leaderboard/tracks/extraction/submit/",
        {
            "model_name": "page reader",
            "weights": "open",
            "modality": "vision",
            "split": "validation",
            "mode": "page",
            "visibility": "public",
            "predictions": track_file(gold, gzipped=True),
        },
    )
    submission = Submission.objects.get(model_name="page reader")
    assert response.status_code == 302 and response["Location"] == submission.get_absolute_url()
    assert (submission.track, submission.mode, submission.status) == (
        "extraction",
        "page",
        "queued",
    )
    status = client.get(f"{submission.get_absolute_url()}?part=status", HTTP_HX_REQUEST="true")
    assert "Queued" in status.content.decode()
    services.submission_score(submission_id=submission.pk)
    done = client.get(f"{submission.get_absolute_url()}?part=status", HTTP_HX_REQUEST="true")
    assert done.headers.get("HX-Refresh") == "true"
    page = client.get(submission.get_absolute_url()).content.decode()
    assert "Detection" in page and "1.000" in page and "By table property" in page
    results = client.get(f"/leaderboard/submissions/{submission.pk}/results.json").json()
    assert len(results) == len(gold) and all(r["teds"] == 1.0 for r in results)


def test_a_bad_file_is_refused_on_the_page_with_nothing_stored(
    client: Client, built, researcher
) -> None:
    client.force_login(researcher)
    response = client.post(
        "/leaderboard/tracks/sql/submit/",
        {
            "model_name": "x",
            "weights": "open",
            "modality": "text",
            "split": "validation",
            "predictions": track_file({"not-an-item": "SELECT 1"}),
        },
    )
    assert response.status_code == 400
    assert "unknown" in response.content.decode()
    assert not Submission.objects.exists()


def test_the_per_item_download_hides_test_items_figures(client: Client, built, researcher) -> None:
    gold = gold_predictions("sql", "test")
    submission = submit_track(researcher, "sql", gold, split="test")
    client.force_login(researcher)
    rows = client.get(f"/leaderboard/submissions/{submission.pk}/results.json").json()
    assert rows and all(r["split"] == "test" for r in rows)
    assert all(r.get("execution_accuracy") is None and r["detail"] is None for r in rows)
    csv_text = client.get(f"/leaderboard/submissions/{submission.pk}/results.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("id,split,reason,message")
    other = Client()
    other.force_login(UserFactory(role="researcher"))
    assert other.get(f"/leaderboard/submissions/{submission.pk}/results.json").status_code == 404
    assert json.loads(json.dumps(rows))  # plain JSON


def test_an_admin_builds_the_items_from_the_page_and_follows_it(
    client: Client, synthetic_dataset, django_capture_on_commit_callbacks
) -> None:
    from tracks.models import ItemBuild
    from tracks.services.builds import item_build_run

    client.force_login(UserFactory(role="researcher"))
    assert client.post("/tracks/build/").status_code == 403
    assert client.get("/tracks/build/status/").status_code == 403
    client.force_login(UserFactory(role="admin"))
    assert "Build the items" in client.get("/tracks/").content.decode()
    with django_capture_on_commit_callbacks() as queued:
        assert client.post("/tracks/build/").status_code == 302
    build = ItemBuild.objects.get()
    assert len(queued) == 1 and build.status == "queued"
    status = client.get("/tracks/build/status/", HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 2s"' in status
    # A second one while the first is queued is refused, saying so.
    page = client.post("/tracks/build/", follow=True).content.decode()
    assert "being built already" in page
    item_build_run(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == "done" and build.counts["created"] > 0
    status = client.get("/tracks/build/status/", HTTP_HX_REQUEST="true").content.decode()
    assert "every 2s" not in status and "created" in status
