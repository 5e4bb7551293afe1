"""A file of 1,000 hostile SQL statements scored by the platform's scoring service (what the
worker runs): every statement accounted for with a result or the reason it scored 0, and the
same process scoring an honest file right after."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from dataset.services import release_import
from leaderboard.models import ItemResult, TrackScore
from tests.factories import UserFactory
from tests.hostile_sql import hostile_statements
from tests.tracks.helpers import gold_predictions, submit_track
from tracks.models import TrackItem
from tracks.services.items import items_build

pytestmark = pytest.mark.django_db


def test_a_thousand_hostile_statements_are_all_accounted_for(synthetic_tables: list) -> None:
    release_import(tables=synthetic_tables)
    items_build(tracks=["sql"])
    train = list(
        TrackItem.objects.filter(track="sql", split="train")
        .order_by("item_id")
        .values_list("item_id", flat=True)
    )
    assert len(train) >= 1000
    attacks = list(itertools.islice(itertools.cycle(hostile_statements()), 1000))
    predictions = {item_id: sql for item_id, (_kind, sql) in zip(train, attacks, strict=False)}
    researcher = UserFactory(role="researcher")
    hostile = submit_track(researcher, "sql", predictions, split="train", model_name="hostile")
    assert hostile.status == "scored", hostile.error
    results = ItemResult.objects.filter(submission=hostile, item__item_id__in=list(predictions))
    assert results.count() == 1000
    reasons = Counter(results.values_list("reason", flat=True))
    # Every statement ran to a result (it is wrong) or says why it scored 0.
    assert sum(reasons.values()) == 1000
    refused = {r for r in reasons if r}
    assert {"denied", "multiple_statements", "steps", "result_rows", "text"} <= refused
    assert "missing" not in refused and "budget" not in refused
    for result in results.exclude(reason=""):
        assert result.message and result.figures["execution_accuracy"] == 0.0
    # The same scoring process goes on serving: an honest file right after scores 1.
    honest = submit_track(
        researcher, "sql", gold_predictions("sql", "validation"), model_name="honest"
    )
    assert TrackScore.objects.get(submission=honest).figures["execution_accuracy"] == 1.0
