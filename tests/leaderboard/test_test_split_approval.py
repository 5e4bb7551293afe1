"""Test-split submissions (split test or all) need an account an admin approved, on every way
predictions get scored against test gold: the upload form, the upload API, inference runs
from the web, the API and the command, and resuming a run. Validation and train stay open."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.models import Account
from accounts.services import account_approval_withdraw, account_approve_for_test_split
from leaderboard.models import DailyLimitEntry, InferenceRun, RunStatus, Submission
from plumbing.errors import ApplicationError
from tests.factories import UserFactory
from tests.leaderboard.conftest import answers, upload
from tests.leaderboard.inference_helpers import make_questions, registered, start

pytestmark = pytest.mark.django_db

WHY = "Test-split submissions (split test or all) are open to accounts an admin has approved"
GPU_HOST = "http://gpu-host:8000/v1"
RUN = {
    "model_name": "fake-7b",
    "endpoint": "gpu-host",
    "modality": "text",
    "table_format": "paper",
    "weights": "closed",
}


@pytest.fixture
def newcomer():
    """A researcher who signed up and is not approved yet."""
    return UserFactory(username="eve", role="researcher", test_split_approved=False)


@pytest.fixture
def gpu_host(db):
    return registered(GPU_HOST, name="gpu-host")


@pytest.mark.parametrize("split", ["test", "all"])
def test_the_upload_form_refuses_an_unapproved_researcher(
    client: Client, dataset, newcomer, form_data, split: str
) -> None:
    client.force_login(newcomer)
    response = client.post(
        "/leaderboard/submit/", {**form_data(split=split), "predictions": upload(answers(dataset))}
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert WHY in text and "ask for approval on your account page (one button)" in text
    assert not Submission.objects.exists() and not DailyLimitEntry.objects.exists()


def test_validation_and_train_uploads_stay_open(
    client: Client, dataset, newcomer, form_data
) -> None:
    client.force_login(newcomer)
    for split in ("validation", "train"):
        response = client.post(
            "/leaderboard/submit/",
            {**form_data(split=split), "predictions": upload(answers(dataset))},
        )
        assert response.status_code == 302, response.content
    assert Submission.objects.count() == 2


@pytest.mark.parametrize("split", ["test", "all"])
def test_the_upload_api_refuses_an_unapproved_researcher(
    client: Client, dataset, newcomer, form_data, split: str
) -> None:
    token = Token.objects.create(user=newcomer)
    response = client.post(
        "/api/submissions/create/",
        {**form_data(split=split), "predictions": upload(answers(dataset))},
        headers={"Authorization": f"Token {token.key}"},
    )
    assert response.status_code == 400
    assert response.json()["field"] == "split" and WHY in response.json()["detail"]
    assert not Submission.objects.exists()


def test_an_inference_run_on_test_questions_is_refused_on_the_web_and_the_api(
    client: Client, newcomer, gpu_host
) -> None:
    make_questions(3)
    make_questions(3, split="validation")
    client.force_login(newcomer)
    form = {**RUN, "split": "test", "data_scope": "real", "prompt_style": "zero_shot"}
    form |= {"temperature": "0", "max_tokens": "128", "concurrency": "8", "visibility": "public"}
    response = client.post("/leaderboard/inference/new/", form)
    assert response.status_code == 400 and WHY in response.content.decode()
    for split in ("test", "all"):
        response = client.post(
            "/api/inference-runs/create/", {**RUN, "split": split}, content_type="application/json"
        )
        assert response.status_code == 400 and WHY in response.json()["detail"]
    assert not InferenceRun.objects.exists()
    # On the validation split the same run starts.
    response = client.post(
        "/api/inference-runs/create/",
        {**RUN, "split": "validation"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content


def test_the_run_inference_command_refuses_an_unapproved_researcher(newcomer, gpu_host) -> None:
    make_questions(3)
    with pytest.raises(CommandError, match=re.escape(WHY)):
        call_command(
            "run_inference",
            *["--user", "eve", "--model", "fake-7b", "--endpoint", "gpu-host"],
            *["--weights", "closed", "--split", "test", "--enqueue"],
            stdout=io.StringIO(),
        )
    assert not InferenceRun.objects.exists()


def test_a_run_cannot_be_resumed_once_its_approval_is_withdrawn(newcomer) -> None:
    make_questions(3)
    account_approve_for_test_split(user=newcomer, approved_by=UserFactory(role="admin"))
    run = start(newcomer, GPU_HOST)
    InferenceRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED)
    account_approval_withdraw(user=newcomer)
    with pytest.raises(ApplicationError, match=re.escape(WHY)):
        from leaderboard.services import inference_run_resume

        inference_run_resume(user=newcomer, run_id=run.pk, enqueue=False)
    assert InferenceRun.objects.get().status == RunStatus.FAILED


def test_an_open_server_lets_every_researcher_submit_on_the_test_split(
    client: Client, dataset, newcomer, form_data, settings
) -> None:
    settings.OPEN_TEST_SUBMISSIONS = True
    client.force_login(newcomer)
    response = client.post(
        "/leaderboard/submit/", {**form_data(), "predictions": upload(answers(dataset))}
    )
    assert response.status_code == 302
    assert "lets every researcher submit on the test split" in client.get("/accounts/").text


def test_an_admin_approves_in_the_django_admin_and_it_records_who_and_when(
    client: Client, dataset, newcomer, form_data
) -> None:
    admin = UserFactory(username="root", role="admin", is_superuser=True)
    client.force_login(admin)
    response = client.post(
        "/admin/accounts/account/",
        {"action": "approve_for_test_split", "_selected_action": [newcomer.pk]},
        follow=True,
    )
    assert "1 account approved for test-split submissions." in response.text
    account = Account.objects.get(user=newcomer)
    assert account.test_split_approved_by == admin and account.test_split_approved_at
    # The approval now lets the upload through.
    client.force_login(newcomer)
    assert "Approved by root on" in client.get("/accounts/").text
    response = client.post(
        "/leaderboard/submit/", {**form_data(), "predictions": upload(answers(dataset))}
    )
    assert response.status_code == 302


def test_the_change_form_approves_and_withdraws(client: Client, newcomer) -> None:
    admin = UserFactory(username="root", role="admin", is_superuser=True)
    client.force_login(admin)
    url = f"/admin/accounts/account/{newcomer.pk}/change/"
    assert client.post(url, {"test_split_approved": "on"}).status_code == 302
    assert Account.objects.get(user=newcomer).test_split_approved_by == admin
    assert "Test-split submissions await approval" not in client.get(url).text
    assert client.post(url, {}).status_code == 302
    assert not Account.objects.get(user=newcomer).test_split_approved


def test_the_account_page_tells_an_unapproved_researcher_what_to_do(
    client: Client, newcomer
) -> None:
    client.force_login(newcomer)
    text = client.get("/accounts/").text
    assert "Test-split submissions await approval" in text
    # One button and a note, not "write to the platform's admins" with no address.
    assert "write to the platform" not in text
    assert 'action="/accounts/approval/"' in text and ">Ask for approval</button>" in text
    assert "Validation and train submissions are open to you now" in text


def test_approval_is_recorded_in_the_database_with_its_rules(newcomer) -> None:
    # No one approves their own account: not through the service, not in the database.
    with pytest.raises(ApplicationError, match="cannot approve their own account"):
        account_approve_for_test_split(user=newcomer, approved_by=newcomer)
    with pytest.raises(IntegrityError):
        Account.objects.filter(user=newcomer).update(
            test_split_approved_by=newcomer, test_split_approved_at="2026-01-01T00:00Z"
        )


def test_an_approver_without_a_time_is_refused_by_the_database(newcomer) -> None:
    admin = UserFactory(role="admin")
    with pytest.raises(IntegrityError):
        Account.objects.filter(user=newcomer).update(test_split_approved_by=admin)


@pytest.mark.parametrize("path", ["/leaderboard/submit/", "/leaderboard/inference/new/"])
def test_the_forms_start_on_the_split_the_account_may_use(
    client: Client, newcomer, path: str
) -> None:
    chosen = re.compile(r'<option value="(\w+)" selected>')

    def split_shown() -> str:
        page = client.get(path).content.decode()
        select = page.split('name="split"')[1].split("</select>")[0]
        return chosen.search(select).group(1)

    client.force_login(newcomer)
    assert split_shown() == "validation"  # the test split would be refused
    account_approve_for_test_split(user=newcomer, approved_by=UserFactory(role="admin"))
    assert split_shown() == "test"
