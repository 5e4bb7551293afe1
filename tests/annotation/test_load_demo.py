from __future__ import annotations

import io

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import RequestFactory

from annotation.models import VerificationSlot
from dataset.models import Question, Table

pytestmark = pytest.mark.django_db


def test_it_loads_the_demo_tables_and_one_user_per_role() -> None:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert Table.objects.filter(id__startswith="synthetic--demo-").count() == 6
    demo = Question.objects.filter(table__id__startswith="synthetic--demo-")
    assert demo.filter(origin="synthetic").count() == 36
    # Something to verify: three proposed questions per table, every second one wrong.
    proposed = demo.filter(origin="model", status="unverified")
    assert proposed.count() == 18
    assert VerificationSlot.objects.filter(question__in=proposed, status="open").count() == 36
    wrong = [q for q in proposed if q.id.endswith("--A1")]
    originals = dict(demo.filter(origin="synthetic").values_list("text", "gold_answer"))
    assert all(q.gold_answer != originals[q.text] for q in wrong)
    for role in ("annotator", "adjudicator", "researcher", "admin"):
        # A log-in always comes with its request (django-axes watches it).
        request = RequestFactory().post("/accounts/login/")
        user = authenticate(request, username=role, password=f"{role}-demo-pass")
        assert user is not None and user.groups.filter(name=role).exists()
        assert f"{role} / {role}-demo-pass" in out.getvalue()
    # The demo researcher may try test-split submissions too, approved by the demo admin.
    researcher = User.objects.get(username="researcher")
    assert researcher.account.test_split_approved_by.username == "admin"
    again = io.StringIO()
    call_command("load_demo", stdout=again)
    assert "Nothing changed" in again.getvalue()
