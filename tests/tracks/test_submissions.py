"""Submissions to the tracks through the QA board's lifecycle: the validation gold scores
exactly 1 on every figure of every track end to end, a tenth dropped scores the hand
computation, and what a file must hold on the test split."""

from __future__ import annotations

import pytest

from leaderboard.models import ItemResult, TrackScore
from plumbing.errors import ApplicationError
from tests.factories import UserFactory
from tests.tracks.helpers import gold_predictions, submit_track
from tracks.registry import track

pytestmark = pytest.mark.django_db

CASES = [("extraction", "region"), ("extraction", "page"), ("transformation", ""), ("sql", "")]


@pytest.fixture
def researcher():
    return UserFactory(role="researcher")


@pytest.mark.parametrize(("track_slug", "mode"), CASES)
def test_the_validation_gold_scores_exactly_1_on_every_figure(
    built, icdar_set, researcher, track_slug: str, mode: str
) -> None:
    gold = gold_predictions(track_slug, "validation", mode)
    submission = submit_track(researcher, track_slug, gold, mode=mode)
    assert submission.status == "scored", submission.error
    score = TrackScore.objects.get(submission=submission)
    info = track(track_slug)
    names = [f.name for f in info.figures(mode)]
    assert set(score.figures) == set(names)
    for figure in info.figures(mode):
        perfect = 1.0 if figure.higher_is_better else 0.0
        assert score.figures[figure.name] == perfect, figure.name
        assert score.intervals[figure.name] == [perfect, perfect]
        for source in score.by_source:
            assert source["figures"][figure.name] == perfect
    assert score.n == len(gold) and score.reasons == {}
    assert ItemResult.objects.filter(submission=submission).count() == len(gold)
    if track_slug == "extraction":
        assert {s["key"] for s in score.by_source} == {"synthetic", "icdar-eu"}
    # The synthetic tables' properties give per-property figures.
    assert score.breakdowns["table_properties"]
    assert score.breakdowns["margin"] == 0  # no hidden item


def test_dropping_a_tenth_scores_the_hand_computation(built, researcher) -> None:
    for track_slug in ("transformation", "sql"):
        gold = gold_predictions(track_slug, "validation")
        kept = {k: v for n, (k, v) in enumerate(sorted(gold.items())) if n % 10 != 0}
        submission = submit_track(researcher, track_slug, kept)
        figures = TrackScore.objects.get(submission=submission).figures
        share = len(kept) / len(gold)
        assert figures == pytest.approx(dict.fromkeys(figures, share), abs=1e-6), track_slug
        missing = ItemResult.objects.filter(submission=submission, reason="missing")
        assert missing.count() == len(gold) - len(kept)
    gold = gold_predictions("extraction", "validation", "region")
    kept = {k: v for n, (k, v) in enumerate(sorted(gold.items())) if n % 10 != 0}
    submission = submit_track(researcher, "extraction", kept, mode="region")
    figures = TrackScore.objects.get(submission=submission).figures
    share = len(kept) / len(gold)  # one true table per region item
    for name in ("teds", "teds_struct", "exact"):
        assert figures[name] == pytest.approx(share, abs=1e-6)
    relations = {
        r.item.item_id: r.detail["relations"]["true"]
        for r in ItemResult.objects.filter(submission=submission).select_related("item")
    }
    recall = sum(relations[k] for k in kept) / sum(relations.values())
    assert figures["adj_f1"] == pytest.approx(2 * recall / (1 + recall), abs=1e-6)


def test_a_test_split_file_must_name_every_item_and_predict_half(built, researcher) -> None:
    gold_like = dict.fromkeys(gold_predictions("sql", "test"), "SELECT 1")
    some = dict(list(gold_like.items())[:3])
    with pytest.raises(ApplicationError, match="does not name"):
        submit_track(researcher, "sql", some, split="test")
    nulls = dict.fromkeys(gold_like, None) | dict(list(gold_like.items())[:2])
    with pytest.raises(ApplicationError, match="gives null for"):
        submit_track(researcher, "sql", nulls, split="test")
    submission = submit_track(researcher, "sql", gold_like, split="test")
    assert submission.status == "scored"


def test_a_file_of_another_split_or_mode_is_refused_saying_where_its_ids_are(
    built, researcher
) -> None:
    page = gold_predictions("extraction", "validation", "page")
    with pytest.raises(ApplicationError, match=r"in the validation split \(whole page\)"):
        submit_track(researcher, "extraction", page, mode="region")
    with pytest.raises(ApplicationError, match="unknown"):
        submit_track(researcher, "sql", {"no-such-item": "SELECT 1"})
    with pytest.raises(ApplicationError, match="modes are region, page"):
        submit_track(researcher, "extraction", page, mode="sideways")


def test_submitting_by_command_for_a_researcher(built, researcher, tmp_path) -> None:
    import io
    import json

    from django.core.management import CommandError, call_command

    gold = gold_predictions("transformation", "validation")
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(json.dumps({"id": k, "prediction": v}) for k, v in gold.items()))
    args = ["--user", researcher.username, "--track", "transformation", "--split", "validation"]
    args += ["--model-name", "from the command line", "--weights", "open"]
    out = io.StringIO()
    call_command("submit_predictions", str(path), *args, "--wait", stdout=out)
    assert "row_f1 1.000" in out.getvalue()
    path.write_text('{"id": "nothing-of-the-track", "prediction": "a,b"}')
    with pytest.raises(CommandError, match="(?s)Nothing was submitted.*unknown"):
        call_command("submit_predictions", str(path), *args, stdout=io.StringIO())
    with pytest.raises(CommandError, match="no user"):
        call_command(
            "submit_predictions", str(path), *args[:1], "nobody", *args[2:], stdout=io.StringIO()
        )
