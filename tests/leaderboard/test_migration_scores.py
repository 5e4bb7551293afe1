"""The upgrade to scores per rules version: every figure so far was 2025-05's and becomes
that version's score; scored submissions are queued, together, to be scored again (for the
2025-10 figures and their question set), and until then are stale."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("leaderboard", "0008_daily_limit_entries_plural")]


def test_old_scores_become_2025_05_scores_and_scored_submissions_are_queued_again() -> None:
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    Submission = old.get_model("leaderboard", "Submission")
    ada = User.objects.create(username="ada")
    common = {"weights": "closed", "modality": "text", "table_format": "paper",
              "split": "test", "data_scope": "real"}  # fmt: skip
    scored = Submission.objects.create(
        kind="submission", owner=ada, model_name="m", status="scored", recall=0.4,
        precision=0.5, recall_pak=0.3, n_questions=858, coverage=1.0,
        by_source={"pak": {"recall": 0.3}}, breakdowns={"min_group": 10}, **common,
    )  # fmt: skip
    paper = Submission.objects.create(
        kind="reported", model_name="gpt-4o", status="scored", recall=0.35, split="all",
        **{k: v for k, v in common.items() if k != "split"},
    )  # fmt: skip
    failed = Submission.objects.create(
        kind="submission", owner=ada, model_name="f", status="failed", error="bad", **common
    )

    new = migrate(latest())
    Submission = new.get_model("leaderboard", "Submission")
    Score = new.get_model("leaderboard", "Score")
    Rescore = new.get_model("leaderboard", "Rescore")
    assert list(Score.objects.values_list("submission_id", "rules").order_by("submission_id")) == [
        (scored.pk, "2025-05"),
        (paper.pk, "2025-05"),
    ]
    score = Score.objects.get(submission_id=scored.pk)
    assert (score.recall, score.precision, score.recall_pak, score.n_questions) == (
        0.4,
        0.5,
        0.3,
        858,
    )
    assert score.by_source == {"pak": {"recall": 0.3}}
    rescore = Rescore.objects.get()
    assert (rescore.total, rescore.status, rescore.queued_at) == (1, "queued", None)
    upgraded = Submission.objects.get(pk=scored.pk)
    assert (upgraded.status, upgraded.stale, upgraded.rescore_id) == ("queued", True, rescore.pk)
    # The paper's row stays as it is; a failed one is left alone.
    assert Submission.objects.get(pk=paper.pk).status == "scored"
    assert Submission.objects.get(pk=failed.pk).rescore_id is None
