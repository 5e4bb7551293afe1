"""The dataset's models (Collection, Table, SyntheticTable, Question), moved here from annotation.
Their database tables stay where they are (annotation_table, …): this migration only tells
Django's state that the models are this app's now. annotation 0019 takes them out of
annotation's state and moves their content types."""

import django.core.validators
import django.db.models.deletion
import django.db.models.functions.text
import django.db.models.lookups
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("annotation", "0018_collection_ocr_language"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Question',
                    fields=[
                        ('id', models.CharField(max_length=180, primary_key=True, serialize=False)),
                        ('text', models.TextField()),
                        ('gold_answer', models.TextField(blank=True)),
                        ('origin', models.CharField(choices=[('human', 'Human-written'), ('model', 'Model-generated'), ('synthetic', 'Synthetic template')], db_index=True, max_length=10)),
                        ('template_number', models.PositiveSmallIntegerField(blank=True, null=True)),
                        ('sql', models.TextField(blank=True, help_text='The SQL behind a synthetic question.')),
                        ('query_properties', models.JSONField(blank=True, default=dict)),
                        ('status', models.CharField(choices=[('unverified', 'Unverified'), ('adjudication', 'Awaiting adjudication'), ('verified', 'Verified'), ('dropped', 'Dropped')], db_index=True, default='unverified', max_length=12)),
                        ('in_gold_pool', models.BooleanField(default=False, help_text='A gold-control question: hidden from everyone but admins, never scored.')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'annotation_question',
                        'ordering': ['id'],
                        'permissions': [('view_private_questions', 'Can see gold-pool questions and model-generated questions not yet verified')],
                    },
                ),
                migrations.CreateModel(
                    name='Table',
                    fields=[
                        ('id', models.CharField(max_length=160, primary_key=True, serialize=False)),
                        ('source', models.CharField(db_index=True, help_text="The code of its collection, 'synthetic' or 'demo'.", max_length=16)),
                        ('split', models.CharField(choices=[('train', 'Train'), ('validation', 'Validation'), ('test', 'Test')], db_index=True, max_length=10)),
                        ('canonical_csv', models.TextField(help_text="Canonical CSV: '__' marks a merged cell.")),
                        ('image', models.ImageField(blank=True, upload_to='tables/')),
                        ('image_url', models.URLField(blank=True, help_text='Where the release says the source image lives.', max_length=500)),
                        ('table_properties', models.JSONField(blank=True, default=dict)),
                        ('title', models.CharField(blank=True, default='', help_text='The caption above the table and its units line.', max_length=1000)),
                        ('notes', models.TextField(blank=True, default='', help_text='The footnotes and source lines below the table.', max_length=10000)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'annotation_table',
                        'ordering': ['id'],
                        'permissions': [('view_test_gold', 'Can see gold answers of test-split questions')],
                    },
                ),
                migrations.CreateModel(
                    name='Collection',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('code', models.CharField(help_text='Starts the ids of its tables: <code>--<document>--<n>.', max_length=16, unique=True, validators=[django.core.validators.RegexValidator('^[a-z][a-z0-9]*(-[a-z0-9]+)*$', 'lower-case letters and digits, words joined by single hyphens (e.g. qnpc-2024)')])),
                        ('name', models.CharField(max_length=200, unique=True)),
                        ('publisher', models.CharField(blank=True, max_length=200)),
                        ('url', models.URLField(blank=True, max_length=500, verbose_name='URL')),
                        ('licence', models.CharField(blank=True, max_length=200)),
                        ('ocr_language', models.CharField(default='eng', help_text="Tesseract's code for scans and images: eng, ara, or eng+ara for both. Each language needs its data package on the ingest worker (tesseract-ocr-ara, …).", max_length=40, validators=[django.core.validators.RegexValidator('^[a-z][a-z_]{1,15}(\\+[a-z][a-z_]{1,15}){0,4}$', 'Tesseract language codes joined by +, such as eng, ara or eng+ara')], verbose_name='OCR language')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'annotation_collection',
                        'ordering': ['name'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('code__regex', '^[a-z][a-z0-9]*(-[a-z0-9]+)*$'), models.Q(('code__in', ('synthetic', 'demo')), _negated=True)), name='collection_code_valid'), models.CheckConstraint(condition=models.Q(('ocr_language__regex', '^[a-z][a-z_]{1,15}(\\+[a-z][a-z_]{1,15}){0,4}$')), name='collection_ocr_language_valid')],
                    },
                ),
                migrations.CreateModel(
                    name='SyntheticTable',
                    fields=[
                        ('table', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='synthetic', serialize=False, to='dataset.table')),
                        ('family', models.CharField(db_index=True, max_length=120)),
                        ('hct_csv', models.TextField()),
                        ('hct_html', models.TextField()),
                        ('relational_csv', models.TextField(help_text='Line 1: display names; line 2: SQL names.')),
                    ],
                    options={
                        'db_table': 'annotation_synthetictable',
                    },
                ),
                migrations.AddConstraint(
                    model_name='table',
                    constraint=models.CheckConstraint(condition=models.Q(('source__regex', '^[a-z][a-z0-9]*(-[a-z0-9]+)*$')), name='table_source_valid'),
                ),
                migrations.AddConstraint(
                    model_name='table',
                    constraint=models.CheckConstraint(condition=models.Q(('split__in', ['train', 'validation', 'test'])), name='table_split_valid'),
                ),
                migrations.AddConstraint(
                    model_name='table',
                    constraint=models.CheckConstraint(condition=models.Q(('canonical_csv', ''), _negated=True), name='table_csv_not_empty'),
                ),
                migrations.AddConstraint(
                    model_name='table',
                    constraint=models.CheckConstraint(condition=django.db.models.lookups.LessThanOrEqual(django.db.models.functions.text.Length('title'), 1000), name='table_title_length'),
                ),
                migrations.AddConstraint(
                    model_name='table',
                    constraint=models.CheckConstraint(condition=django.db.models.lookups.LessThanOrEqual(django.db.models.functions.text.Length('notes'), 10000), name='table_notes_length'),
                ),
                migrations.AddField(
                    model_name='question',
                    name='table',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='questions', to='dataset.table'),
                ),
                migrations.AddIndex(
                    model_name='question',
                    index=models.Index(fields=['table', 'origin'], name='annotation__table_i_0659ec_idx'),
                ),
                migrations.AddIndex(
                    model_name='question',
                    index=models.Index(condition=models.Q(('in_gold_pool', True)), fields=['in_gold_pool'], name='question_gold_pool'),
                ),
                migrations.AddConstraint(
                    model_name='question',
                    constraint=models.CheckConstraint(condition=models.Q(('origin__in', ['human', 'model', 'synthetic'])), name='question_origin_valid'),
                ),
                migrations.AddConstraint(
                    model_name='question',
                    constraint=models.CheckConstraint(condition=models.Q(('in_gold_pool', False), models.Q(('status', 'verified'), models.Q(('origin', 'synthetic'), _negated=True)), _connector='OR'), name='gold_pool_questions_are_verified_and_not_templated'),
                ),
                migrations.AddConstraint(
                    model_name='question',
                    constraint=models.CheckConstraint(condition=models.Q(('status__in', ['unverified', 'adjudication', 'verified', 'dropped'])), name='question_status_valid'),
                ),
                migrations.AddConstraint(
                    model_name='question',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('origin', 'synthetic'), ('template_number__isnull', False)), models.Q(models.Q(('origin', 'synthetic'), _negated=True), ('template_number__isnull', True)), _connector='OR'), name='question_template_only_for_synthetic'),
                ),
                migrations.AddConstraint(
                    model_name='question',
                    constraint=models.CheckConstraint(condition=models.Q(('text', ''), _negated=True), name='question_text_not_empty'),
                ),
            ],
            database_operations=[],
        )
    ]
