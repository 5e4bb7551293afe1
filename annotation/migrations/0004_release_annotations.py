"""Record each table's imported properties as the release's annotation."""

from django.db import migrations
from django.utils import timezone


def forwards(apps, schema_editor):
    Table = apps.get_model("annotation", "Table")
    PropertyAnnotation = apps.get_model("annotation", "PropertyAnnotation")
    have = set(PropertyAnnotation.objects.filter(source="release").values_list("table_id", flat=True))
    now = timezone.now()
    rows = [
        PropertyAnnotation(
            table_id=table_id, source="release", properties=properties, version=1, saved_at=now
        )
        for table_id, properties in Table.objects.values_list("id", "table_properties")
        if table_id not in have
    ]
    PropertyAnnotation.objects.bulk_create(rows, batch_size=1000)


def backwards(apps, schema_editor):
    apps.get_model("annotation", "PropertyAnnotation").objects.filter(source="release").delete()


class Migration(migrations.Migration):
    dependencies = [("annotation", "0003_annotation_work")]

    operations = [migrations.RunPython(forwards, backwards)]
