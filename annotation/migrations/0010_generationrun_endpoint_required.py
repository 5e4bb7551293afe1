import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0009_endpoints_for_existing_generation_runs")]

    operations = [
        migrations.AlterField(
            model_name="generationrun",
            name="endpoint",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="generation_runs",
                to="endpoints.endpoint",
            ),
        ),
        # A default first, so that undoing the removal can fill the column again.
        migrations.AlterField(
            model_name="generationrun",
            name="api_key_env",
            field=models.CharField(default="", max_length=100),
        ),
        migrations.RemoveField(model_name="generationrun", name="api_key_env"),
        migrations.AlterField(
            model_name="generationrun",
            name="base_url",
            field=models.URLField(help_text="Where the requests went.", max_length=500),
        ),
    ]
