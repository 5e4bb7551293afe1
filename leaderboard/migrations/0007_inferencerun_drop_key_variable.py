from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("leaderboard", "0006_endpoints_for_existing_inference_runs")]

    operations = [
        # A default first, so that undoing the removal can fill the column again (0004's
        # reverse then puts each endpoint's variable back).
        migrations.AlterField(
            model_name="inferencerun",
            name="api_key_env",
            field=models.CharField(default="", max_length=100),
        ),
        migrations.RemoveField(model_name="inferencerun", name="api_key_env"),
        migrations.AddConstraint(
            model_name="inferencerun",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("model_name", ""), _negated=True),
                    models.Q(("base_url", ""), _negated=True),
                ),
                name="inference_endpoint_given",
            ),
        ),
        migrations.AddConstraint(
            model_name="inferencerun",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("endpoint__isnull", True),
                    models.Q(("api_key_given", False), ("sealed_api_key", "")),
                    _connector="OR",
                ),
                name="inference_registered_endpoint_holds_no_key",
            ),
        ),
        migrations.AddConstraint(
            model_name="inferencerun",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("sealed_api_key", ""), ("status__in", ("queued", "running")), _connector="OR"
                ),
                name="inference_key_erased_when_run_ends",
            ),
        ),
    ]
