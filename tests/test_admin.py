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
    for app in ("endpoints", "annotation", "leaderboard", "ingest", "discussion")
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
