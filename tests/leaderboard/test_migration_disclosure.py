"""The upgrade to the disclosure rule (issue 23, item 3): figures kept before it may rest on
a single test answer, so every scored submission on test questions (split test or all) is
queued, together, to be scored again under it; the others are left alone."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("leaderboard", "0010_demo_scope_kept_uploads_question_set_tables")]


def test_scored_submissions_on_test_questions_are_queued_to_be_scored_again() -> None:
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    Submission = old.get_model("leaderboard", "Submission")
    Score = old.get_model("leaderboard", "Score")
    ada = User.objects.create(username="ada")
    common = {"kind": "submission", "owner": ada, "weights": "closed", "modality": "text",
              "table_format": "paper", "data_scope": "real", "status": "scored"}  # fmt: skip
    on_test = {
        split: Submission.objects.create(model_name=split, split=split, **common)
        for split in ("test", "all", "train")
    }
    # The replay's row: n = 1 under 2025-10, its recall the guess's own score.
    Score.objects.create(submission=on_test["test"], rules="2025-10", n_questions=1, recall=1.0)
    paper = Submission.objects.create(
        **{**common, "kind": "reported", "owner": None}, model_name="p", split="all"
    )

    new = migrate(latest())
    Submission = new.get_model("leaderboard", "Submission")
    Rescore = new.get_model("leaderboard", "Rescore")
    rescore = Rescore.objects.get()
    assert (rescore.total, rescore.status) == (2, "queued")
    assert "1 to 10" in rescore.reason
    for split in ("test", "all"):
        row = Submission.objects.get(pk=on_test[split].pk)
        assert (row.status, row.stale, row.rescore_id) == ("queued", True, rescore.pk)
    # Train scores hide nothing; the paper's rows are its figures.
    assert Submission.objects.get(pk=on_test["train"].pk).status == "scored"
    assert Submission.objects.get(pk=paper.pk).status == "scored"
    assert new.get_model("leaderboard", "Score").objects.get().withheld is False
