import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_synthetic_generation_runs"),
        ("endpoints", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="generationrun",
            name="endpoint",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="generation_runs",
                to="endpoints.endpoint",
            ),
        ),
    ]
