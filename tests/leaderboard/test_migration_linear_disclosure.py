"""The upgrades of the disclosure rule (issue 32: every linear combination, then empty
answers known): scores on test-split questions, kept under the rule before, are queued to be
scored again; train and validation scores, and the paper's rows, are left as they are."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("leaderboard", "0013_regression_left_out")]


def test_scores_on_test_questions_are_queued_to_be_scored_again() -> None:
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    Submission = old.get_model("leaderboard", "Submission")
    owner = User.objects.create(username="ada")
    common = {"modality": "text", "data_scope": "real", "status": "scored", "progress": 100}
    common |= {"weights": "closed", "table_format": "csv", "kind": "submission"}
    made = {
        split: Submission.objects.create(owner=owner, model_name=split, split=split, **common).pk
        for split in ("test", "all", "validation")
    }

    new = migrate(latest())
    Submission = new.get_model("leaderboard", "Submission")
    Rescore = new.get_model("leaderboard", "Rescore")
    (rescore,) = Rescore.objects.all()
    assert rescore.total == 2 and "not only pairs" in rescore.reason
    for split, pk in made.items():
        row = Submission.objects.get(pk=pk)
        if split == "validation":
            assert (row.status, row.stale, row.rescore_id) == ("scored", False, None)
        else:
            assert (row.status, row.stale, row.rescore_id) == ("queued", True, rescore.pk)


def test_scores_on_test_questions_are_queued_again_with_empty_answers_known() -> None:
    """The review's fix (an empty answer is known to score 0, not an unknown): scores on
    test-split questions kept before it are queued to be scored again."""
    old = migrate([("leaderboard", "0015_rescore_under_linear_disclosure")])
    User = old.get_model("auth", "User")
    Submission = old.get_model("leaderboard", "Submission")
    owner = User.objects.create(username="ada")
    common = {"modality": "text", "data_scope": "real", "status": "scored", "progress": 100}
    common |= {"weights": "closed", "table_format": "csv", "kind": "submission"}
    made = {
        split: Submission.objects.create(owner=owner, model_name=split, split=split, **common).pk
        for split in ("test", "all", "train")
    }

    new = migrate(latest())
    Submission = new.get_model("leaderboard", "Submission")
    Rescore = new.get_model("leaderboard", "Rescore")
    (rescore,) = Rescore.objects.all()
    assert rescore.total == 2 and "empty answer is known to score 0" in rescore.reason
    for split, pk in made.items():
        row = Submission.objects.get(pk=pk)
        if split == "train":
            assert (row.status, row.stale, row.rescore_id) == ("scored", False, None)
        else:
            assert (row.status, row.stale, row.rescore_id) == ("queued", True, rescore.pk)
