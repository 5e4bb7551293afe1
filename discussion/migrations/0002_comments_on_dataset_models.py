"""Comments point at the dataset app's Table and Question (same database tables: state only)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dataset', '0001_initial'),
        ('discussion', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='comment',
                    name='question',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='comments', to='dataset.question'),
                ),
                migrations.AlterField(
                    model_name='comment',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='comments', to='dataset.table'),
                ),
            ],
            database_operations=[],
        )
    ]
