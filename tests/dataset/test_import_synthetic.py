from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from dataset.models import Question, SyntheticTable, Table

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_synthetic", *args, stdout=out)
    return out.getvalue()


def test_it_imports_a_family_with_templates_sql_and_files(data_dir: Path) -> None:
    path = data_dir / "hctqa-synthetic" / "Number_of_students.zip"
    output = run(str(path))
    assert "234 tables; 3,361 questions, 3,361 synthetic" in output
    assert Table.objects.filter(source="synthetic").count() == 234
    assert SyntheticTable.objects.filter(family="Number_of_students").count() == 234
    question = Question.objects.get(pk="synthetic--Number_of_students_set1_1--T2")
    assert question.origin == "synthetic" and question.template_number == 2
    assert question.gold_answer == "{60} || {76}"
    assert "School_type IN ('Government','Private')" in question.sql
    files = SyntheticTable.objects.get(table_id="synthetic--Number_of_students_set1_1")
    assert files.hct_html.startswith("<html>") and "DBdata" not in files.relational_csv
    assert files.hct_csv.startswith('"","Qatari","Non-Qatari"')
    assert "Nothing changed" in run(str(path))
    # A generator file edited by hand is put back by the next import, and the summary says so.
    SyntheticTable.objects.filter(pk=files.pk).update(relational_csv="edited")
    again = run(str(path))
    assert "Nothing changed" not in again and "Tables: 0 created, 1 updated" in again
    assert SyntheticTable.objects.get(pk=files.pk).relational_csv != "edited"


def test_a_bad_zip_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "broken.zip"
    bad.write_bytes(b"nope")
    with pytest.raises(CommandError, match="broken.zip: not a readable zip archive"):
        run(str(bad))
    assert not Table.objects.exists()
