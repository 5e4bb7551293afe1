"""Inference runs made before endpoints were registered named a base URL and a key variable
themselves. Each configuration becomes an inactive registered endpoint, open to the people
whose runs used it (endpoints.legacy says why); the runs' configs name it instead of the
variable."""

from django.db import migrations

from endpoints.legacy import endpoints_for_old_runs


def forwards(apps, schema_editor):
    InferenceRun = apps.get_model("leaderboard", "InferenceRun")
    Endpoint = apps.get_model("endpoints", "Endpoint")
    configurations = {}
    old = InferenceRun.objects.filter(endpoint__isnull=True)
    for base_url, api_key_env, user_id in old.values_list(
        "base_url", "api_key_env", "created_by_id"
    ):
        configurations.setdefault((base_url, api_key_env), set()).add(user_id)
    endpoints = endpoints_for_old_runs(Endpoint, configurations)
    for run in old.only("pk", "base_url", "api_key_env", "config").iterator():
        endpoint = endpoints[(run.base_url, run.api_key_env)]
        config = {k: v for k, v in (run.config or {}).items() if k != "api_key_env"}
        config["registered_endpoint"] = endpoint.name
        InferenceRun.objects.filter(pk=run.pk).update(endpoint=endpoint, config=config)


def backwards(apps, schema_editor):
    InferenceRun = apps.get_model("leaderboard", "InferenceRun")
    for run in InferenceRun.objects.select_related("endpoint").exclude(endpoint=None).iterator():
        config = {k: v for k, v in (run.config or {}).items() if k != "registered_endpoint"}
        config["api_key_env"] = run.endpoint.api_key_env
        InferenceRun.objects.filter(pk=run.pk).update(
            api_key_env=run.endpoint.api_key_env, endpoint=None, config=config
        )


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0005_inferencerun_endpoint"),
        # Generation runs first: the same configuration gets the same endpoint.
        ("annotation", "0009_endpoints_for_existing_generation_runs"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
