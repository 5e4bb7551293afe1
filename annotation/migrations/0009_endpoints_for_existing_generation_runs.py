"""Generation runs made before endpoints were registered get an inactive registered endpoint
for their base URL and key variable (endpoints.legacy says why)."""

from django.db import migrations

from endpoints.legacy import endpoints_for_old_runs


def forwards(apps, schema_editor):
    GenerationRun = apps.get_model("annotation", "GenerationRun")
    Endpoint = apps.get_model("endpoints", "Endpoint")
    configurations = {}
    for base_url, api_key_env, user_id in GenerationRun.objects.filter(
        endpoint__isnull=True
    ).values_list("base_url", "api_key_env", "created_by_id"):
        configurations.setdefault((base_url, api_key_env), set()).add(user_id)
    endpoints = endpoints_for_old_runs(Endpoint, configurations)
    for (base_url, api_key_env), endpoint in endpoints.items():
        GenerationRun.objects.filter(
            endpoint__isnull=True, base_url=base_url, api_key_env=api_key_env
        ).update(endpoint=endpoint)


def backwards(apps, schema_editor):
    GenerationRun = apps.get_model("annotation", "GenerationRun")
    for run in GenerationRun.objects.select_related("endpoint").exclude(endpoint=None):
        GenerationRun.objects.filter(pk=run.pk).update(
            api_key_env=run.endpoint.api_key_env, endpoint=None
        )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_generationrun_endpoint")]

    operations = [migrations.RunPython(forwards, backwards)]
