from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections, connection
from django.test import Client

from leaderboard import services
from leaderboard.models import DailyLimitEntry, QuestionResult, Status, Submission
from plumbing.errors import ApplicationError
from tests.factories import UserFactory
from tests.leaderboard.conftest import answers, upload

pytestmark = pytest.mark.django_db


def post(client: Client, data: dict, file) -> object:
    return client.post("/leaderboard/submit/", {**data, "predictions": file})


def test_a_researcher_submits_through_the_form(
    client: Client, dataset, researcher, form_data, django_capture_on_commit_callbacks
) -> None:
    client.force_login(researcher)
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, form_data(), upload(answers(dataset)))
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == submission.get_absolute_url()
    assert (submission.status, submission.owner, submission.size_class) == (
        Status.QUEUED,
        researcher,
        "small",
    )
    assert submission.predictions.name.startswith("predictions/")
    assert len(callbacks) == 1  # scoring queued once the row is committed
    assert DailyLimitEntry.objects.filter(user=researcher).count() == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "The submitted file is empty."),
        (b"\n\n", "The file is empty"),
        (b'{"question_id": "psa--1--1--M0", "response": "a"}\n{nope', "Line 2: not valid JSON"),
        (b'{"question_id": "psa--1--1--M0"}', "Line 1: no answer"),
        (b'{"response": "a"}', "Line 1: no question id"),
        (
            b'{"id": "psa--1--1--M0", "response": "a"}\n{"id": "psa--1--1--M0", "response": "b"}',
            "1 duplicate question id,",
        ),
        (b'{"id": "psa--9--9--M0", "response": "a"}', "1 unknown question id, e.g. psa--9--9--M0"),
        ("café".encode("latin-1"), "not UTF-8 text"),
    ],
)
def test_a_bad_file_is_refused_and_nothing_is_stored(
    client: Client, dataset, researcher, form_data, content: bytes, message: str
) -> None:
    client.force_login(researcher)
    response = post(client, form_data(), upload(content))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Submission.objects.exists() and not DailyLimitEntry.objects.exists()


def test_a_file_over_the_limit_is_refused(
    client: Client, dataset, researcher, form_data, settings
) -> None:
    settings.SUBMISSION_MAX_BYTES = 100
    client.force_login(researcher)
    response = post(client, form_data(), upload(answers(dataset)))
    assert response.status_code == 400
    assert "over the 0.0 MB limit" in response.content.decode()
    assert not Submission.objects.exists()


def test_bad_metadata_is_refused_with_the_field(
    client: Client, dataset, researcher, form_data
) -> None:
    client.force_login(researcher)
    response = post(client, form_data(parameters_billions=""), upload(answers(dataset)))
    assert response.status_code == 400
    assert "Give the parameter count of an open-weights model" in response.content.decode()
    response = post(
        client, form_data(modality="vision", table_format="csv"), upload(answers(dataset))
    )
    assert "choose the image format" in response.content.decode()
    response = post(
        client, form_data(paper_url="not a url", weights="ajar"), upload(answers(dataset))
    )
    assert "Enter a valid URL." in response.content.decode()
    assert "ajar is not one of the available choices" in response.content.decode()
    assert not Submission.objects.exists()


def test_only_researchers_submit(client: Client, dataset, form_data) -> None:
    client.force_login(UserFactory(role="annotator"))
    response = post(client, form_data(), upload(answers(dataset)))
    assert response.status_code == 403
    assert client.get("/leaderboard/submit/").status_code == 200  # the form itself is visible
    client.logout()
    assert client.get("/leaderboard/submit/").status_code == 302


def make(owner, dataset, **fields) -> Submission:
    data = services.SubmissionInput(
        **{
            "model_name": "m",
            "weights": "open",
            "parameters_billions": 7,
            "modality": "text",
            "table_format": "paper",
            "split": "test",
            "data_scope": "real",
            **fields,
        }
    )
    return services.submission_create(owner=owner, data=data, predictions=upload(answers(dataset)))


def test_the_daily_test_split_limit_counts_failed_and_deleted_submissions(
    dataset, researcher, settings
) -> None:
    settings.SUBMISSION_DAILY_TEST_LIMIT = 3
    first = make(researcher, dataset)
    Submission.objects.filter(pk=first.pk).update(status=Status.FAILED)
    second = make(researcher, dataset, split="all")
    services.submission_delete(submission=second, user=researcher)
    make(researcher, dataset)
    with pytest.raises(
        ApplicationError, match="You have made your 3 test-split submissions for today"
    ):
        make(researcher, dataset)
    # Other splits are not limited, and other users have their own count.
    make(researcher, dataset, split="validation")
    make(UserFactory(role="researcher"), dataset)


@pytest.mark.django_db(transaction=True)
def test_the_daily_limit_holds_under_concurrent_uploads(
    dataset, researcher, settings, monkeypatch
) -> None:
    # Exactly the default 5 of 20 test-split uploads started at the same instant are taken.
    assert settings.SUBMISSION_DAILY_TEST_LIMIT == 5
    monkeypatch.setattr(services.submissions, "enqueue_scoring", lambda pk: None)
    outcomes: list[str] = []
    start = threading.Barrier(20)

    def upload_one() -> None:
        start.wait()
        try:
            make(researcher, dataset)
            outcomes.append("created")
        except ApplicationError:
            outcomes.append("refused")
        finally:
            close_old_connections()

    threads = [threading.Thread(target=upload_one) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["created"] * 5 + ["refused"] * 15
    assert Submission.objects.count() == 5 == DailyLimitEntry.objects.count()


@pytest.mark.django_db(transaction=True)
def test_the_file_is_parsed_before_the_daily_limit_is_locked(
    dataset, researcher, monkeypatch
) -> None:
    # Parsing a 50 MB file inside the transaction would hold the lock (SQLite: the database's
    # write lock) for seconds, stalling every other writer.
    monkeypatch.setattr(services.submissions, "enqueue_scoring", lambda pk: None)
    parsed_in_transaction: list[bool] = []
    real_parse = services.submissions.read_predictions

    def parse(*args, **kwargs):
        parsed_in_transaction.append(connection.in_atomic_block)
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(services.submissions, "read_predictions", parse)
    make(researcher, dataset)
    assert parsed_in_transaction == [False]
    assert DailyLimitEntry.objects.count() == 1


def test_the_api_takes_a_submission_with_a_token(
    client: Client, dataset, researcher, form_data
) -> None:
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=researcher)
    headers = {"Authorization": f"Token {token.key}"}
    response = client.post(
        "/api/submissions/create/",
        {**form_data(), "predictions": upload(answers(dataset))},
        headers=headers,
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "queued" and body["size_class"] == "small"
    listed = client.get("/api/submissions/", headers=headers).json()
    assert [s["id"] for s in listed] == [body["id"]]


def test_the_api_names_what_is_wrong(client: Client, dataset, researcher, form_data) -> None:
    client.force_login(researcher)
    response = client.post(
        "/api/submissions/create/", {**form_data(), "predictions": upload(b" \n")}
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "The file is empty", "field": "predictions"}
    response = client.post("/api/submissions/create/", form_data(split="dev"))
    assert response.status_code == 400
    errors = response.json()["errors"]  # every problem at once, by field
    assert "dev is not one of the available choices" in errors["split"][0]
    assert errors["predictions"] == ["Choose the predictions file"]


def test_the_api_needs_a_researcher(client: Client, dataset, form_data) -> None:
    assert client.post("/api/submissions/create/", form_data()).status_code == 401
    client.force_login(UserFactory(role="annotator"))
    response = client.post(
        "/api/submissions/create/", {**form_data(), "predictions": upload(answers(dataset))}
    )
    assert response.status_code == 403
    assert not QuestionResult.objects.exists()


def test_the_api_rescores_and_deletes_for_the_owner(
    client: Client, dataset, researcher, form_data, django_capture_on_commit_callbacks
) -> None:
    client.force_login(researcher)
    created = client.post(
        "/api/submissions/create/", {**form_data(), "predictions": upload(answers(dataset))}
    ).json()
    services.submission_score(submission_id=created["id"])
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"/api/submissions/{created['id']}/rescore/")
    assert (
        response.status_code == 202 and response.json()["status"] == "queued" and len(queued) == 1
    )
    again = client.post(f"/api/submissions/{created['id']}/rescore/")
    assert again.status_code == 400 and again.json() == {
        "detail": "This submission is already waiting to be scored"
    }
    client.force_login(UserFactory(role="researcher"))
    assert client.post(f"/api/submissions/{created['id']}/delete/").status_code == 403
    client.force_login(researcher)
    assert client.post(f"/api/submissions/{created['id']}/delete/").status_code == 204
    assert client.get(f"/api/submissions/{created['id']}/").status_code == 404
