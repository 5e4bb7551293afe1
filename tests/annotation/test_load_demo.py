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


def test_the_demo_shows_the_approval_flow_and_leaves_the_daily_limit_alone() -> None:
    from accounts.models import ApprovalRequest
    from accounts.selectors import can_submit_to_test_split
    from accounts.services import approval_request_decide
    from leaderboard.selectors import test_split_submissions_left

    out = io.StringIO()
    call_command("load_demo", stdout=out)
    # A researcher waiting for approval: the admin's side of approving can be tried.
    newcomer = User.objects.get(username="newcomer")
    assert not can_submit_to_test_split(user=newcomer)
    waiting = ApprovalRequest.objects.get(user=newcomer, decided_at__isnull=True)
    assert newcomer.groups.filter(name="researcher").exists()
    assert authenticate(
        RequestFactory().post("/accounts/login/"),
        username="newcomer",
        password="newcomer-demo-pass",
    )
    logins = out.getvalue().split("Demo logins (username / password, role):\n")[1]
    assert "newcomer / newcomer-demo-pass  (researcher; asked for test-split approval" in logins
    # The demo rows are the platform's: the demo researcher has all of today's slots left.
    researcher = User.objects.get(username="researcher")
    left, limit = test_split_submissions_left(user=researcher)
    assert left == limit == 5
    assert "researcher's demo submissions do not use up its 5 test-split submissions" in logins
    # Loaded again: no second request; once approved, it stays approved.
    call_command("load_demo", stdout=io.StringIO())
    assert ApprovalRequest.objects.filter(user=newcomer).count() == 1
    approval_request_decide(
        request_id=waiting.pk, admin=User.objects.get(username="admin"), approve=True
    )
    again = io.StringIO()
    call_command("load_demo", stdout=again)
    assert can_submit_to_test_split(user=newcomer)
    assert "newcomer / newcomer-demo-pass  (researcher; approved for test-split" in (
        again.getvalue()
    )
