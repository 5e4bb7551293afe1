"""Verification slots get a random public id for URLs and the API (see the model)."""

import uuid

from django.db import migrations, models


def fill(apps, schema_editor):
    slot_model = apps.get_model("annotation", "VerificationSlot")
    slots = list(slot_model.objects.only("pk"))
    for slot in slots:
        slot.public_id = uuid.uuid4()
    slot_model.objects.bulk_update(slots, ["public_id"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0005_verification")]

    operations = [
        migrations.AddField(
            model_name="verificationslot",
            name="public_id",
            field=models.UUIDField(editable=False, null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="verificationslot",
            name="public_id",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
