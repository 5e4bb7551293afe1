"""Gold-pool questions are not part of the benchmark: never scored, never named by an
upload, never exported as prompts, and gone from per-question views; joining or leaving the
pool has the affected submissions scored again, so every score covers the same questions."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import call_command

from annotation.models import QuestionAuthoring
from annotation.services import gold_pool_add, gold_pool_remove
from dataset.models import Question
from dataset.selectors import one_shot_example_ids
from leaderboard import selectors, services
from leaderboard.models import Kind, QuestionResult, Rescore, Status, Submission
from plumbing.errors import ApplicationError
from tests.factories import SubmissionFactory, UserFactory
from tests.leaderboard.conftest import answers, upload

pytestmark = pytest.mark.django_db

POOL_Q = "psa--1--1--M0"  # on a training table


def submit(owner, predictions: dict[str, str], split: str = "all") -> Submission:
    data = services.SubmissionInput(
        model_name=f"m-{split}",
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split=split,
        data_scope="real",
    )
    return services.submission_create(owner=owner, data=data, predictions=upload(predictions))


def scored(owner, predictions: dict[str, str], split: str = "all") -> Submission:
    submission = submit(owner, predictions, split)
    assert services.submission_score(submission_id=submission.pk) == "scored"
    submission.refresh_from_db()
    return submission


def to_pool(question_id: str = POOL_Q) -> None:
    Question.objects.filter(pk=question_id).update(in_gold_pool=True)


def test_pool_questions_are_not_scored(dataset, researcher) -> None:
    to_pool()
    without = {q: a for q, a in answers(dataset).items() if q != POOL_Q}
    submission = scored(researcher, without)
    score = submission.score_for()
    assert score.n_questions == len(dataset) - 1 and score.coverage == 1
    assert POOL_Q not in selectors.gold_answers(split="train", data_scope="real")


def test_an_upload_naming_a_pool_question_is_refused_like_an_unknown_id(
    dataset, researcher
) -> None:
    to_pool()
    with pytest.raises(ApplicationError) as pooled:
        submit(researcher, answers(dataset))
    without = {q: a for q, a in answers(dataset).items() if q != POOL_Q}
    with pytest.raises(ApplicationError) as unknown:
        submit(researcher, {**without, "psa--1--1--M9": "x"})
    # The same message for both: an upload cannot tell a pool id from one that never existed.
    assert "unknown" in pooled.value.message and POOL_Q in pooled.value.message
    assert unknown.value.message == pooled.value.message.replace(POOL_Q, "psa--1--1--M9")
    assert not Submission.objects.exists()


def test_results_scored_before_a_question_joined_the_pool_are_hidden(
    dataset, researcher, client
) -> None:
    submission = scored(researcher, answers(dataset, right=0))
    to_pool()
    # Still stored until it is scored again, but shown nowhere, to anyone.
    assert QuestionResult.objects.filter(submission=submission, question_id=POOL_Q).exists()
    for user in (researcher, UserFactory(role="admin")):
        client.force_login(user)
        for url in (
            f"/leaderboard/submissions/{submission.pk}/",
            f"/leaderboard/submissions/{submission.pk}/results.json",
            f"/leaderboard/submissions/{submission.pk}/results.csv",
            f"/api/submissions/{submission.pk}/results/",
        ):
            body = client.get(url)
            text = b"".join(body.streaming_content) if body.streaming else body.content
            assert body.status_code == 200 and POOL_Q.encode() not in text, url
    # Scored again from the stored file, the pool question is simply left out.
    services.submission_rescore(submission=submission, user=researcher)
    assert services.submission_score(submission_id=submission.pk) == "scored"
    assert not QuestionResult.objects.filter(submission=submission, question_id=POOL_Q).exists()


def test_joining_and_leaving_the_pool_scores_the_affected_submissions_again(
    dataset, researcher, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    sent: list[int] = []
    monkeypatch.setattr("leaderboard.tasks.rescore_submissions.delay", sent.append)
    every = answers(dataset)
    covering = [scored(researcher, every), scored(researcher, _split(every, "train"), "train")]
    others = [
        scored(researcher, _split(every, "test"), "test"),
        scored(researcher, _split(every, "validation"), "validation"),
    ]
    reported = SubmissionFactory(
        kind=Kind.REPORTED, owner=None, model_name="paper", weights="closed",
        parameters_billions=None, recall=0.3,
    )  # fmt: skip
    counted = {s.pk: s.score_for().n_questions for s in covering}
    QuestionAuthoring.objects.create(
        question_id=POOL_Q, annotator=UserFactory(role="annotator"), client_key=uuid.uuid4()
    )
    admin = UserFactory(role="admin")
    with django_capture_on_commit_callbacks(execute=True):
        gold_pool_add(admin=admin, question_ids=[POOL_Q])
    # One re-scoring, of the submissions whose question set held the question.
    rescore = Rescore.objects.get()
    assert sent == [rescore.pk] and rescore.total == len(covering)
    assert "1 question joined the gold pool" in rescore.reason
    for submission in covering:
        current = Submission.objects.get(pk=submission.pk)
        assert current.status == Status.QUEUED and current.stale
    for untouched in [*others, reported]:
        current = Submission.objects.get(pk=untouched.pk)
        assert current.status == Status.SCORED and not current.stale
    assert services.rescore_run(rescore_id=rescore.pk) == "2 scored; done"
    for submission in covering:
        again = Submission.objects.get(pk=submission.pk)
        assert again.status == Status.SCORED and not again.stale
        assert again.score_for().n_questions == counted[submission.pk] - 1
    # Out of the pool again: the same submissions count it once more.
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        gold_pool_remove(admin=admin, question_ids=[POOL_Q])
    latest = Rescore.objects.order_by("-pk").first()
    assert sent == [latest.pk]
    assert set(latest.submissions.values_list("pk", flat=True)) == {s.pk for s in covering}


def _split(predictions: dict[str, str], split: str) -> dict[str, str]:
    ids = set(
        Question.objects.filter(pk__in=predictions, table__split=split).values_list("pk", flat=True)
    )
    return {q: a for q, a in predictions.items() if q in ids}


def test_prompt_exports_and_worked_examples_leave_the_pool_out(dataset, tmp_path) -> None:
    to_pool()
    out = tmp_path / "prompts.jsonl"
    call_command("export_prompts", "--format", "csv", "--out", str(out))
    exported = [json.loads(line)["qa_id"] for line in out.read_text().splitlines()]
    assert len(exported) == len(dataset) - 1 and POOL_Q not in exported
    # Worked examples are sent to model providers: never a pool question either.
    Question.objects.filter(table_id="psa--1--1").exclude(pk=POOL_Q).delete()
    assert POOL_Q not in one_shot_example_ids(data_scope="real")
