"""Question generation against a local OpenAI-compatible server started by the tests."""

from __future__ import annotations

import base64
import io
import json
import re
import time

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from PIL import Image

from annotation.models import GenerationItem, GenerationRun, VerificationSlot
from annotation.services import generation_run_create, generation_run_execute
from dataset.models import Question
from endpoints.models import Endpoint
from plumbing.errors import ApplicationError, ConflictError
from tests.factories import QuestionFactory, TableFactory, UserFactory
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.django_db

KINDS = ["lookup", "filter", "aggregation", "ranking", "yes_no", "lookup", "filter", "ranking"]


def valid_reply(n: int = 8, prefix: str = "Q") -> str:
    answers = ["{1}", "{North} || {South}", "{22}", "{South | 20}", "Yes", "{2}", "{3}", "{4}"]
    return json.dumps(
        {
            "questions": [
                {
                    "question": f"{prefix} question {i}?",
                    "answer": answers[i % 8],
                    "type": KINDS[i % 8],
                }
                for i in range(n)
            ]
        }
    )


@pytest.fixture
def server():
    with FakeOpenAI(lambda body: Reply(valid_reply())) as fake:
        yield fake


@pytest.fixture
def admin():
    return UserFactory(role="admin")


@pytest.fixture
def tables():
    example_table = TableFactory(split="train")
    QuestionFactory(
        table=example_table, text="Which region has the most men?", gold_answer="{South}"
    )
    return [TableFactory(split="validation"), TableFactory(split="validation")]


@pytest.fixture(autouse=True)
def quick_retries(settings) -> None:
    settings.INFERENCE_RETRY_BASE_MS = 1


@pytest.fixture
def key(monkeypatch) -> str:
    monkeypatch.setenv("FAKE_LLM_API_KEY", "sk-test")
    return "FAKE_LLM_API_KEY"


def endpoint_at(base_url: str, key: str, **fields) -> Endpoint:
    """The endpoint an admin registered for generation, its key in ``key`` on the worker."""
    endpoint, _ = Endpoint.objects.get_or_create(
        name=f"gen-{base_url.rsplit(':', 1)[-1].split('/')[0]}",
        defaults={"base_url": base_url, "api_key_env": key, **fields},
    )
    return endpoint


def start(admin, server, tables, key, **extra) -> GenerationRun:
    return generation_run_create(
        user=admin,
        endpoint=endpoint_at(server.base_url, key).name,
        model="fake-model",
        table_ids=[t.pk for t in tables],
        **extra,
    )


def test_each_table_gets_eight_unverified_questions_with_two_slots(
    admin, server, tables, key, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = start(admin, server, tables, key)
    assert len(callbacks) == 1  # the task is sent once the run is committed
    assert generation_run_execute(run_id=run.pk) == "done"
    run.refresh_from_db()
    assert (run.tables_done, run.tables_failed, run.questions_created, run.progress) == (
        2,
        0,
        16,
        100,
    )
    made = Question.objects.filter(table=tables[0]).order_by("id")
    assert made.count() == 8
    assert {(q.origin, q.status) for q in made} == {("model", "unverified")}
    assert made.get(text="Q question 1?").gold_answer == "{North} || {South}"
    assert VerificationSlot.objects.filter(question__in=made, status="open").count() == 16

    # What the model was given: the table as HTML, one example from another table, the rules.
    body = server.requests[0]
    user = body["messages"][-1]["content"]
    assert '<table class="hct">' in user and "colspan" in user
    assert "Which region has the most men?" in user and "{South}" in user
    assert "yes/no" in user and "answerable" in body["messages"][0]["content"].lower()
    assert body["model"] == "fake-model"
    # The endpoint's own key, from the worker's environment, and nothing else.
    assert set(server.authorizations()) == {"Bearer sk-test"}
    assert run.endpoint.name.startswith("gen-") and run.base_url == server.base_url


def test_a_second_run_adds_questions_of_its_own(admin, server, tables, key) -> None:
    for _ in range(2):
        generation_run_execute(run_id=start(admin, server, tables[:1], key).pk)
    ids = set(Question.objects.filter(table=tables[0]).values_list("id", flat=True))
    assert len(ids) == 16 and all(re.fullmatch(rf"{tables[0].pk}--A\d{{6}}", q) for q in ids)


def test_malformed_output_is_retried_then_saved(admin, server, tables, key) -> None:
    server.queue(Reply("Sure! Here are your questions:"), Reply(valid_reply(7)))
    run = start(admin, server, tables[:1], key)
    generation_run_execute(run_id=run.pk)
    item = GenerationItem.objects.get(run=run)
    assert (item.status, item.attempts, item.questions_created) == ("done", 3, 8)


def test_a_long_valid_reply_is_parsed_whole(admin, server, tables, key) -> None:
    # Long questions push a valid reply past what is kept for reading failures (4,000
    # characters); it must still be parsed whole, not cut first.
    long_reply = json.loads(valid_reply())
    for pair in long_reply["questions"]:
        pair["question"] = "In the table of regions and years, " * 20 + pair["question"]
    server.queue(Reply(json.dumps(long_reply)))
    run = start(admin, server, tables[:1], key)
    generation_run_execute(run_id=run.pk)
    item = GenerationItem.objects.get(run=run)
    assert len(json.dumps(long_reply)) > 4000
    assert (item.status, item.attempts, item.questions_created) == ("done", 1, 8)


def test_a_surprise_on_one_table_fails_that_table_and_the_run_goes_on(
    admin, server, tables, key, monkeypatch
) -> None:
    from annotation.services import generation

    real = generation._generate_for
    calls = []

    def flaky(client, run, item):
        calls.append(item.table_id)
        if len(calls) == 1:
            raise ValueError("the reply was not JSON at all")
        return real(client, run, item)

    monkeypatch.setattr(generation, "_generate_for", flaky)
    run = start(admin, server, tables, key)
    assert generation_run_execute(run_id=run.pk) == "done"
    run.refresh_from_db()
    assert (run.tables_done, run.tables_failed) == (1, 1)
    failed = GenerationItem.objects.get(run=run, status="failed")
    assert "Internal error: ValueError: the reply was not JSON at all" in failed.error


def test_truncated_output_is_reported_and_nothing_is_half_saved(admin, server, tables, key) -> None:
    cut = valid_reply()[:300]
    server.queue(*[Reply(cut, finish_reason="length")] * 3)
    run = start(admin, server, tables, key)
    assert generation_run_execute(run_id=run.pk) == "done"
    failed = GenerationItem.objects.get(run=run, table=tables[0])
    assert failed.status == "failed" and failed.attempts == 3
    assert "No valid reply after 3 attempts" in failed.error
    assert "token limit" in failed.error and failed.last_output == cut
    assert not Question.objects.filter(table=tables[0]).exists()
    # The other table is unaffected.
    assert Question.objects.filter(table=tables[1]).count() == 8
    run.refresh_from_db()
    assert (run.tables_done, run.tables_failed, run.progress) == (1, 1, 100)


def test_a_run_where_every_table_fails_is_failed_not_done(admin, server, tables, key) -> None:
    cut = valid_reply()[:300]
    server.queue(*[Reply(cut, finish_reason="length")] * 6)  # three tries for each table
    run = start(admin, server, tables, key)
    assert generation_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert (run.status, run.tables_done, run.tables_failed) == ("failed", 0, 2)
    assert run.error.startswith("No table got a valid reply")
    assert run.is_resumable  # the failed tables can be retried


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (valid_reply(9), "Expected 8 questions, got 9"),
        (valid_reply().replace('"{1}"', '"{1"'), "Question 1: the answer breaks the format"),
        (valid_reply().replace('"yes_no"', '"trivia"'), "type should be one of"),
        (
            json.dumps({"questions": [{"question": "Q?", "answer": "Yes", "type": "yes_no"}] * 8}),
            "repeats",
        ),
    ],
)
def test_schema_violations_name_the_problem(admin, server, tables, key, output, reason) -> None:
    server.responder = lambda body: Reply(output)
    run = start(admin, server, tables[:1], key)
    generation_run_execute(run_id=run.pk)
    assert reason in GenerationItem.objects.get(run=run).error
    assert not Question.objects.filter(origin="model").exists()


def test_a_server_error_is_retried_by_the_client(admin, server, tables, key) -> None:
    server.queue(Reply(status=503))
    run = start(admin, server, tables[:1], key)
    generation_run_execute(run_id=run.pk)
    assert GenerationItem.objects.get(run=run).status == "done"
    assert len(server.requests) == 2


def test_a_missing_key_variable_fails_the_run_clearly(admin, server, tables, monkeypatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE_API_KEY", raising=False)
    run = start(admin, server, tables, "NOT_SET_ANYWHERE_API_KEY")
    assert generation_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert f"The key of endpoint {run.endpoint.name} is not set" in run.error
    # Admins read it: it names the variable and says how to fix it.
    assert "To fix it: set NOT_SET_ANYWHERE_API_KEY in the environment of the Celery worker" in (
        run.error
    )
    assert "then press Resume on this page" in run.error
    assert not server.requests


def test_run_progress_rounds_down_to_100_only_when_every_table_is_through() -> None:
    from annotation.models import GenerationRun

    assert GenerationRun(tables_total=200, tables_done=199).progress == 99
    assert GenerationRun(tables_total=200, tables_done=199, tables_failed=1).progress == 100


@pytest.mark.parametrize("status", [401, 404])
def test_a_refusing_endpoint_stops_the_run_and_resuming_carries_on(
    admin, server, tables, key, status
) -> None:
    server.queue(Reply(status=status, error="no such model"))
    run = start(admin, server, tables, key)
    assert generation_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert f"The endpoint refused the run: HTTP {status}: no such model" in run.error
    assert len(server.requests) == 1  # nothing more was sent
    assert GenerationItem.objects.filter(run=run, status="pending").count() == 2
    from annotation.services import generation_run_resume

    generation_run_resume(user=admin, run_id=run.pk)
    assert generation_run_execute(run_id=run.pk) == "done"
    assert Question.objects.filter(origin="model").count() == 16


def test_a_run_done_with_nothing_failed_is_not_resumed(admin, server, tables, key) -> None:
    from annotation.services import generation_run_resume

    run = start(admin, server, tables, key)
    assert generation_run_execute(run_id=run.pk) == "done"
    run.refresh_from_db()
    assert not run.is_resumable
    with pytest.raises(ConflictError, match="every table has its questions"):
        generation_run_resume(user=admin, run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done"


def test_an_inactive_endpoint_sends_nothing(admin, server, tables, key) -> None:
    run = start(admin, server, tables, key)
    Endpoint.objects.filter(pk=run.endpoint_id).update(is_active=False)
    assert generation_run_execute(run_id=run.pk) == "failed"
    assert not server.requests


def test_running_again_does_not_duplicate(admin, server, tables, key) -> None:
    run = start(admin, server, tables, key)
    generation_run_execute(run_id=run.pk)
    generation_run_execute(run_id=run.pk)
    assert Question.objects.filter(origin="model").count() == 16
    assert len(server.requests) == 2


def test_vision_runs_send_the_table_image(admin, server, tables, key) -> None:
    scan = io.BytesIO()
    Image.new("RGB", (40, 20), "white").save(scan, format="JPEG")
    tables[0].image.save("t.jpg", ContentFile(scan.getvalue()), save=True)
    run = start(admin, server, tables[:1], key, use_images=True)
    generation_run_execute(run_id=run.pk)
    parts = server.requests[0]["messages"][-1]["content"]
    url = parts[1]["image_url"]["url"]
    # As PNG, the same bytes the prompt export and inference runs send.
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert (sent.format, sent.size) == ("PNG", (40, 20))
    assert "<table" not in parts[0]["text"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"endpoint": "nope"}, "endpoint"),
        ({"endpoint": "closed"}, "endpoint"),
        ({"model": "not-served"}, "model_name"),
        ({"table_ids": ["psa--0--missing"]}, "table_ids"),
        ({"table_ids": []}, "table_ids"),
        ({"model": " "}, "model"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_created(admin, tables, changes, field) -> None:
    endpoint_at("http://127.0.0.1:9/v1", "GEN_API_KEY", model_names=["m"])
    Endpoint.objects.create(name="closed", base_url="http://h/v1", is_active=False)
    values = {
        "user": admin,
        "endpoint": "gen-9",
        "model": "m",
        "table_ids": [tables[0].pk],
        **changes,
    }
    with pytest.raises(ApplicationError) as error:
        generation_run_create(**values)
    assert error.value.field == field
    assert not GenerationRun.objects.exists()


def test_a_run_needs_a_worked_example_on_another_table(admin) -> None:
    lone = TableFactory(split="train")
    values = {
        "user": admin,
        "endpoint": endpoint_at("http://127.0.0.1:9/v1", "GEN_API_KEY").name,
        "model": "m",
    }
    with pytest.raises(ApplicationError, match="worked example") as error:
        generation_run_create(**values, table_ids=[lone.pk])
    assert error.value.field == "table_ids"
    # The only example is on the very table to generate for: still none to show.
    QuestionFactory(table=lone, text="Which?", gold_answer="{1}")
    with pytest.raises(ApplicationError, match="worked example"):
        generation_run_create(**values, table_ids=[lone.pk])
    assert generation_run_create(**values, table_ids=[TableFactory().pk])
    assert GenerationRun.objects.count() == 1


def test_only_admins_generate(tables) -> None:
    with pytest.raises(PermissionDenied):
        generation_run_create(
            user=UserFactory(role="annotator"),
            endpoint=endpoint_at("http://127.0.0.1:9/v1", "GEN_API_KEY").name,
            model="m",
            table_ids=[tables[0].pk],
        )


def test_a_gold_pool_question_is_never_the_worked_example(admin) -> None:
    # Pool questions are private: never sent to a model provider.
    QuestionFactory(table=TableFactory(split="train"), gold_answer="{1}", in_gold_pool=True)
    with pytest.raises(ApplicationError, match="worked example"):
        generation_run_create(
            user=admin,
            endpoint=endpoint_at("http://127.0.0.1:9/v1", "GEN_API_KEY").name,
            model="m",
            table_ids=[TableFactory().pk],
        )


# --- Test-split tables (issue 10, item 3) ----------------------------------------------------


def test_test_split_tables_are_refused_by_default(admin, tables) -> None:
    held_out = TableFactory(split="test")
    with pytest.raises(
        ApplicationError, match=f"1 of the tables is in the test split \\({held_out.pk}\\)"
    ) as error:
        generation_run_create(
            user=admin,
            endpoint=endpoint_at("http://127.0.0.1:9/v1", "GEN_API_KEY").name,
            model="m",
            table_ids=[tables[0].pk, held_out.pk],
        )
    assert error.value.field == "table_ids" and "GENERATION_ALLOW_TEST_SPLIT" in error.value.message
    assert not GenerationRun.objects.exists()


def test_the_page_and_the_api_refuse_test_split_tables(client, admin, tables) -> None:
    held_out = TableFactory(split="test")
    client.force_login(admin)
    form = client.get("/annotate/generation/?count=50").content.decode()
    assert tables[0].pk in form and held_out.pk not in form  # not even offered
    assert "are refused, so no proposed answer to a held-out question reaches annotators" in form
    values = {
        "endpoint": endpoint_at("http://127.0.0.1:9/v1", "GEN_API_KEY").name,
        "model": "m",
        "questions_per_table": "8",
        "table_ids": held_out.pk,
    }
    page = client.post("/annotate/generation/", values)
    assert page.status_code == 400 and "in the test split" in page.content.decode()
    api = client.post(
        "/api/verify/generation-runs/",
        {**values, "table_ids": [held_out.pk]},
        content_type="application/json",
    )
    assert api.status_code == 400 and "in the test split" in api.json()["detail"]
    assert not GenerationRun.objects.exists()


def test_a_run_sends_no_test_table_once_the_setting_is_off(
    admin, server, tables, key, settings
) -> None:
    settings.GENERATION_ALLOW_TEST_SPLIT = True
    held_out = TableFactory(split="test")
    run = start(admin, server, [tables[0], held_out], key)
    settings.GENERATION_ALLOW_TEST_SPLIT = False  # turned off before the worker got to it
    assert generation_run_execute(run_id=run.pk) == "done"
    assert len(server.requests) == 1
    assert held_out.pk not in json.dumps(server.requests)
    item = GenerationItem.objects.get(run=run, table=held_out)
    assert item.status == "failed" and "in the test split" in item.error
    assert not Question.objects.filter(table=held_out).exists()
    run.refresh_from_db()
    assert (run.tables_done, run.tables_failed) == (1, 1)


def test_when_allowed_test_split_questions_go_to_admins_only(
    admin, server, key, settings, tables
) -> None:
    from annotation.services import verification_claim

    settings.GENERATION_ALLOW_TEST_SPLIT = True
    settings.VERIFICATION_GOLD_PERCENT = 0
    held_out = TableFactory(split="test")
    generation_run_execute(run_id=start(admin, server, [held_out], key).pk)
    assert Question.objects.filter(table=held_out, origin="model").count() == 8
    assert verification_claim(annotator=UserFactory(role="annotator")) is None
    assert verification_claim(annotator=UserFactory(role="adjudicator")) is None
    assert verification_claim(annotator=admin).question.table_id == held_out.pk


@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_generation(key, celery_worker_process) -> None:
    admin = UserFactory(role="admin")
    table = TableFactory()
    QuestionFactory(table=TableFactory(split="train"))  # the worked example
    with FakeOpenAI(lambda body: Reply(valid_reply())) as server:
        run = start(admin, server, [table], key)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status in ("done", "failed"):
                break
            time.sleep(0.2)
    assert (run.status, run.questions_created) == ("done", 8)


def test_generated_ids_do_not_show_a_private_question(
    admin, server, tables, key, monkeypatch
) -> None:
    # Issue 23, item 6, for model-written questions: A0 verified and chosen as gold, then a
    # new run numbered on from it (A1…) left a gap on the public pages. Ids are drawn at
    # random from a wide range instead, whatever the table holds.
    QuestionFactory(table=tables[0], id=f"{tables[0].pk}--A0", origin="model", in_gold_pool=True)
    draws = iter(range(1000))
    monkeypatch.setattr("secrets.randbelow", lambda n: next(draws))
    run = start(admin, server, tables, key)
    assert generation_run_execute(run_id=run.pk) == "done"
    ids = {
        t.pk: sorted(
            Question.objects.filter(table=t, in_gold_pool=False).values_list("id", flat=True)
        )
        for t in tables
    }
    suffixes = [[q.rsplit("--", 1)[1] for q in ids[t.pk]] for t in tables]
    assert suffixes[0] == [f"A{100_000 + k}" for k in range(8)]
    assert suffixes[1] == [f"A{100_000 + k}" for k in range(8, 16)]


def test_an_identical_run_is_refused_while_one_is_queued_or_running(
    admin, server, tables, key
) -> None:
    """Issue 23: five identical generator runs queued in 0.2 s held the worker."""
    from django.db import IntegrityError, transaction

    from annotation.services import generation_run_cancel, generation_run_resume
    from plumbing.errors import ConflictError

    first = start(admin, server, tables, key)
    for _ in range(4):
        with pytest.raises(ConflictError, match=f"identical generation run \\(run {first.pk}\\)"):
            start(admin, server, tables, key)
    assert GenerationRun.objects.count() == 1
    # Refused by the database itself, not by a check a second request could slip past.
    with pytest.raises(IntegrityError), transaction.atomic():
        GenerationRun.objects.create(
            created_by=admin, endpoint=first.endpoint, base_url="x", fingerprint=first.fingerprint
        )
    # Another request (other options) is a run of its own.
    other = start(admin, server, tables, key, questions_per_table=4)
    # Running counts as under way; once it stopped, the same request may be queued again…
    GenerationRun.objects.filter(pk=first.pk).update(status="running")
    with pytest.raises(ConflictError):
        start(admin, server, tables, key)
    generation_run_cancel(user=admin, run_id=first.pk)
    again = start(admin, server, tables, key)
    # …and the stopped one is not resumed while its twin is queued.
    with pytest.raises(ConflictError, match=f"run {again.pk}"):
        generation_run_resume(user=admin, run_id=first.pk)
    assert GenerationRun.objects.get(pk=first.pk).status == "cancelled"
    assert {other.status, again.status} == {"queued"}
