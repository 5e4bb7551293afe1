"""The submission form as a researcher meets it: no default that contradicts its help, every
problem reported at once (the fields' and the file's own), and a good file kept between tries
so it is not chosen again."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from leaderboard import services
from leaderboard.models import KeptUpload, Submission
from leaderboard.services.kept_uploads import KEPT_PER_USER
from tests.factories import UserFactory
from tests.leaderboard.conftest import answers, upload

pytestmark = pytest.mark.django_db

BROKEN = b'{"question_id": "pak--1--1--M0", "response": "a"}\n{nope\n'


def submit(client: Client, data: dict, file=None) -> object:
    return client.post("/leaderboard/submit/", {**data, **({"predictions": file} if file else {})})


def kept_token(page: str) -> str:
    found = re.search(r'name="kept_upload" value="([^"]+)"', page)
    return found.group(1) if found else ""


def test_weights_have_no_default_and_a_closed_model_needs_no_size(
    client: Client, dataset, researcher, form_data
) -> None:
    client.force_login(researcher)
    page = client.get("/leaderboard/submit/").content.decode()
    weights = re.search(r'<select name="weights".*?</select>', page, re.S).group(0)
    assert '<option value="" selected>Choose…</option>' in weights
    assert "leave it blank for a closed model of unknown size" in page
    closed = form_data(weights="closed", parameters_billions="")
    response = submit(client, closed, upload(answers(dataset)))
    assert response.status_code == 302
    assert Submission.objects.get().size_class == "large"


def test_every_problem_is_reported_at_once_the_files_own_too(
    client: Client, dataset, researcher, form_data
) -> None:
    client.force_login(researcher)
    data = form_data(model_name="", weights="", modality="vision", table_format="csv")
    response = submit(client, data, upload(BROKEN))
    page = response.content.decode()
    assert response.status_code == 400
    for message in (
        "Give the model&#x27;s name",
        "Say whether the model&#x27;s weights are open or closed",
        "choose the image format",
        "Line 2: not valid JSON",
    ):
        assert message in page, message
    assert "Nothing was submitted: fix what is marked in 4 places below" in page
    assert not Submission.objects.exists()
    assert not KeptUpload.objects.exists()  # a broken file is not kept


def test_the_metadata_and_how_the_file_fits_the_split_are_reported_together(
    client: Client, dataset, researcher, form_data
) -> None:
    client.force_login(researcher)
    test_only = {q: a for q, a in answers(dataset).items() if q.startswith("pak--")}
    data = form_data(parameters_billions="", split="validation")
    page = submit(client, data, upload(test_only)).content.decode()
    assert "Give the parameter count of an open-weights model" in page
    assert "None of the 3 predictions is for the verified questions of the validation" in page


def test_a_good_file_is_kept_for_the_next_try(
    client: Client, dataset, researcher, form_data, settings, django_capture_on_commit_callbacks
) -> None:
    client.force_login(researcher)
    content = "\n".join(f'{{"id": "{q}", "response": "{a}"}}' for q, a in answers(dataset).items())
    first = submit(client, form_data(model_name=""), upload(content.encode(), "mine.jsonl"))
    assert first.status_code == 400
    kept = KeptUpload.objects.get()
    page = first.content.decode()
    assert kept_token(page) == kept.token and len(kept.token) >= 40
    assert "Kept from your last try: <strong>mine.jsonl</strong>" in page
    # Private storage, never under the served folders.
    stored = Path(kept.file.path)
    assert stored.is_relative_to(Path(settings.PRIVATE_FILES_ROOT))
    assert not stored.is_relative_to(Path(settings.MEDIA_ROOT))
    assert stored.read_bytes() == content.encode()
    assert kept.owner == researcher and kept.expires_at > timezone.now()

    # The next try names no file: the kept one is used, then deleted.
    with django_capture_on_commit_callbacks(execute=True):
        second = submit(client, form_data(kept_upload=kept.token))
    submission = Submission.objects.get()
    assert second.status_code == 302 and second["Location"] == submission.get_absolute_url()
    assert submission.predictions_sha256 == hashlib.sha256(content.encode()).hexdigest()
    assert not KeptUpload.objects.exists() and not stored.exists()


def test_a_kept_file_is_its_owners_only_and_expires(
    client: Client, dataset, researcher, form_data, django_capture_on_commit_callbacks
) -> None:
    client.force_login(researcher)
    submit(client, form_data(model_name=""), upload(answers(dataset)))
    kept = KeptUpload.objects.get()
    client.force_login(UserFactory(role="researcher"))
    other = submit(client, form_data(kept_upload=kept.token))
    assert other.status_code == 400 and "Choose the predictions file" in other.content.decode()
    assert not Submission.objects.exists()

    client.force_login(researcher)
    KeptUpload.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    late = submit(client, form_data(kept_upload=kept.token))
    assert late.status_code == 400 and "Choose the predictions file" in late.content.decode()
    path = Path(kept.file.path)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.kept_uploads_expire() == 1
    assert not KeptUpload.objects.exists() and not path.exists()


def test_a_kept_file_gives_way_to_a_new_one_and_each_user_keeps_a_few(
    client: Client, dataset, researcher, form_data
) -> None:
    client.force_login(researcher)
    for _ in range(KEPT_PER_USER + 2):
        submit(client, form_data(model_name=""), upload(answers(dataset)))
    assert KeptUpload.objects.filter(owner=researcher).count() == KEPT_PER_USER
    token = KeptUpload.objects.first().token
    # A broken new file replaces the kept one: neither is submitted or kept.
    response = submit(client, form_data(kept_upload=token), upload(BROKEN))
    assert response.status_code == 400 and kept_token(response.content.decode()) == ""
    assert not KeptUpload.objects.filter(token=token).exists()


def test_the_sweeper_task_expires_kept_files(dataset, researcher, settings) -> None:
    from plumbing.tasks import sweep_jobs

    kept = services.kept_upload_save(owner=researcher, upload=upload(answers(dataset)))
    assert sweep_jobs.apply().get()["kept-uploads-expired"] == 0
    KeptUpload.objects.filter(pk=kept.pk).update(expires_at=timezone.now())
    assert sweep_jobs.apply().get()["kept-uploads-expired"] == 1
    settings.SUBMISSION_MAX_BYTES = 10
    assert services.kept_upload_save(owner=researcher, upload=upload(answers(dataset))) is None


def test_the_api_reports_every_problem_at_once(
    client: Client, dataset, researcher, form_data
) -> None:
    client.force_login(researcher)
    response = client.post(
        "/api/submissions/create/",
        {**form_data(model_name="", parameters_billions=""), "predictions": upload(BROKEN)},
    )
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "model_name" and body["detail"] == "Give the model's name"
    assert set(body["errors"]) == {"model_name", "parameters_billions", "predictions"}
    assert body["errors"]["predictions"][0].startswith("Line 2: not valid JSON")
    assert all(m[0].isupper() for messages in body["errors"].values() for m in messages)
    assert not Submission.objects.exists() and not KeptUpload.objects.exists()
