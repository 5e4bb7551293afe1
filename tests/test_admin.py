"""Every model of the platform's apps is in the admin, and each change list opens."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import Client

from tests.factories import ModelQuestionFactory, SubmissionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

MODELS = [
    model
    for app in ("endpoints", "annotation", "leaderboard", "ingest", "tracks", "discussion")
    for model in apps.get_app_config(app).get_models()
]


def test_every_model_is_registered() -> None:
    missing = [m.__name__ for m in MODELS if not admin.site.is_registered(m)]
    assert missing == []


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_each_change_list_opens_for_an_admin(client: Client, model: type) -> None:
    TableFactory(id="psa--1--1")
    ModelQuestionFactory()
    SubmissionFactory()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    meta = model._meta
    response = client.get(f"/admin/{meta.app_label}/{meta.model_name}/")
    assert response.status_code == 200


def test_a_curator_edits_a_tables_title_and_notes_in_the_admin(client: Client) -> None:
    from dataset.models import Table

    table = TableFactory(id="psa--1--1")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = f"/admin/dataset/table/{table.pk}/change/"
    form = client.get(url)
    assert b'name="title"' in form.content and b'name="notes"' in form.content
    data = {
        "id": table.pk,
        "source": table.source,
        "split": table.split,
        "canonical_csv": table.canonical_csv,
        "image_url": "",
        "table_properties": "{}",
        "title": "Table 1. Births by sex",
        "notes": "Source: PSA.",
        "questions-TOTAL_FORMS": "0",
        "questions-INITIAL_FORMS": "0",
        "questions-MIN_NUM_FORMS": "0",
        "questions-MAX_NUM_FORMS": "1000",
    }
    response = client.post(url, data)
    assert response.status_code == 302, response.content[:2000]
    table.refresh_from_db()
    assert (table.title, table.notes) == ("Table 1. Births by sex", "Source: PSA.")
    too_long = client.post(url, {**data, "title": "x" * 1001})
    assert too_long.status_code == 200 and b"at most 1000 characters" in too_long.content
    assert Table.objects.get(pk=table.pk).title == "Table 1. Births by sex"
