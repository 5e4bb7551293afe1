"""Documents and candidates point at the dataset app's Collection and Table (same database
tables: state only)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dataset', '0001_initial'),
        ('ingest', '0005_page_finished_at'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='candidate',
                    name='table',
                    field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='ingest_candidate', to='dataset.table'),
                ),
                migrations.AlterField(
                    model_name='document',
                    name='collection',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='documents', to='dataset.collection'),
                ),
            ],
            database_operations=[],
        )
    ]
