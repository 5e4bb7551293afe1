"""Trigram indexes for the dataset's text search on PostgreSQL.

icontains becomes UPPER(column) LIKE '%…%', which no B-tree can serve; a pg_trgm GIN index on
the same expression can. SQLite scans the table instead, which is fast enough at this size.
pg_trgm is a trusted extension, so the database owner may create it.
"""

from django.db import migrations

INDEXES = {
    "annotation_table_csv_trgm": ("annotation_table", "canonical_csv"),
    "annotation_table_id_trgm": ("annotation_table", "id"),
    "annotation_question_text_trgm": ("annotation_question", "text"),
}


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, (table, column) in INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} "
            f"USING gin (UPPER({column}::text) gin_trgm_ops)"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
