"""The verification pages and API: the forms work without JavaScript, the API drives the same
services, and gold slots look exactly like the others."""

from __future__ import annotations

import json
import re
from datetime import UTC

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import GenerationRun, VerificationSlot
from annotation.services import Verdict, verification_claim, verification_submit
from dataset.models import Question
from endpoints.models import Endpoint
from tests.factories import ModelQuestionFactory, QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_gold(settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 0


@pytest.fixture
def annotator(client: Client):
    user = UserFactory(role="annotator")
    client.force_login(user)
    return user


def test_the_plain_form_verifies_and_moves_on(client: Client, annotator) -> None:
    first, second = ModelQuestionFactory(gold_answer="{10}"), ModelQuestionFactory()
    response = client.get("/annotate/verify/")
    assert response.status_code == 302
    page = client.get(response.url)
    body = page.content.decode()
    assert page.status_code == 200
    assert first.text in body and "{10}" in body and 'name="rating"' in body
    public_id = re.search(r"/annotate/verify/([0-9a-f-]{36})/", response.url).group(1)
    slot_id = VerificationSlot.objects.get(public_id=public_id).pk
    posted = client.post(
        response.url,
        {
            "rating": "good",
            "answer_correct": "no",
            "corrected_answer": "{11}",
            "elapsed_ms": "4000",
        },
    )
    assert posted.status_code == 302 and posted.url == "/annotate/verify/"
    slot = VerificationSlot.objects.get(pk=slot_id)
    assert (slot.status, slot.corrected_answer, slot.seconds_spent) == ("done", "{11}", 4)
    # The next claim is a different question (this annotator already verified the first).
    following = client.get("/annotate/verify/")
    assert (
        VerificationSlot.objects.get(
            public_id=re.search(r"([0-9a-f-]{36})/$", following.url).group(1)
        ).question_id
        == second.pk
    )


def test_a_bad_form_keeps_what_was_typed(client: Client, annotator) -> None:
    ModelQuestionFactory()
    url = client.get("/annotate/verify/").url
    response = client.post(url, {"rating": "ambiguous", "answer_correct": "yes"})
    assert response.status_code == 400
    assert "needs its rewrite" in response.content.decode()
    # A garbled timer is no time spent, not a server error.
    saved = client.post(url, {"rating": "good", "answer_correct": "yes", "elapsed_ms": "NaN"})
    assert saved.status_code == 302


def test_a_lost_lease_sends_the_annotator_to_the_next_question(client: Client, annotator) -> None:
    question = ModelQuestionFactory()
    other = UserFactory(role="annotator")
    slot = verification_claim(annotator=other)
    response = client.get(f"/annotate/verify/{slot.public_id}/", follow=True)
    assert "no longer yours" in response.content.decode()
    assert question.pk  # the annotator was given the question's other slot instead
    assert VerificationSlot.objects.filter(annotator=annotator, status="leased").count() == 1


def test_skipping_releases_and_serves_another_question(client: Client, annotator) -> None:
    ModelQuestionFactory(), ModelQuestionFactory()
    url = client.get("/annotate/verify/").url
    first = VerificationSlot.objects.get(public_id=url.rstrip("/").split("/")[-1])
    response = client.post(f"{url}skip/")
    assert response.status_code == 302
    nxt = client.get("/annotate/verify/").url
    second = VerificationSlot.objects.get(public_id=nxt.rstrip("/").split("/")[-1])
    assert second.question_id != first.question_id
    first.refresh_from_db()
    assert first.status == "open"


def test_the_api_claims_renews_submits_and_hands_out_the_next(client: Client, annotator) -> None:
    ModelQuestionFactory(gold_answer="{1}"), ModelQuestionFactory(gold_answer="{2}")
    claimed = client.post("/api/verify/claim/").json()
    assert set(claimed) >= {"slot", "question", "proposed_answer", "lease_expires_at", "url"}
    renewed = client.post(f"/api/verify/slots/{claimed['slot']}/renew/")
    assert renewed.status_code == 200
    bad = client.post(
        f"/api/verify/slots/{claimed['slot']}/submit/",
        {"rating": "good", "answer_correct": False, "corrected_answer": "{"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "corrected answer" in bad.json()["detail"]
    done = client.post(
        f"/api/verify/slots/{claimed['slot']}/submit/",
        {"rating": "good", "answer_correct": True, "elapsed_ms": 1500},
        content_type="application/json",
    ).json()
    assert done["saved"] and done["next"]["slot"] != claimed["slot"]
    # Renewing a slot that is not yours is a conflict.
    assert client.post(f"/api/verify/slots/{claimed['slot']}/renew/").status_code == 409


def test_an_empty_queue_answers_204(client: Client, annotator) -> None:
    assert client.post("/api/verify/claim/").status_code == 204
    response = client.get("/annotate/verify/", follow=True)
    assert "nothing left to verify" in response.content.decode()


def test_gold_slots_look_like_the_others(client: Client, annotator, settings) -> None:
    ModelQuestionFactory(text="A generated question?")
    QuestionFactory(
        table=TableFactory(split="train"),
        text="A control question?",
        gold_answer="{7}",
        in_gold_pool=True,
    )
    regular = client.post("/api/verify/claim/").json()
    client.post(
        f"/api/verify/slots/{regular['slot']}/submit/",
        {"rating": "good", "answer_correct": True},
        content_type="application/json",
    )
    settings.VERIFICATION_GOLD_PERCENT = 100
    gold = client.post("/api/verify/claim/").json()
    assert gold["question"] == "A control question?"
    assert set(gold) == set(regular)
    regular_page = client.get(regular["url"])  # done now: redirects
    gold_page = client.get(gold["url"]).content.decode()
    assert regular_page.status_code == 302
    assert "A control question?" in gold_page
    assert "gold" not in gold_page.lower().replace("gold answer", "")
    assert "--M" not in gold_page
    # Gold slots are made at claim time: the id verifiers see must not show it by its size.
    assert re.fullmatch(r"[0-9a-f-]{36}", gold["slot"]) and str(gold["slot"]) not in {
        str(pk) for pk in VerificationSlot.objects.values_list("pk", flat=True)
    }
    assert client.get("/annotate/verify/00000000-0000-4000-8000-000000000000/").status_code == 404
    # The table page lists each question's origin: no link to it from the verify page.
    assert "/tables/" not in gold_page


def test_a_wrong_gold_answer_is_what_the_page_and_api_propose(
    client: Client, annotator, settings
) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 100
    settings.VERIFICATION_GOLD_WRONG_PERCENT = 100
    QuestionFactory(
        table=TableFactory(split="train"),
        text="How many men lived in the North in 2019?",
        gold_answer="{1}",
        in_gold_pool=True,
    )
    claimed = client.post("/api/verify/claim/").json()
    slot = VerificationSlot.objects.get(public_id=claimed["slot"])
    assert slot.gold_shown_wrong and claimed["proposed_answer"] == slot.gold_shown_answer
    assert claimed["proposed_answer"] != "{1}"
    page = client.get(claimed["url"]).content.decode()
    assert f'id="proposed-answer">{slot.gold_shown_answer}<' in page
    # Calling it right fails the check and takes the annotator out of the pool.
    done = client.post(
        f"/api/verify/slots/{claimed['slot']}/submit/",
        {"rating": "good", "answer_correct": True},
        content_type="application/json",
    ).json()
    assert done["removed_from_pool"] and done["next"] is None


def test_no_annotator_payload_shows_a_test_split_proposed_answer(client: Client) -> None:
    # The attack: generation ran on a test table and an annotator's claim showed the answer.
    secret = "{HELD-OUT-4411}"
    held_out = ModelQuestionFactory(table=TableFactory(split="test"), gold_answer=secret)
    for role in ("annotator", "adjudicator"):
        client.force_login(UserFactory(role=role))
        assert client.post("/api/verify/claim/").status_code == 204
        followed = client.get("/annotate/verify/", follow=True).content.decode()
        assert "nothing left to verify" in followed and secret not in followed
        assert " 0 waiting" in client.get("/annotate/").content.decode()
    # Two admins disagree; the adjudication queue stays the admins' too.
    admins = [UserFactory(role="admin") for _ in range(3)]
    for admin, correct in zip(admins[:2], (True, False), strict=True):
        client.force_login(admin)
        claimed = client.post("/api/verify/claim/").json()
        assert claimed["proposed_answer"] == secret  # admins see it: they verify it
        client.post(
            f"/api/verify/slots/{claimed['slot']}/submit/",
            {"rating": "good", "answer_correct": correct, "corrected_answer": "{1}"},
            content_type="application/json",
        )
    client.force_login(UserFactory(role="adjudicator"))
    for url in ("/annotate/adjudication/", "/api/verify/adjudication/"):
        assert secret not in client.get(url).content.decode()
    assert client.get(f"/annotate/adjudication/{held_out.pk}/").status_code == 404
    decided = client.post(
        f"/api/verify/adjudication/{held_out.pk}/decide/",
        {"rating": "good", "answer": "{1}"},
        content_type="application/json",
    )
    assert decided.status_code == 403
    client.force_login(admins[2])
    assert secret in client.get("/annotate/adjudication/").content.decode()


def test_researchers_cannot_verify(client: Client) -> None:
    client.force_login(UserFactory(role="researcher"))
    assert client.get("/annotate/verify/").status_code == 403
    assert client.post("/api/verify/claim/").status_code == 403


def test_adjudication_pages(client: Client) -> None:
    question = ModelQuestionFactory(gold_answer="{5}")
    a, b = UserFactory(role="annotator"), UserFactory(role="annotator")
    for user, verdict in ((a, Verdict("good", True)), (b, Verdict("nonsensical", True))):
        slot = verification_claim(annotator=user)
        verification_submit(annotator=user, slot_id=slot.pk, verdict=verdict)
    client.force_login(UserFactory(role="adjudicator"))
    listing = client.get("/annotate/adjudication/").content.decode()
    assert question.text in listing and "Nonsensical" in listing
    page = client.get(f"/annotate/adjudication/{question.pk}/")
    assert page.status_code == 200
    response = client.post(
        f"/annotate/adjudication/{question.pk}/", {"rating": "good", "answer": "{6}"}
    )
    assert response.status_code == 302
    question.refresh_from_db()
    assert (question.status, question.gold_answer) == ("verified", "{6}")
    assert client.get(f"/annotate/adjudication/{question.pk}/").status_code == 404
    api = client.get("/api/verify/adjudication/").json()
    assert api["waiting"] == 0


def test_the_dashboard_shows_shares_agreement_throughput_and_removals(client: Client) -> None:
    people = [UserFactory(role="annotator") for _ in range(2)]
    ratings = ["good", "good", "ambiguous", "nonsensical"]
    for _ in ratings:
        ModelQuestionFactory(gold_answer="{1}")
    for person in people:
        for rating in ratings:
            slot = verification_claim(annotator=person)
            rewrite = "Clear?" if rating == "ambiguous" else ""
            verification_submit(
                annotator=person,
                slot_id=slot.pk,
                verdict=Verdict(rating, True, rewritten_question=rewrite),
                elapsed_ms=30_000,
            )
    from annotation.services import verifier_remove

    removed = UserFactory(role="annotator", username="dropped-out")
    verifier_remove(user=removed, reason="marked 2 gold questions Nonsensical")
    admin = UserFactory(role="admin")
    client.force_login(admin)
    with CaptureQueriesContext(connection) as queries:
        page = client.get("/annotate/verification/")
    body = page.content.decode()
    assert page.status_code == 200
    assert "72%" in body and "50%" in body  # the paper's figures beside ours
    assert "dropped-out" in body and "marked 2 gold questions Nonsensical" in body
    assert "Reinstate" in body
    assert len(queries) <= 20
    api = client.get("/api/verify/dashboard/").json()
    shares = {s["key"]: s for s in api["shares"]}
    assert shares["good"]["count"] == 2 and shares["good"]["share"] == 0.5
    assert api["krippendorff_alpha"] == 1.0
    assert api["pairs"][0]["cohen_kappa"] == 1.0 and api["pairs"][0]["questions"] == 4
    by_name = {v["username"]: v for v in api["verifiers"]}
    assert by_name[people[0].username]["verified"] == 4
    assert by_name[people[0].username]["per_hour"] == pytest.approx(120)
    assert by_name["dropped-out"]["removal_reason"]


def test_annotators_cannot_see_the_dashboard(client: Client, annotator) -> None:
    assert client.get("/annotate/verification/").status_code == 403
    assert client.get("/api/verify/dashboard/").status_code == 403


def test_generation_pages_start_and_show_a_run(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    table = TableFactory()
    QuestionFactory(table=TableFactory(split="train"))  # the worked example
    client.force_login(UserFactory(role="admin"))
    no_endpoint = client.get("/annotate/generation/").content.decode()
    assert (
        "None is registered yet" in no_endpoint and "/admin/endpoints/endpoint/add/" in no_endpoint
    )
    Endpoint.objects.create(name="gen-host", base_url="http://127.0.0.1:9/v1")
    form = client.get("/annotate/generation/?count=5").content.decode()
    assert table.pk in form  # offered: it has no generated questions yet
    assert '<option value="gen-host" selected>gen-host</option>' in form
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            "/annotate/generation/",
            {
                "endpoint": "gen-host",
                "model": "m",
                "questions_per_table": "8",
                "table_ids": table.pk,
            },
        )
    run = GenerationRun.objects.get()
    assert response.url == f"/annotate/generation/{run.pk}/"
    page = client.get(response.url).content.decode()
    assert "hx-trigger" in page and "0 of 1 table done" in page
    assert "endpoint gen-host" in page
    # The status line says queued, then failed or done; no banner outlives it.
    assert "is queued." not in page
    fragment = client.get(response.url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<section id="run-progress"')
    assert client.post(f"/annotate/generation/{run.pk}/cancel/").status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"
    refused = client.post(
        "/annotate/generation/",
        {
            "endpoint": "gen-host",
            "model": "m",
            "questions_per_table": "8",
            "table_ids": "",
        },
    )
    assert refused.status_code == 400 and GenerationRun.objects.count() == 1


def test_the_generation_form_lists_tables_only_when_asked(client: Client) -> None:
    table = TableFactory()
    client.force_login(UserFactory(role="admin"))
    ids = re.compile(r'<textarea id="table_ids"[^>]*>([^<]*)</textarea>')
    assert ids.search(client.get("/annotate/generation/").content.decode()).group(1) == ""
    filled = client.get("/annotate/generation/?count=5").content.decode()
    assert ids.search(filled).group(1) == table.pk


@pytest.mark.parametrize(
    "status, failed, button",
    [
        ("done", 0, None),
        ("done", 2, "Retry failed tables"),
        ("failed", 0, "Resume"),
        ("cancelled", 1, "Retry failed tables"),
    ],
)
def test_a_generation_run_offers_to_resume_only_when_there_is_something_to_do(
    client: Client, status: str, failed: int, button: str | None
) -> None:
    admin = UserFactory(role="admin")
    endpoint = Endpoint.objects.create(name="gen-host", base_url="http://127.0.0.1:9/v1")
    run = GenerationRun.objects.create(
        created_by=admin,
        endpoint=endpoint,
        base_url=endpoint.base_url,
        model="m",
        status=status,
        tables_total=4,
        tables_done=4 - failed,
        tables_failed=failed,
    )
    client.force_login(admin)
    page = client.get(f"/annotate/generation/{run.pk}/").content.decode()
    shown = re.findall(r"<button[^>]*>(Resume|Retry failed tables)</button>", page)
    assert shown == ([button] if button else [])


def test_generation_api(client: Client, django_capture_on_commit_callbacks) -> None:
    table = TableFactory()
    QuestionFactory(table=TableFactory(split="train"))  # the worked example
    client.force_login(UserFactory(role="admin"))
    Endpoint.objects.create(name="gen-host", base_url="http://127.0.0.1:9/v1")
    # The old way, a URL and a key variable of the caller's choosing, is refused by name.
    old_way = client.post(
        "/api/verify/generation-runs/",
        {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K_API_KEY"}
        | {"endpoint": "gen-host", "table_ids": [table.pk]},
        content_type="application/json",
    )
    assert old_way.status_code == 400 and set(old_way.json()) >= {"base_url", "api_key_env"}
    with django_capture_on_commit_callbacks(execute=False):
        created = client.post(
            "/api/verify/generation-runs/",
            {"endpoint": "gen-host", "model": "m", "table_ids": [table.pk]},
            content_type="application/json",
        )
    assert created.status_code == 201
    assert created.json()["endpoint"] == "gen-host"
    run_id = created.json()["id"]
    assert client.get(f"/api/verify/generation-runs/{run_id}/").json()["status"] == "queued"
    assert (
        client.post(f"/api/verify/generation-runs/{run_id}/cancel/").json()["status"] == "cancelled"
    )
    assert client.post(f"/api/verify/generation-runs/{run_id}/cancel/").status_code == 409
    assert not Question.objects.filter(origin="model").exists()


def test_the_dashboard_charts_outcome_shares_by_day_with_a_table_beside(client: Client) -> None:
    from datetime import datetime

    from annotation.models import VerificationOutcome

    def decide(day: int, rating: str) -> None:
        question = ModelQuestionFactory()
        VerificationOutcome.objects.create(
            question=question,
            rating=rating,
            answer_corrected=False,
            original_text=question.text,
            original_answer=question.gold_answer,
            decided_at=datetime(2026, 11, day, 12, tzinfo=UTC),
        )

    for rating in ("good", "good", "good", "nonsensical"):
        decide(20, rating)
    for rating in ("good", "ambiguous"):
        decide(21, rating)
    client.force_login(UserFactory(role="adjudicator"))
    page = client.get("/annotate/verification/").content.decode()
    assert '<canvas id="outcome-shares-chart"></canvas>' in page
    assert "vendor/chartjs/chart.umd.min.js" in page
    table = re.sub(r">\s+<", "><", page.split('id="outcome-shares-table"')[1].split("</table>")[0])
    cells = '<td class="num">{}</td>'
    day_20 = "".join(cells.format(v) for v in ("4", "75%", "0%", "25%"))
    day_21 = "".join(cells.format(v) for v in ("2", "50%", "50%", "0%"))
    assert f"2026-11-20</th>{day_20}</tr>" in table and f"2026-11-21</th>{day_21}</tr>" in table
    script = page.split('id="outcome-shares-data" type="application/json">')[1]
    data = json.loads(script.split("<")[0])
    assert data["days"] == ["2026-11-20", "2026-11-21"]
    assert data["series"][0] == {"label": "Good", "shares": [75, 50]}


def test_dashboard_percentages_round_down_and_reach_100_only_when_done() -> None:
    from annotation.selectors.verification import Queue

    assert Queue("x", 6587, 6605).percent == 99
    assert Queue("x", 6605, 6605).percent == 100
    assert Queue("x", 1, 3).percent == 33 and Queue("x", 2, 3).percent == 66
