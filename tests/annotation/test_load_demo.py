from __future__ import annotations

import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotation.models import Question, Table

pytestmark = pytest.mark.django_db


def test_it_loads_the_demo_tables_and_one_user_per_role() -> None:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert Table.objects.filter(id__startswith="synthetic--demo-").count() == 6
    assert Question.objects.filter(table__id__startswith="synthetic--demo-").count() == 36
    for role in ("annotator", "adjudicator", "researcher", "admin"):
        user = authenticate(username=role, password=f"{role}-demo-pass")
        assert user is not None and user.groups.filter(name=role).exists()
        assert f"{role} / {role}-demo-pass" in out.getvalue()
    again = io.StringIO()
    call_command("load_demo", stdout=again)
    assert "Nothing changed" in again.getvalue()
