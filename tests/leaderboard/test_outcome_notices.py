"""Researchers are told when a submission or an inference run is scored or fails: in the menu
always, by email when they opted in; a re-scoring of many tells no one; an email shows no
figure resting on fewer than DISCLOSURE_MARGIN questions. The submit page says how many
test-split submissions are left today."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import Account, Notification, OutgoingEmail
from leaderboard import services
from leaderboard.models import DailyLimitEntry, InferenceRun, RunStatus, Status, Submission
from leaderboard.services.inference import inference_run_execute, inference_run_sweep
from leaderboard.services.scoring import claim, score_claimed
from tests.factories import QuestionFactory, TableFactory, UserFactory
from tests.leaderboard.conftest import submit
from tests.leaderboard.inference_helpers import make_questions, quick_inference, start

pytestmark = pytest.mark.django_db


def _submit(owner, gold, **fields) -> Submission:
    return submit(owner, gold, **{"model_name": "TableLlama-7B", **fields})


def _opt_in(user) -> None:
    Account.objects.filter(user=user).update(email_on_scoring=True)


@pytest.fixture
def big_dataset(db) -> dict[str, str]:
    """Twelve questions on the test split: enough for the overall figure to be told."""
    table = TableFactory(id="pak--1--1", source="pak", split="test")
    return {
        q.id: q.gold_answer
        for q in (
            QuestionFactory(table=table, id=f"pak--1--1--M{k}", gold_answer=f"{{a{k}}}")
            for k in range(12)
        )
    }


def test_a_scored_submission_is_told_in_the_menu_and_by_email_when_asked(
    big_dataset, researcher
) -> None:
    _opt_in(researcher)
    submission = _submit(researcher, big_dataset, split="test")
    assert services.submission_score(submission_id=submission.pk) == "scored"
    told = Notification.objects.get(recipient=researcher)
    assert told.text == (
        f"Your submission {submission.pk}, “TableLlama-7B” (Test split), is scored: recall "
        "100.0% on 12 questions (2025-05 rules)"
    )
    assert told.url == f"/leaderboard/submissions/{submission.pk}/"
    email = OutgoingEmail.objects.get()
    assert email.to_address == "ada@example.org" and email.subject.startswith("[HCT-QA] Your")
    assert f"http://localhost:8000/leaderboard/submissions/{submission.pk}/" in email.body
    # Scoring again (the owner's button) tells again; nothing else does.
    services.submission_rescore(user=researcher, submission=submission)
    services.submission_score(submission_id=submission.pk)
    assert Notification.objects.filter(recipient=researcher).count() == 2


def test_no_scoring_email_to_an_unconfirmed_address(dataset) -> None:
    """The mail relay of the review: an account with someone else's address opts in and
    names its model with spam; scoring tells the menu, and mails nobody."""
    spam = "Cheap pills at https://evil.example/buy " * 5
    stranger = UserFactory(
        username="x", role="researcher", email="victim@example.org", email_confirmed=False
    )
    _opt_in(stranger)
    submission = _submit(stranger, dataset, split="validation", model_name=spam[:200].strip())
    assert services.submission_score(submission_id=submission.pk) == "scored"
    assert Notification.objects.filter(recipient=stranger).count() == 1
    assert not OutgoingEmail.objects.exists()


def test_without_opting_in_the_menu_only(dataset, researcher) -> None:
    submission = _submit(researcher, dataset)
    services.submission_score(submission_id=submission.pk)
    assert Notification.objects.filter(recipient=researcher).count() == 1
    assert not OutgoingEmail.objects.exists()


def test_no_figure_resting_on_fewer_than_ten_test_questions(researcher) -> None:
    _opt_in(researcher)
    table = TableFactory(id="pak--2--1", source="pak", split="test")
    gold = {QuestionFactory(table=table, id=f"pak--2--1--M{k}").id: f"{{g{k}}}" for k in range(3)}
    from dataset.models import Question

    for qid, answer in gold.items():
        Question.objects.filter(pk=qid).update(gold_answer=answer)
    submission = _submit(researcher, gold, split="test")
    services.submission_score(submission_id=submission.pk)
    text = Notification.objects.get(recipient=researcher).text
    assert text.endswith("is scored") and "recall" not in text and "%" not in text
    body = OutgoingEmail.objects.get().body
    assert "recall" not in body and "%" not in body


def test_a_failed_scoring_is_told_with_its_reason(dataset, researcher) -> None:
    _opt_in(researcher)
    submission = _submit(researcher, dataset)
    submission.predictions.storage.delete(submission.predictions.name)
    services.submission_score(submission_id=submission.pk)
    assert Submission.objects.get(pk=submission.pk).status == Status.FAILED
    told = Notification.objects.get(recipient=researcher)
    assert told.text.endswith("failed: The predictions file is missing")
    assert OutgoingEmail.objects.count() == 1


def test_a_re_scoring_of_many_tells_no_one(dataset, researcher) -> None:
    submission = _submit(researcher, dataset)
    services.submission_score(submission_id=submission.pk)
    Notification.objects.all().delete()
    Submission.objects.filter(pk=submission.pk).update(status=Status.QUEUED)
    attempt = claim(submission.pk)
    score_claimed(submission.pk, attempt, services.ScoringContext(), in_batch=True)
    assert Submission.objects.get(pk=submission.pk).status == Status.SCORED
    assert not Notification.objects.exists()


def test_the_sweeper_tells_of_a_submission_it_gives_up_on(dataset, researcher, settings) -> None:
    submission = _submit(researcher, dataset)
    long_ago = timezone.now() - timedelta(hours=2)
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.SCORING, heartbeat_at=long_ago, attempts=settings.SUBMISSION_MAX_ATTEMPTS
    )
    assert services.submission_sweep().failed == [submission.pk]
    assert "failed: Scoring did not finish after 3 attempts" in (
        Notification.objects.get(recipient=researcher).text
    )


def test_a_failed_inference_run_is_told_once(researcher, settings, monkeypatch) -> None:
    quick_inference(settings, monkeypatch)
    _opt_in(researcher)
    make_questions(1)
    run = start(researcher, "http://127.0.0.1:9/v1")  # nothing listens: the run fails
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    told = Notification.objects.get(recipient=researcher)
    assert told.text.startswith(f"Your inference run {run.pk}, “fake-7b”, failed: No answer")
    assert told.url == f"/leaderboard/inference/{run.pk}/"
    assert OutgoingEmail.objects.count() == 1
    # The sweeper failing a run whose worker died tells too.
    other = start(researcher, "http://127.0.0.1:9/v1")
    InferenceRun.objects.filter(pk=other.pk).update(
        status=RunStatus.RUNNING,
        heartbeat_at=timezone.now() - timedelta(hours=1),
        attempts=settings.INFERENCE_MAX_AUTO_RESUMES,
    )
    assert inference_run_sweep().failed == [other.pk]
    assert Notification.objects.filter(recipient=researcher).count() == 2


def test_the_submit_page_says_how_many_test_submissions_are_left_today(
    client: Client, researcher, settings
) -> None:
    settings.SUBMISSION_DAILY_TEST_LIMIT = 5
    for _ in range(2):
        DailyLimitEntry.objects.create(user=researcher)
    yesterday = DailyLimitEntry.objects.create(user=researcher)
    DailyLimitEntry.objects.filter(pk=yesterday.pk).update(
        created_at=timezone.now() - timedelta(days=1)
    )
    client.force_login(researcher)
    page = client.get("/leaderboard/submit/").text
    assert "<strong>3 of 5</strong> test submissions left today" in page
    for _ in range(3):
        DailyLimitEntry.objects.create(user=researcher)
    page = client.get("/leaderboard/submit/").text
    assert "<strong>0 of 5</strong> test submissions left today" in page
    assert "open again at 00:00 UTC" in page


def test_an_unapproved_researcher_is_pointed_to_the_approval_button(client: Client) -> None:
    client.force_login(UserFactory(role="researcher", test_split_approved=False))
    page = client.get("/leaderboard/submit/").text
    assert "test submissions left today" not in page
    assert 'href="/accounts/#approval-form">ask for it on your account page' in page
