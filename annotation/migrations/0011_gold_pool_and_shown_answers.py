"""The private gold pool, and the answer each gold slot showed. Gold slots served before this
showed the gold answer itself: they are recorded so."""

from django.conf import settings
from django.db import migrations, models


def record_shown_answers(apps, schema_editor):
    slot_model = apps.get_model("annotation", "VerificationSlot")
    slots = list(slot_model.objects.filter(kind="gold").select_related("question"))
    for slot in slots:
        slot.gold_shown_answer = slot.question.gold_answer or "?"
        slot.gold_shown_wrong = False
    slot_model.objects.bulk_update(slots, ["gold_shown_answer", "gold_shown_wrong"], 1000)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0010_generationrun_endpoint_required"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="question",
            options={
                "ordering": ["id"],
                "permissions": [
                    (
                        "view_private_questions",
                        "Can see gold-pool questions and model-generated questions not yet verified",
                    ),
                    ("write_question", "Can write questions and gold answers"),
                    ("verify_question", "Can verify model-generated questions"),
                    ("adjudicate_question", "Can adjudicate disagreeing verifications"),
                ],
            },
        ),
        migrations.AddField(
            model_name="question",
            name="in_gold_pool",
            field=models.BooleanField(
                default=False,
                help_text="A gold-control question: hidden from everyone but admins, never scored.",
            ),
        ),
        migrations.AddField(
            model_name="verificationslot",
            name="gold_shown_answer",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="verificationslot",
            name="gold_shown_wrong",
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.RunPython(record_shown_answers, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="question",
            index=models.Index(
                condition=models.Q(("in_gold_pool", True)),
                fields=["in_gold_pool"],
                name="question_gold_pool",
            ),
        ),
        migrations.AddConstraint(
            model_name="question",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("in_gold_pool", False),
                    models.Q(
                        ("status", "verified"), models.Q(("origin", "synthetic"), _negated=True)
                    ),
                    _connector="OR",
                ),
                name="gold_pool_questions_are_verified_and_not_templated",
            ),
        ),
        migrations.AddConstraint(
            model_name="verificationslot",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("gold_shown_answer", ""),
                        ("gold_shown_wrong__isnull", True),
                        ("kind", "regular"),
                    ),
                    models.Q(
                        ("gold_shown_wrong__isnull", False),
                        ("kind", "gold"),
                        models.Q(("gold_shown_answer", ""), _negated=True),
                    ),
                    _connector="OR",
                ),
                name="gold_slots_record_the_answer_shown",
            ),
        ),
    ]
