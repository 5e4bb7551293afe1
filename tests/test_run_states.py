"""Done, partly failed and failed are three states wherever a run is shown (issue 33): a
question-generation run with "0 of 2 tables done, 2 failed" is not "Done", nor is an
inference run, an ingested document or a re-scoring where some items failed."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.models import GenerationRun
from endpoints.models import Endpoint
from ingest.models import Document, DocumentPage
from leaderboard.models import Rescore
from tests.factories import CollectionFactory, InferenceRunFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db


def shown(html: str, *labels: str) -> list[str]:
    """Which of the three labels the page shows."""
    return [label for label in labels if re.search(rf">\s*{label}\s*<", html)]


THREE = ("Done", "Partly failed", "Failed")


@pytest.mark.parametrize(
    ("done", "failed", "label", "state"),
    [(2, 0, "Done", "done"), (1, 1, "Partly failed", "partly_failed"), (0, 2, "Failed", "failed")],
)
def test_a_generation_run(client: Client, done: int, failed: int, label: str, state: str) -> None:
    admin = UserFactory(role="admin")
    endpoint = Endpoint.objects.create(name="gen-host", base_url="http://127.0.0.1:9/v1")
    run = GenerationRun.objects.create(
        created_by=admin,
        endpoint=endpoint,
        base_url=endpoint.base_url,
        model="m",
        status="done",
        tables_total=2,
        tables_done=done,
        tables_failed=failed,
    )
    client.force_login(admin)
    assert shown(client.get(f"/annotate/generation/{run.pk}/").text, *THREE) == [label]
    assert shown(client.get("/annotate/generation/").text, *THREE) == [label]
    assert client.get(f"/api/verify/generation-runs/{run.pk}/").json()["state"] == state


@pytest.mark.parametrize(
    ("answered", "failed", "label", "state"),
    [
        (10, 0, "Done", "done"),
        (8, 2, "Partly failed", "partly_failed"),
        (0, 10, "Failed", "failed"),
    ],
)
def test_an_inference_run(
    client: Client, answered: int, failed: int, label: str, state: str
) -> None:
    run = InferenceRunFactory(status="done", total=10, answered=answered, failed=failed)
    client.force_login(run.created_by)
    assert shown(client.get(run.get_absolute_url()).text, *THREE) == [label]
    assert shown(client.get("/leaderboard/inference/").text, *THREE) == [label]
    assert client.get(f"/api/inference-runs/{run.pk}/").json()["state"] == state


@pytest.mark.parametrize(
    ("pages", "label", "state"),
    [(("done", "done"), "Done", "done"), (("done", "failed"), "Partly failed", "partly_failed")],
)
def test_an_ingested_document(client: Client, pages: tuple, label: str, state: str) -> None:
    judge = UserFactory(role="adjudicator")
    document = Document.objects.create(
        collection=CollectionFactory(code="census"),
        number=1,
        kind="pdf",
        file_name="a.pdf",
        sha256="0" * 64,
        size_bytes=1,
        page_count=len(pages),
        pages_done=len(pages),
        status="done",
    )
    for number, status in enumerate(pages, 1):
        DocumentPage.objects.create(
            document=document, number=number, status=status, message="Too slow"
        )
    client.force_login(judge)
    assert shown(client.get(document.get_absolute_url()).text, *THREE) == [label]
    assert shown(client.get("/ingest/").text, *THREE) == [label]
    assert client.get(f"/api/ingest/documents/{document.pk}/").json()["state"] == state


def test_a_rescoring_with_a_failed_submission_is_partly_failed(client: Client) -> None:
    rescore = Rescore.objects.create(reason="gold answers changed", status="done", total=2)
    SubmissionFactory(rescore=rescore)
    SubmissionFactory(rescore=rescore, status="failed", recall=None, error="Unreadable")
    client.force_login(UserFactory(role="admin", is_superuser=True))
    assert shown(client.get("/leaderboard/rescores/").text, *THREE) == ["Partly failed"]
