from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from hctqa.core.disclosure import DISCLOSURE_MARGIN
from hctqa.core.scoring import evaluate
from hctqa.core.snapshots import question_set_sha256
from leaderboard import services
from leaderboard.models import (
    DailyLimitEntry,
    PropertyRegression,
    QuestionResult,
    Score,
    Status,
    Submission,
)
from plumbing.errors import ApplicationError
from tests.factories import QuestionFactory, TableFactory, UserFactory
from tests.leaderboard.conftest import answers, submit, upload

pytestmark = pytest.mark.django_db


def test_scoring_stores_every_question_and_the_reference_scores(public_dataset, researcher) -> None:
    submission = submit(researcher, public_dataset, right=6)
    assert services.submission_score(submission_id=submission.pk) == "scored"
    submission.refresh_from_db()
    assert submission.status == Status.SCORED and submission.progress == 100
    for rules in ("2025-05", "2025-10"):
        expected = evaluate(public_dataset, answers(public_dataset, right=6), "text", rules=rules)
        score = Score.objects.get(submission=submission, rules=rules)
        assert score.recall == pytest.approx(expected.overall.recall) == 0.5
        assert (score.recall_low, score.recall_high) == pytest.approx(
            (expected.overall.ci["recall"].low, expected.overall.ci["recall"].high)
        )
        assert score.recall_pak == expected.by_source["pak"].recall
    assert QuestionResult.objects.filter(submission=submission).count() == 12
    assert QuestionResult.objects.filter(submission=submission, cc=True).count() == 6
    assert QuestionResult.objects.filter(submission=submission, cc_2025_10=True).count() == 6
    # The question set it was scored on: the sorted ids and their gold answers.
    assert submission.question_set_sha256 == question_set_sha256(public_dataset)


def test_both_versions_are_scored_in_one_pass_and_no_answer_counts_only_under_2025_05(
    public_dataset, researcher
) -> None:
    predictions = answers(public_dataset)
    predictions["psa--1--1--M0"] = "Answer: psa--1--1-answer-0"
    predictions["arxiv--1--1--M0"] = "No answer found"
    submission = submit(researcher, public_dataset, predictions=predictions)
    services.submission_score(submission_id=submission.pk)
    old = Score.objects.get(submission=submission, rules="2025-05")
    new = Score.objects.get(submission=submission, rules="2025-10")
    assert (old.n_questions, old.excluded, old.recall) == (12, 0, pytest.approx(10 / 12))
    assert (new.n_questions, new.excluded, new.recall) == (11, 1, 1.0)
    left_out = QuestionResult.objects.get(submission=submission, question_id="arxiv--1--1--M0")
    assert left_out.counted_2025_10 is False and left_out.recall_2025_10 is None
    assert left_out.recall == 0.0


def test_unanswered_train_questions_count_as_empty_and_coverage_is_kept(
    dataset, researcher
) -> None:
    gold = {q: a for q, a in dataset.items() if not q.startswith("pak")}  # pak: the test table
    submission = submit(
        researcher,
        dict(list(gold.items())[:4]) | {q: a for q, a in dataset.items() if q.startswith("pak")},
    )
    services.submission_score(submission_id=submission.pk)
    score = Score.objects.get(submission=submission, rules="2025-05")
    assert score.coverage == pytest.approx(7 / 12)
    assert QuestionResult.objects.filter(submission=submission, answered=False).count() == 5


def test_scoring_twice_does_the_work_once(dataset, researcher) -> None:
    submission = submit(researcher, dataset)
    assert services.submission_score(submission_id=submission.pk) == "scored"
    assert services.submission_score(submission_id=submission.pk) == "not queued"
    assert QuestionResult.objects.filter(submission=submission).count() == 12


def test_a_file_that_stopped_being_valid_fails_with_a_reason(dataset, researcher) -> None:
    submission = submit(researcher, dataset)
    submission.predictions.storage.delete(submission.predictions.name)
    assert services.submission_score(submission_id=submission.pk).startswith("failed")
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert submission.error == "The predictions file is missing"
    assert not QuestionResult.objects.filter(submission=submission).exists()


def test_breakdowns_by_table_property_query_property_and_template(researcher) -> None:
    gold = {}
    nested = TableFactory(id="psa--2--1")
    flat = TableFactory(id="psa--2--2", table_properties={"standard_relational_table": True})
    for table in (nested, flat):
        for k in range(12):
            q = QuestionFactory(
                table=table,
                id=f"{table.id}--M{k}",
                gold_answer="{x}",
                query_properties={"aggregation": True} if k % 2 else {"rank": True},
            )
            gold[q.id] = q.gold_answer
    predictions = {qid: ("x" if qid.startswith("psa--2--2") else "y") for qid in gold}
    data = services.SubmissionInput(
        model_name="m",
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split="train",
        data_scope="real",
    )
    submission = services.submission_create(
        owner=researcher, data=data, predictions=upload(predictions)
    )
    services.submission_score(submission_id=submission.pk)
    breakdowns = Score.objects.get(submission=submission, rules="2025-05").breakdowns
    by_table = {row["key"]: row for row in breakdowns["table_properties"]}
    assert by_table["multi_level_column"] == {
        "key": "multi_level_column",
        "label": "Multi-level columns",
        "recall": 0.0,
        "n": 12,
        "withheld": False,
    }
    assert by_table["standard_relational_table"]["recall"] == 1.0
    by_query = {row["key"]: row["n"] for row in breakdowns["query_properties"]}
    assert by_query == {"aggregation": 12, "rank": 12}


def test_small_groups_are_withheld_from_the_public_when_test_questions_are_included(
    dataset, researcher
) -> None:
    submission = submit(researcher, dataset, split="test")
    services.submission_score(submission_id=submission.pk)
    breakdowns = Score.objects.get(submission=submission, rules="2025-05").breakdowns
    # Three test questions: every group is within the margin of the empty one, so all are
    # kept for the owner and withheld from the public.
    assert breakdowns["table_properties"]
    assert all(row["withheld"] for row in breakdowns["table_properties"])
    assert breakdowns["margin"] == DISCLOSURE_MARGIN


def test_owners_rescore_and_delete_others_cannot(dataset, researcher) -> None:
    submission = submit(researcher, dataset)
    services.submission_score(submission_id=submission.pk)
    stranger = UserFactory(role="researcher")
    with pytest.raises(PermissionDenied):
        services.submission_rescore(submission=submission, user=stranger)
    with pytest.raises(PermissionDenied):
        services.submission_delete(submission=submission, user=stranger)
    services.submission_rescore(submission=submission, user=researcher)
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED
    with pytest.raises(ApplicationError, match="already waiting"):
        services.submission_rescore(submission=submission, user=researcher)
    assert services.submission_score(submission_id=submission.pk) == "scored"
    assert QuestionResult.objects.filter(submission=submission).count() == 12
    services.submission_delete(submission=submission, user=UserFactory(role="admin"))
    assert not Submission.objects.exists() and not QuestionResult.objects.exists()
    assert DailyLimitEntry.objects.count() == 1  # still counted for today


def test_the_sweeper_requeues_stuck_submissions_and_fails_hopeless_ones(
    dataset, researcher, settings, django_capture_on_commit_callbacks
) -> None:
    settings.SUBMISSION_STUCK_AFTER_SECONDS = 600
    settings.SUBMISSION_MAX_ATTEMPTS = 3
    long_ago = timezone.now() - timedelta(minutes=30)
    stuck_scoring = submit(researcher, dataset)
    Submission.objects.filter(pk=stuck_scoring.pk).update(
        status=Status.SCORING, started_at=long_ago, attempts=1
    )
    stuck_queued = submit(researcher, dataset, split="train")
    Submission.objects.filter(pk=stuck_queued.pk).update(queued_at=long_ago)
    hopeless = submit(researcher, dataset, split="train")
    Submission.objects.filter(pk=hopeless.pk).update(
        status=Status.SCORING, started_at=long_ago, attempts=3
    )
    fresh = submit(researcher, dataset, split="train")
    Submission.objects.filter(pk=fresh.pk).update(
        status=Status.SCORING, started_at=timezone.now(), attempts=1
    )

    with django_capture_on_commit_callbacks() as queued:
        result = services.submission_sweep()
    assert sorted(result.requeued) == sorted([stuck_scoring.pk, stuck_queued.pk])
    assert result.failed == [hopeless.pk]
    assert len(queued) == 2
    states = dict(Submission.objects.values_list("pk", "status"))
    assert states[stuck_scoring.pk] == states[stuck_queued.pk] == Status.QUEUED
    assert states[fresh.pk] == Status.SCORING
    hopeless.refresh_from_db()
    assert hopeless.error == "Scoring did not finish after 3 attempts; score it again to try again"
    # Scoring counted the stuck one's attempt when it claimed it; a lost queue message is an
    # attempt of its own. Neither is counted twice.
    attempts = dict(Submission.objects.values_list("pk", "attempts"))
    assert (attempts[stuck_scoring.pk], attempts[stuck_queued.pk]) == (1, 1)
    # A requeued submission then scores normally.
    assert services.submission_score(submission_id=stuck_scoring.pk) == "scored"
    assert Submission.objects.get(pk=stuck_scoring.pk).attempts == 2


def test_the_regression_is_kept_current(researcher) -> None:
    gold = {}
    for i in range(40):
        props = {"row_group_label": i % 2 == 0, "split_header_cell": i % 3 == 0}
        table = TableFactory(id=f"psa--3--{i}", table_properties=props)
        q = QuestionFactory(table=table, id=f"{table.id}--M0", gold_answer=f"{{x{i}}}")
        gold[q.id] = f"{{x{i}}}"
    # Row-group-label tables answered wrongly: a strong negative effect.
    number = {qid: int(qid.split("--")[2]) for qid in gold}
    predictions = {qid: f"{'y' if n % 2 == 0 else 'x'}{n}" for qid, n in number.items()}
    data = services.SubmissionInput(
        model_name="m",
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split="all",
        data_scope="real",
    )
    submission = services.submission_create(
        owner=researcher, data=data, predictions=upload(predictions)
    )
    services.submission_score(submission_id=submission.pk)
    regression = services.property_regression_refresh()
    coefs = {c["code"]: c for c in regression.coefficients}
    assert coefs["row_group_label"]["coef"] == pytest.approx(-1.0)
    assert regression.submissions == 1 and regression.tables == 40
    services.submission_delete(submission=submission, user=researcher)
    assert services.property_regression_refresh() is None
    assert not PropertyRegression.objects.exists()
