"""The dataset's models (Collection, Table, SyntheticTable, Question) leave annotation's state
for the dataset app's (dataset 0001), and annotation's foreign keys point at them there. Their
database tables stay where they are, with every row: the state operations change no table.

Their content types move with them (app label ``dataset``), so the permissions people hold,
the admin's log and the role groups keep working: ``dataset.view_test_gold`` and
``dataset.view_private_questions`` are the dataset's. The four permissions of annotating
work (annotate_table, write_question, verify_question, adjudicate_question) stay
annotation's, on its own models, so they keep their names (``annotation.annotate_table``)."""

import django.db.models.deletion
from django.db import migrations, models

# The dataset's models, by their content types' model names.
MOVED = ("collection", "table", "synthetictable", "question")
# Annotating permissions: from the dataset model that declared them to annotation's own.
ANNOTATING = {
    "annotate_table": ("table", "propertyannotation"),
    "write_question": ("question", "questionauthoring"),
    "verify_question": ("question", "verificationslot"),
    "adjudicate_question": ("question", "verificationslot"),
}


def _relabel(apps, db, model, source, target):
    """The content type of ``model`` from app label ``source`` to ``target``. One already made
    under ``target`` (by a migrate run between the two apps' migrations) gives way to the old
    row, which carries the history; the permissions given on it are kept."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    old = ContentType.objects.using(db).filter(app_label=source, model=model).first()
    if old is None:
        return
    clash = ContentType.objects.using(db).filter(app_label=target, model=model).first()
    if clash is not None:
        for permission in apps.get_model("auth", "Permission").objects.using(db).filter(
            content_type=clash
        ):
            _move_permission(apps, db, permission, old)
        clash.delete()
    old.app_label = target
    old.save(update_fields=["app_label"])


def _move_permission(apps, db, permission, content_type):
    """``permission`` onto ``content_type``, merged into the one of the same codename there."""
    Permission = apps.get_model("auth", "Permission")
    there = Permission.objects.using(db).filter(
        content_type=content_type, codename=permission.codename
    ).first()
    if there is None:
        permission.content_type = content_type
        permission.save(update_fields=["content_type"])
        return
    there.group_set.add(*permission.group_set.all())
    there.user_set.add(*permission.user_set.all())
    permission.delete()


def _move_annotating(apps, db, source, target):
    """Each annotating permission from (app label, model) ``source(...)`` to ``target(...)``."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    for codename, models_ in ANNOTATING.items():
        src = ContentType.objects.using(db).filter(**source(models_)).first()
        if src is None:
            continue
        permission = Permission.objects.using(db).filter(content_type=src, codename=codename)
        permission = permission.first()
        if permission is None:
            continue
        dst, _ = ContentType.objects.using(db).get_or_create(**target(models_))
        _move_permission(apps, db, permission, dst)


def forwards(apps, schema_editor):
    db = schema_editor.connection.alias
    for model in MOVED:
        _relabel(apps, db, model, "annotation", "dataset")
    _move_annotating(
        apps,
        db,
        lambda m: {"app_label": "dataset", "model": m[0]},
        lambda m: {"app_label": "annotation", "model": m[1]},
    )


def backwards(apps, schema_editor):
    db = schema_editor.connection.alias
    _move_annotating(
        apps,
        db,
        lambda m: {"app_label": "annotation", "model": m[1]},
        lambda m: {"app_label": "dataset", "model": m[0]},
    )
    for model in MOVED:
        _relabel(apps, db, model, "dataset", "annotation")


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('annotation', '0018_collection_ocr_language'),
        ('dataset', '0001_initial'),
        ('discussion', '0002_comments_on_dataset_models'),
        ('ingest', '0006_documents_and_candidates_on_dataset_models'),
        ('leaderboard', '0017_results_on_dataset_questions'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='Collection',
                ),
                migrations.AlterField(
                    model_name='flag',
                    name='question',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='dataset.question'),
                ),
                migrations.AlterField(
                    model_name='discardedverification',
                    name='question',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='dataset.question'),
                ),
                migrations.AlterField(
                    model_name='verificationoutcome',
                    name='question',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='outcome', serialize=False, to='dataset.question'),
                ),
                migrations.AlterField(
                    model_name='verificationslot',
                    name='question',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='verification_slots', to='dataset.question'),
                ),
                migrations.AlterField(
                    model_name='questionauthoring',
                    name='question',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='authoring', serialize=False, to='dataset.question'),
                ),
                migrations.RemoveField(
                    model_name='synthetictable',
                    name='table',
                ),
                migrations.AlterField(
                    model_name='flag',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='dataset.table'),
                ),
                migrations.AlterField(
                    model_name='questiondraft',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='question_drafts', to='dataset.table'),
                ),
                migrations.AlterField(
                    model_name='generationitem',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='dataset.table'),
                ),
                migrations.AlterField(
                    model_name='propertyannotation',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='property_annotations', to='dataset.table'),
                ),
                migrations.AlterField(
                    model_name='annotationskip',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='dataset.table'),
                ),
                migrations.AlterField(
                    model_name='assignment',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='dataset.table'),
                ),
                migrations.AlterModelOptions(
                    name='propertyannotation',
                    options={'permissions': [('annotate_table', 'Can annotate table properties')]},
                ),
                migrations.AlterModelOptions(
                    name='questionauthoring',
                    options={'permissions': [('write_question', 'Can write questions and gold answers')]},
                ),
                migrations.AlterModelOptions(
                    name='verificationslot',
                    options={'permissions': [('verify_question', 'Can verify model-generated questions'), ('adjudicate_question', 'Can adjudicate disagreeing verifications')]},
                ),
                migrations.DeleteModel(
                    name='Question',
                ),
                migrations.DeleteModel(
                    name='SyntheticTable',
                ),
                migrations.DeleteModel(
                    name='Table',
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
