"""The platform's baselines on the boards: its extractor and pdfplumber on extraction items
(real and drawn), the unpivot on transformation items, scored by the worker's service and
marked on the board."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from leaderboard.models import ItemResult, Submission, TrackScore
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_baselines_score_on_validation_items(built, icdar_set) -> None:
    out = io.StringIO()
    call_command("score_baselines", "--split", "validation", "--limit", "8", stdout=out)
    printed = out.getvalue()
    rows = Submission.objects.filter(kind="baseline")
    assert rows.count() == 5  # two extractors in two modes, and the unpivot
    assert set(rows.values_list("status", flat=True)) == {"scored"}, printed
    scores = {(s.submission.model_name, s.submission.mode): s for s in TrackScore.objects.all()}
    unpivot = scores[("Unpivot of the headers", "")]
    # Four tables in validation, all under the limit, read exactly.
    assert unpivot.n <= 8 and unpivot.figures["row_f1"] == 1.0
    # The extractors were given the first eight items of a mode: those are scored, the rest
    # of the split is missing.
    platform = Submission.objects.get(model_name="Platform extractor", mode="region")
    given = ItemResult.objects.filter(submission=platform).exclude(reason="missing")
    assert given.count() == 8
    assert sum(r.figures["teds"] for r in given) / 8 > 0.9
    assert scores[("Platform extractor", "region")].reasons["missing"] > 0
    # pdfplumber reads no image: the PNG items it was given have no prediction.
    plumber = Submission.objects.get(model_name="pdfplumber extract_tables", mode="region")
    png = ItemResult.objects.filter(submission=plumber, item__inputs__kind="png")
    assert png.exists() and set(png.values_list("reason", flat=True)) == {"missing"}
    assert "Platform extractor: scored" in printed


def test_baselines_are_marked_on_the_board_and_replaced_when_run_again(built) -> None:
    call_command("score_baselines", "--track", "transformation", stdout=io.StringIO())
    first = Submission.objects.get(kind="baseline")
    assert (first.split, first.owner) == ("test", None)
    page = Client().get("/leaderboard/tracks/transformation/").content.decode()
    assert "Unpivot of the headers" in page and "badge baseline" in page
    call_command("score_baselines", "--track", "transformation", stdout=io.StringIO())
    again = Submission.objects.get(kind="baseline")
    assert again.pk != first.pk and again.status == "scored"


def test_a_build_makes_the_baselines_again_on_the_new_test_items(
    synthetic_dataset, django_capture_on_commit_callbacks
) -> None:
    """The boards' baselines follow the items: a build (the admins' button, the demo's start)
    ends by making them again on the test items it built, queued for the scoring worker,
    and says so; its progress bar never reads 100% before it is done."""
    from tracks.models import ItemBuild
    from tracks.services.builds import item_build_run, item_build_start

    build = item_build_start(user=None, enqueue=False)
    seen: list[tuple[int, str]] = []
    with django_capture_on_commit_callbacks() as queued:
        item_build_run(
            build_id=build.pk,
            tracks=["transformation"],
            report=lambda percent, stage: seen.append((percent, stage)),
        )
    build = ItemBuild.objects.get(pk=build.pk)
    rows = Submission.objects.filter(kind="baseline")
    assert build.status == "done" and build.counts["baselines"] == rows.count() == 1
    row = rows.get()
    assert (row.model_name, row.track, row.split, row.status) == (
        "Unpivot of the headers",
        "transformation",
        "test",
        "queued",
    )
    assert queued  # the scoring worker is told once the build's writes are committed
    stages = [stage for _, stage in seen]
    assert any(stage.startswith("baselines: Unpivot of the headers") for stage in stages)
    assert all(percent < 100 for percent, _ in seen)
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)
    admin = Client()
    admin.force_login(UserFactory(role="admin"))
    page = admin.get("/tracks/build/status/", HTTP_HX_REQUEST="true").content.decode()
    assert "baselines made again on the test items (1 board row" in page
