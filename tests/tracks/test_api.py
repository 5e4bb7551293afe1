"""The tracks through the API: what each track is, submitting a file with a token, the
board, a submission's figures and its per-item results."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard import services
from leaderboard.models import Submission
from tests.factories import UserFactory
from tests.tracks.helpers import gold_predictions, track_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    user = UserFactory(role="researcher")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_the_tracks_list_says_each_track_s_figures_items_and_board(built) -> None:
    tracks = {t["slug"]: t for t in APIClient().get("/api/tracks/").json()}
    assert list(tracks) == ["qa", "extraction", "transformation", "sql"]
    extraction = tracks["extraction"]
    assert [m["mode"] for m in extraction["modes"]] == ["region", "page"]
    page_figures = {f["name"] for f in extraction["modes"][1]["figures"]}
    assert {"teds", "teds_struct", "adj_f1", "exact", "detection_recall"} <= page_figures
    assert extraction["items"]["region"]["validation"] > 0
    assert tracks["sql"]["board"].endswith("/api/tracks/sql/board/")
    assert "synthetic" in tracks["transformation"]["sources"]


def test_submit_by_api_then_read_figures_board_and_results(api: APIClient, built) -> None:
    gold = gold_predictions("sql", "test")
    response = api.post(
        "/api/submissions/create/",
        {
            "track": "sql",
            "model_name": "sql by api",
            "weights": "closed",
            "modality": "text",
            "split": "test",
            "predictions": track_file(gold),
        },
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["track"], body["mode"], body["status"]) == ("sql", "", "queued")
    assert body["track_score"] is None
    services.submission_score(submission_id=body["id"])
    detail = api.get(f"/api/submissions/{body['id']}/").json()
    assert detail["track_score"]["figures"] == {"execution_accuracy": 1.0, "recall": 1.0}
    assert detail["track_score"]["intervals"]["execution_accuracy"] == [1.0, 1.0]
    board = APIClient().get("/api/tracks/sql/board/?sort=-execution_accuracy").json()
    assert board["count"] == 1 and board["results"][0]["model_name"] == "sql by api"
    assert board["results"][0]["rank"] == 1
    results = api.get(f"/api/submissions/{body['id']}/item-results/").json()
    assert results["count"] == len(gold)
    assert all(r["figures"] is None for r in results["results"])  # test items: hidden
    assert api.get(f"/api/submissions/{body['id']}/results/").status_code == 404


def test_bad_track_requests_are_refused_with_every_problem(api: APIClient, built) -> None:
    response = api.post(
        "/api/submissions/create/",
        {"track": "chess", "model_name": "x", "predictions": track_file({})},
        format="multipart",
    )
    assert response.status_code == 400 and "track" in response.json()
    response = api.post(
        "/api/submissions/create/",
        {
            "track": "extraction",
            "mode": "sideways",
            "model_name": "",
            "weights": "open",
            "modality": "text",
            "split": "all",
            "predictions": track_file({"x": None}),
        },
        format="multipart",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {"mode", "model_name", "split"} <= set(errors)
    assert not Submission.objects.exists()
    assert APIClient().get("/api/tracks/chess/board/").status_code == 404
    assert APIClient().get("/api/tracks/sql/board/?sort=teds").status_code == 400
