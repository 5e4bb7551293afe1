"""Attacks and faults on uploads and scoring (issue 10, items 2, 8, 9, 11 and 12; issue 11,
item 3): each test reproduces one and shows that it no longer works."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.test import Client
from django.utils import timezone

from hctqa.celery import app
from leaderboard import services
from leaderboard.models import QuestionResult, Status, Submission
from tests.factories import SubmissionFactory, UserFactory
from tests.leaderboard.conftest import answers, upload
from tests.leaderboard.conftest import submit as submit_predictions

pytestmark = pytest.mark.django_db


def post(client: Client, data: dict, file) -> object:
    return client.post("/leaderboard/submit/", {**data, "predictions": file})


def jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def submit(owner, records: bytes, **fields) -> Submission:
    return submit_predictions(owner, {}, predictions=records, **fields)


# --- Item 2: answers too long to score ------------------------------------------------------


def test_an_answer_over_the_limit_is_refused_naming_its_question(
    client: Client, dataset, researcher, form_data, settings
) -> None:
    settings.SUBMISSION_MAX_ANSWER_CHARS = 100
    records = answers(dataset)
    records["pak--1--1--M1"] = "." + "1" * 50 + "0" * 50 + "a"
    client.force_login(researcher)
    response = post(client, form_data(), upload(records))
    assert response.status_code == 400
    assert (
        "the answer to pak--1--1--M1 is 102 characters long, over the limit of 100"
        in response.content.decode()
    )
    assert not Submission.objects.exists()


def test_a_49_mb_answer_is_refused_without_reading_it_whole(
    client: Client, dataset, researcher, form_data
) -> None:
    line = b'{"question_id": "psa--1--1--M0", "response": "' + b"9" * 49_000_000 + b'"}'
    client.force_login(researcher)
    response = client.post("/api/submissions/create/", {**form_data(), "predictions": upload(line)})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert detail.startswith("Line 1 (question psa--1--1--M0): the record is 49,000,0")
    assert not Submission.objects.exists()


# --- Item 8: deep nesting -------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"[" * 100_000, b'{"question_id": "psa--1--1--M0", "response": ' + b"[" * 100_000],
)
def test_deeply_nested_json_is_a_400_that_names_it(
    client: Client, dataset, researcher, form_data, content: bytes
) -> None:
    client.force_login(researcher)
    response = post(client, form_data(), upload(content))
    assert response.status_code == 400
    assert "the JSON is nested too deeply" in response.content.decode()
    response = client.post(
        "/api/submissions/create/", {**form_data(), "predictions": upload(content)}
    )
    assert response.status_code == 400
    assert "the JSON is nested too deeply" in response.json()["detail"]


@pytest.mark.parametrize("depth", [100_000, 100])
def test_a_deeply_nested_json_request_body_is_a_400(client: Client, depth: int) -> None:
    body = "[" * depth + "]" * depth
    # The token endpoint has parsers of its own (a list is simply not a login there); the
    # draft endpoint has the default ones, which bound the nesting.
    response = client.post("/api/auth/token/", body, content_type="application/json")
    assert response.status_code == 400
    if depth > 1000:
        assert "nested too deeply" in response.json()["detail"]
    client.force_login(UserFactory(role="annotator"))
    response = client.put(
        "/api/annotate/properties/psa--1--1/draft/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


# --- Item 11: memory and size ----------------------------------------------------------------


def test_a_million_unknown_ids_stop_after_a_hundred(
    client: Client, dataset, researcher, form_data
) -> None:
    data = gzip.compress(
        b"\n".join(b'{"id": "psa--9--%d--M0", "response": "a"}' % i for i in range(1_000_000))
    )
    client.force_login(researcher)
    response = client.post("/api/submissions/create/", {**form_data(), "predictions": upload(data)})
    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith(
        "At least 100 unknown question ids (reading stopped at line 100), e.g. psa--9--0--M0"
    )
    assert len(body["problems"]) == 100
    assert body["problems"][99] == "Line 100: unknown question id psa--9--99--M0"


def test_the_form_lists_each_problem(client: Client, dataset, researcher, form_data) -> None:
    content = jsonl({"id": "psa--1--1--M0", "response": 1}, {"id": "nope", "response": "a"})
    client.force_login(researcher)
    response = post(client, form_data(), upload(content))
    page = response.content.decode()
    assert "2 problems; the first: Line 1: response must be a string or null, not int" in page
    assert "<li>Line 2: unknown question id nope</li>" in page


def test_a_long_answer_is_cut_on_the_page_and_whole_in_the_download(
    client: Client, dataset, researcher
) -> None:
    records = answers(dataset, right=0)
    records["psa--1--1--M0"] = "wrong " * 1500  # 9,000 characters
    submission = submit(researcher, jsonl(*({"id": q, "response": a} for q, a in records.items())))
    services.submission_score(submission_id=submission.pk)
    client.force_login(researcher)
    page = client.get(submission.get_absolute_url()).content.decode()
    assert "wrong " * 80 in page and "wrong " * 90 not in page
    assert "and 8,500 more characters" in page
    download = client.get(f"/leaderboard/submissions/{submission.pk}/results.json").json()
    whole = next(r for r in download if r["question_id"] == "psa--1--1--M0")
    assert whole["prediction"] == "wrong " * 1500


# --- Item 12: files that match nothing in the split ------------------------------------------


def test_a_file_with_no_prediction_in_the_split_is_refused_saying_where_its_ids_are(
    client: Client, dataset, researcher, form_data
) -> None:
    test_only = {q: a for q, a in answers(dataset).items() if q.startswith("pak--")}
    client.force_login(researcher)
    response = post(client, form_data(split="validation"), upload(test_only))
    assert response.status_code == 400
    assert (
        "None of the 3 predictions is for the verified questions of the validation split on "
        "real tables; its ids are 3 in the test split (real tables)"
    ) in response.content.decode()
    response = post(client, form_data(split="all", data_scope="synthetic"), upload(test_only))
    assert "None of the 3 predictions is for the verified questions on synthetic tables" in (
        response.content.decode()
    )
    assert not Submission.objects.exists()
    # One prediction in the split is enough: the rest count as empty answers.
    mixed = test_only | {"census--1--1--M0": "x"}
    assert post(client, form_data(split="validation"), upload(mixed)).status_code == 302


# --- JSON null answers -----------------------------------------------------------------------


def test_a_null_answer_is_stored_as_null_and_scored_as_empty(public_dataset, researcher) -> None:
    records = [{"id": q, "response": a} for q, a in answers(public_dataset).items()]
    records[0]["response"] = None
    records[1]["response"] = ""
    submission = submit(researcher, jsonl(*records))
    assert services.submission_score(submission_id=submission.pk) == "scored"
    score = submission.score_for("2025-05")
    assert score.coverage == 1.0 and score.recall == pytest.approx(10 / 12)
    null, empty = (QuestionResult.objects.get(question_id=r["id"]) for r in records[:2])
    assert (null.prediction, null.answered, null.recall) == (None, True, 0)
    assert (empty.prediction, empty.answered, empty.recall) == ("", True, 0)
    # The 2025-10 rules leave the null answer out of the averages; the empty one counts.
    newer = submission.score_for("2025-10")
    assert (newer.n_questions, newer.excluded) == (11, 1)
    assert newer.recall == pytest.approx(10 / 11)
    assert (null.counted_2025_10, empty.counted_2025_10) == (False, True)


# --- Issue 11, item 3: the release's result files and their gt -------------------------------


def release_file(gold: dict[str, str], wrong_gt: set[str]) -> bytes:
    return jsonl(
        *(
            {"qap_id": q, "output": a.strip("{}"), "gt": "{guess}" if q in wrong_gt else a}
            for q, a in sorted(gold.items())
        )
    )


def test_a_release_result_file_is_scored_on_the_platforms_gold_with_a_warning(
    client: Client, dataset, researcher
) -> None:
    differ = {"psa--1--1--M0", "census--1--1--M2"}
    submission = submit(researcher, release_file(dataset, differ))
    services.submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    # The platform's gold, not the file's (on a source without test questions: the overall
    # figure rests on the three test questions, so it is withheld).
    assert submission.score_for().recall_psa == 1.0
    # Train and validation questions are compared; the 3 test-split rows are not.
    assert submission.gold_claims == {
        "compared": 9,
        "differ": 2,
        "examples": ["census--1--1--M2", "psa--1--1--M0"],
        "not_compared": 3,
    }
    client.force_login(researcher)
    page = client.get(submission.get_absolute_url()).content.decode()
    assert "differ from the platform's on 2 of the 9 questions compared" in page
    assert "<code>census--1--1--M2</code>, <code>psa--1--1--M0</code>" in page
    assert "3 rows with a <code>gt</code> on test-split questions were not compared" in page
    api = client.get(f"/api/submissions/{submission.pk}/").json()
    assert api["gold_claims"]["differ"] == 2
    client.logout()  # the public page of a public submission shows no warning
    assert "gold-claims" not in client.get(submission.get_absolute_url()).content.decode()
    assert client.get(f"/api/submissions/{submission.pk}/").json()["gold_claims"] is None


def test_guessed_gt_on_test_questions_reveals_nothing(dataset, researcher) -> None:
    # A researcher probing the hidden test gold: one file whose gt guesses are right, one
    # whose guesses are wrong. What the platform says about the two must be the same.
    test_gold = {q: a for q, a in dataset.items() if q.startswith("pak--")}
    right = submit(researcher, release_file(test_gold, set()), split="test")
    wrong = submit(researcher, release_file(test_gold, set(test_gold)), split="test")
    for submission in (right, wrong):
        services.submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
    assert (
        right.gold_claims
        == wrong.gold_claims
        == {
            "compared": 0,
            "differ": 0,
            "examples": [],
            "not_compared": 3,
        }
    )
    assert right.error == wrong.error == ""


# --- Item 9 and item 2: the scoring worker ---------------------------------------------------


def test_scoring_and_inference_have_their_own_queues() -> None:
    def queue(task: str) -> str:
        return app.amqp.router.route({}, task)["queue"].name

    assert queue("leaderboard.tasks.score_submission") == "scoring"
    assert queue("leaderboard.tasks.run_inference") == "inference"
    assert queue("annotation.tasks.generate_questions") == "inference"
    assert queue("plumbing.tasks.sweep_jobs") == "sweeps"


def test_a_scoring_task_past_its_time_limit_fails_its_submission_with_the_reason(
    dataset, researcher, settings, monkeypatch
) -> None:
    from leaderboard.tasks import score_submission

    assert score_submission.soft_time_limit == settings.SUBMISSION_SCORING_TIME_LIMIT
    assert score_submission.time_limit > score_submission.soft_time_limit
    submission = submit(researcher, jsonl({"id": "psa--1--1--M0", "response": "a"}), split="train")

    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()  # what Celery raises in the task at the soft limit

    monkeypatch.setattr(services.scoring, "evaluate_all", too_slow)
    assert score_submission.apply(args=[submission.pk]).get() == "failed: time limit"
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert submission.error.startswith("Scoring took longer than the 300 s limit and was stopped")


def test_the_sweeper_requeues_a_scoring_whose_heartbeat_stopped_a_minute_ago(
    dataset, researcher, settings, django_capture_on_commit_callbacks
) -> None:
    settings.SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS = 60
    now = timezone.now()
    dead = submit(researcher, jsonl({"id": "psa--1--1--M0", "response": "a"}), split="train")
    alive = submit(researcher, jsonl({"id": "psa--1--1--M0", "response": "a"}), split="train")
    # Both started long ago; only the dead one's worker stopped beating.
    long_ago = now - timedelta(minutes=5)
    Submission.objects.filter(pk=dead.pk).update(
        status=Status.SCORING, started_at=long_ago, heartbeat_at=now - timedelta(seconds=61)
    )
    Submission.objects.filter(pk=alive.pk).update(
        status=Status.SCORING, started_at=long_ago, heartbeat_at=now - timedelta(seconds=5)
    )
    with django_capture_on_commit_callbacks() as queued:
        result = services.submission_sweep(now=now)
    assert result.requeued == [dead.pk] and len(queued) == 1
    assert Submission.objects.get(pk=alive.pk).status == Status.SCORING


@pytest.mark.django_db(transaction=True)
def test_scoring_beats_while_it_works(dataset, researcher, monkeypatch) -> None:
    monkeypatch.setattr(services.scoring, "HEARTBEAT_EVERY_SECONDS", 0.05)
    submission = submit(researcher, jsonl({"id": "psa--1--1--M0", "response": "a"}), split="train")
    beats = []
    real_evaluate = services.scoring.evaluate_all

    def slow_evaluate(*args, **kwargs):
        import time

        first = Submission.objects.get(pk=submission.pk).heartbeat_at
        time.sleep(0.5)
        beats.append((first, Submission.objects.get(pk=submission.pk).heartbeat_at))
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(services.scoring, "evaluate_all", slow_evaluate)
    assert services.submission_score(submission_id=submission.pk) == "scored"
    first, later = beats[0]
    assert first is not None and later > first


def test_a_run_that_lost_its_claim_cannot_save_over_the_next_one(dataset, researcher) -> None:
    submission = submit(researcher, jsonl({"id": "psa--1--1--M0", "response": "a"}), split="train")
    # The first run claimed it (attempt 1), then went silent; the sweeper requeued it and a
    # second run claimed it (attempt 2). The first run comes back to save.
    Submission.objects.filter(pk=submission.pk).update(status=Status.SCORING, attempts=2)
    services.scoring._fail(submission.pk, "stale run", attempt=1)
    assert Submission.objects.get(pk=submission.pk).status == Status.SCORING


def test_gt_that_agrees_everywhere_is_good_news_not_a_warning(client: Client, researcher) -> None:
    agreeing = SubmissionFactory(
        owner=researcher, gold_claims={"compared": 8843, "differ": 0, "examples": []}
    )
    differing = SubmissionFactory(
        owner=researcher, gold_claims={"compared": 10, "differ": 2, "examples": ["psa--1--1--M0"]}
    )
    client.force_login(researcher)
    page = client.get(agreeing.get_absolute_url()).content.decode()
    assert "agree with the platform's on all 8,843 questions compared" in page
    assert '<section class="all-clear gold-claims"' in page
    assert 'class="notice gold-claims"' not in page
    page = client.get(differing.get_absolute_url()).content.decode()
    assert '<section class="notice gold-claims"' in page
