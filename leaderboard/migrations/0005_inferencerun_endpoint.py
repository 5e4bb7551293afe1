import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("endpoints", "0001_initial"),
        ("leaderboard", "0004_submission_scored_on_release"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="inferencerun", name="inference_endpoint_given"),
        migrations.AddField(
            model_name="inferencerun",
            name="endpoint",
            field=models.ForeignKey(
                blank=True,
                help_text="The registered endpoint; empty for the researcher's own.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="inference_runs",
                to="endpoints.endpoint",
            ),
        ),
        migrations.AddField(
            model_name="inferencerun",
            name="sealed_api_key",
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.AddField(
            model_name="inferencerun",
            name="api_key_given",
            field=models.BooleanField(
                default=False,
                editable=False,
                help_text="The researcher gave a key for their own endpoint (resuming asks for it).",
            ),
        ),
        migrations.AlterField(
            model_name="inferencerun",
            name="base_url",
            field=models.CharField(help_text="Where the requests went.", max_length=500),
        ),
    ]
