"""The upgrade of runs made before endpoints were registered: each (base URL, key variable)
they named becomes an inactive registered endpoint, open to the people who used it, so their
history stays readable and nothing sends a server-held key until an admin has checked it."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("annotation", "0007_synthetic_generation_runs"),
    ("leaderboard", "0004_submission_scored_on_release"),
]


def test_old_runs_get_inactive_endpoints_for_what_they_named() -> None:
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    ada = User.objects.create(username="ada")
    eve = User.objects.create(username="eve")
    InferenceRun = old.get_model("leaderboard", "InferenceRun")
    GenerationRun = old.get_model("annotation", "GenerationRun")
    common = {
        "model_name": "m",
        "modality": "text",
        "table_format": "csv",
        "split": "test",
        "data_scope": "real",
        "weights": "closed",
    }
    gpu = "http://gpu-host:8000/v1"
    done = InferenceRun.objects.create(
        created_by=ada,
        base_url=gpu,
        api_key_env="VLLM_API_KEY",
        status="done",
        config={"model": "m", "base_url": gpu, "api_key_env": "VLLM_API_KEY"},
        **common,
    )
    # The review's attack, as the database holds it.
    attack = InferenceRun.objects.create(
        created_by=eve,
        base_url="http://[::ffff:127.0.0.1]:18080/v1",
        api_key_env="DUMMY_API_KEY",
        status="queued",
        **common,
    )
    generation = GenerationRun.objects.create(
        created_by=eve, base_url=gpu, model="m", api_key_env="VLLM_API_KEY"
    )

    new = migrate(latest())
    Endpoint = new.get_model("endpoints", "Endpoint")
    InferenceRun = new.get_model("leaderboard", "InferenceRun")
    GenerationRun = new.get_model("annotation", "GenerationRun")
    shared = Endpoint.objects.get(base_url=gpu)
    assert (shared.name, shared.api_key_env, shared.is_active) == (
        "imported-gpu-host",
        "VLLM_API_KEY",
        False,
    )
    # One endpoint per configuration, whether inference or generation used it.
    assert sorted(shared.users.values_list("username", flat=True)) == ["ada", "eve"]
    assert GenerationRun.objects.get(pk=generation.pk).endpoint_id == shared.pk
    done = InferenceRun.objects.get(pk=done.pk)
    assert done.endpoint_id == shared.pk and done.base_url == gpu
    assert done.config == {"model": "m", "base_url": gpu, "registered_endpoint": shared.name}
    attack = InferenceRun.objects.get(pk=attack.pk)
    imported = Endpoint.objects.get(pk=attack.endpoint_id)
    assert imported.name == "imported-ffff-127-0-0-1" and not imported.is_active
    assert list(imported.users.values_list("username", flat=True)) == ["eve"]
    assert Endpoint.objects.count() == 2
