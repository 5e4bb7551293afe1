"""Per-question results and inference responses point at the dataset app's Question (same
database table: state only)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dataset', '0001_initial'),
        ('leaderboard', '0016_rescore_with_empty_answers_known'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='inferenceresponse',
                    name='question',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='dataset.question'),
                ),
                migrations.AlterField(
                    model_name='questionresult',
                    name='question',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='results', to='dataset.question'),
                ),
            ],
            database_operations=[],
        )
    ]
