from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from leaderboard import exports, services
from leaderboard.models import Kind, Score, Status, Submission
from tests.factories import QuestionFactory, SubmissionFactory, TableFactory, UserFactory
from tests.leaderboard.conftest import answers, upload

pytestmark = pytest.mark.django_db


def rows(response) -> list[str]:
    return [s.submission.model_name for s in response.context["page"].object_list]


def test_the_board_shows_public_scored_submissions_and_paper_rows(
    client: Client, data_dir: Path
) -> None:
    call_command("import_paper_results", str(data_dir / "paper-table1.csv"), stdout=io.StringIO())
    SubmissionFactory(model_name="mine", recall=0.99)
    SubmissionFactory(model_name="secret", recall=0.98, visibility="private")
    SubmissionFactory(model_name="waiting", status=Status.QUEUED, recall=None)
    SubmissionFactory(model_name="broken", status=Status.FAILED, recall=None)
    response = client.get("/leaderboard/")
    names = rows(response)
    assert names[0] == "mine" and "gpt-o1-mini" in names and "secret" not in names
    assert "waiting" not in names and "broken" not in names
    assert all(
        s.submission.modality == "text" and s.submission.data_scope == "real"
        for s in response.context["page"].object_list
    )
    html = response.content.decode()
    assert html.count("reported in paper") >= 21
    vision = rows(client.get("/leaderboard/vision/"))
    assert "gpt-4o-vision" in vision and "mine" not in vision
    assert (
        "Precision" not in client.get("/leaderboard/vision/").content.decode().split("<tbody>")[0]
    )


def test_filters_narrow_the_board(client: Client) -> None:
    SubmissionFactory(
        model_name="small-open", parameters_billions=7, weights="open", table_format="html"
    )
    SubmissionFactory(model_name="big-closed", parameters_billions=None, weights="closed")
    SubmissionFactory(model_name="medium", parameters_billions=34, organisation="Acme")
    SubmissionFactory(model_name="synthetic-one", data_scope="synthetic")
    assert rows(client.get("/leaderboard/?size_class=small")) == ["small-open"]
    assert rows(client.get("/leaderboard/?size_class=large")) == ["big-closed"]
    assert rows(client.get("/leaderboard/?weights=closed")) == ["big-closed"]
    assert rows(client.get("/leaderboard/?table_format=html")) == ["small-open"]
    assert rows(client.get("/leaderboard/?q=acme")) == ["medium"]
    assert rows(client.get("/leaderboard/?data_scope=synthetic")) == ["synthetic-one"]
    # Real and synthetic are never ranked together: there is no "any".
    assert "synthetic-one" not in rows(client.get("/leaderboard/?data_scope="))
    assert client.get("/leaderboard/?data_scope=any").status_code == 400


def test_every_column_sorts_both_ways_with_missing_figures_last(client: Client) -> None:
    SubmissionFactory(model_name="a", recall=0.2, precision=0.9, recall_census=None)
    SubmissionFactory(model_name="b", recall=0.5, precision=0.1, recall_census=0.7)
    SubmissionFactory(model_name="c", recall=0.4, precision=0.5, recall_census=0.1)
    assert rows(client.get("/leaderboard/")) == ["b", "c", "a"]
    assert rows(client.get("/leaderboard/?sort=recall")) == ["a", "c", "b"]
    assert rows(client.get("/leaderboard/?sort=-precision")) == ["a", "c", "b"]
    assert rows(client.get("/leaderboard/?sort=census")) == ["c", "b", "a"]
    assert rows(client.get("/leaderboard/?sort=-census")) == ["b", "c", "a"]
    assert rows(client.get("/leaderboard/?sort=model")) == ["a", "b", "c"]
    bad = client.get("/leaderboard/?sort=vibes&size_class=huge")
    assert bad.status_code == 400 and b"vibes is not one of the available choices" in bad.content


def test_sorting_through_htmx_returns_the_table_only(client: Client) -> None:
    SubmissionFactory(model_name="a")
    response = client.get("/leaderboard/?sort=-cc", headers={"HX-Request": "true"})
    assert b"<html" not in response.content and b'aria-sort="descending"' in response.content


def test_the_board_exports_as_csv_and_json(client: Client) -> None:
    SubmissionFactory(model_name="b", recall=0.5)
    SubmissionFactory(model_name="a", recall=0.6, recall_low=0.55, recall_high=0.65)
    body = client.get("/leaderboard/text/export.json").json()
    assert [r["model"] for r in body] == ["a", "b"]
    assert body[0]["rank"] == 1 and body[0]["recall_ci_low"] == 0.55
    response = client.get("/leaderboard/text/export.csv?sort=recall")
    assert (
        response["Content-Disposition"]
        == 'attachment; filename="hctqa-leaderboard-text-all-2025-05.csv"'
    )
    exported = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["model"] for r in exported] == ["b", "a"]
    assert client.get("/leaderboard/audio/export.csv").status_code == 404
    assert list(body[0]) == list(exports.BOARD_COLUMNS)
    # No rows: the header is still there for the script reading it.
    empty = client.get("/leaderboard/vision/export.csv").content.decode()
    assert empty.strip() == ",".join(exports.BOARD_COLUMNS)
    assert client.get("/api/leaderboard/?modality=vision").json()["count"] == 0


def test_the_board_query_count_does_not_grow(client: Client) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/leaderboard/?sort=psa").status_code == 200
        return len(ctx.captured_queries)

    SubmissionFactory.create_batch(3)
    few = queries()
    SubmissionFactory.create_batch(60)
    assert queries() == few <= 5


def scored(owner, gold, *, right: int = 4, **fields) -> Submission:
    """A scored submission answering every question of ``gold``, the first ``right`` ones
    correctly."""
    data = services.SubmissionInput(
        **{
            "model_name": "TableLM",
            "weights": "open",
            "parameters_billions": 7,
            "modality": "text",
            "table_format": "paper",
            "split": "all",
            "data_scope": "real",
            **fields,
        }
    )
    submission = services.submission_create(
        owner=owner, data=data, predictions=upload(answers(gold, right=right))
    )
    services.submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission


def property_tables(n: int = 30) -> dict[str, str]:
    """``n`` real tables, every second one with row-group labels, one question each (its
    answer of its own): enough for the table-property regression. Question id → gold."""
    gold = {}
    for i in range(n):
        table = TableFactory(id=f"psa--4--{i}", table_properties={"row_group_label": i % 2 == 0})
        answer = f"{{{i * 7}}}"
        gold[QuestionFactory(table=table, id=f"{table.id}--M0", gold_answer=answer).id] = answer
    return gold


def test_the_model_page_shows_sources_charts_and_its_worst_questions(
    client: Client, dataset, researcher
) -> None:
    submission = scored(researcher, dataset)
    html = client.get(submission.get_absolute_url()).content.decode()
    assert "By data source" in html and "US Census" in html
    assert "Questions it gets most wrong" in html
    # Wrong answers on train and validation tables are listed with their gold and table…
    assert (
        "census--1--1-answer-1" in html and 'href="/tables/census--1--1/#q-census--1--1--M' in html
    )
    # …test-split ones (pak--1--1) are not.
    assert "pak--1--1-answer" not in html
    # Each with its table, rendered in place, merged header cells and all.
    assert html.count("<summary>Show the table</summary>") >= 2
    shown = '<summary>Show the table</summary><div class="table-scroll"><table class="hct">'
    assert shown in html


def test_a_private_submission_is_for_its_owner_and_admins(
    client: Client, dataset, researcher
) -> None:
    submission = scored(researcher, dataset, visibility="private")
    assert client.get(submission.get_absolute_url()).status_code == 404
    client.force_login(UserFactory(role="researcher"))
    assert client.get(submission.get_absolute_url()).status_code == 404
    assert client.get(f"/api/submissions/{submission.pk}/").status_code == 404
    client.force_login(researcher)
    assert client.get(submission.get_absolute_url()).status_code == 200
    client.force_login(UserFactory(role="admin"))
    assert b"Score again" in client.get(submission.get_absolute_url()).content


def test_owners_take_a_submission_off_the_board_and_put_it_back(
    client: Client, dataset, researcher, django_capture_on_commit_callbacks
) -> None:
    submission = scored(researcher, dataset, model_name="mine")
    assert rows(client.get("/leaderboard/")) == ["mine"]
    client.force_login(UserFactory(role="researcher"))
    url = f"/leaderboard/submissions/{submission.pk}/visibility/"
    assert client.post(url, {"visibility": "private"}).status_code in (403, 404)
    client.force_login(researcher)
    page = client.get(submission.get_absolute_url()).content.decode()
    assert "Make private" in page
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert client.post(url, {"visibility": "private"}).status_code == 302
    assert len(callbacks) == 1  # the property regression is refreshed without it
    client.logout()
    assert rows(client.get("/leaderboard/")) == []
    client.force_login(researcher)
    bad = client.post(url, {"visibility": "everyone"}, follow=True)
    assert "Visibility should be public or private" in bad.content.decode()
    api = client.post(
        f"/api/submissions/{submission.pk}/visibility/",
        {"visibility": "public"},
        content_type="application/json",
    )
    assert api.status_code == 200 and api.json()["visibility"] == "public"
    assert rows(client.get("/leaderboard/")) == ["mine"]


def test_owners_download_per_question_results_without_test_gold(
    client: Client, dataset, researcher
) -> None:
    submission = scored(researcher, dataset)
    client.force_login(UserFactory(role="researcher"))
    assert client.get(f"/leaderboard/submissions/{submission.pk}/results.csv").status_code == 404
    client.force_login(researcher)
    body = client.get(f"/leaderboard/submissions/{submission.pk}/results.json").json()
    assert len(body) == 12 and list(body[0]) == list(exports.RESULT_COLUMNS)
    csv_rows = client.get(f"/leaderboard/submissions/{submission.pk}/results.csv").content
    assert len(list(csv.DictReader(io.StringIO(csv_rows.decode())))) == 12
    test_rows = [r for r in body if r["split"] == "test"]
    assert test_rows and all(
        r["gold_answer"] is None and r["recall_2025_05"] is None and r["recall_2025_10"] is None
        for r in test_rows
    )
    assert all(r["prediction"] for r in test_rows)
    train = next(r for r in body if r["question_id"] == "psa--1--1--M0")
    assert train["gold_answer"] == "{psa--1--1-answer-0}"
    assert train["recall_2025_05"] == train["recall_2025_10"] == 0.0  # answered "wrong"
    assert train["counted_2025_10"] is True
    api = client.get(f"/api/submissions/{submission.pk}/results/").json()
    assert api["count"] == 12


def test_owners_rescore_and_delete_from_the_page(
    client: Client, dataset, researcher, django_capture_on_commit_callbacks
) -> None:
    submission = scored(researcher, dataset)
    client.force_login(researcher)
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"/leaderboard/submissions/{submission.pk}/rescore/", follow=True)
    assert b"Sent for scoring again." in response.content and len(queued) == 1
    other = UserFactory(role="researcher")
    client.force_login(other)
    assert client.post(f"/leaderboard/submissions/{submission.pk}/delete/").status_code == 403
    client.force_login(researcher)
    assert client.post(f"/leaderboard/submissions/{submission.pk}/delete/").status_code == 302
    assert not Submission.objects.filter(pk=submission.pk).exists()


def test_the_status_panel_polls_until_scored(client: Client, dataset, researcher) -> None:
    data = services.SubmissionInput(
        model_name="m",
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split="all",
        data_scope="real",
    )
    submission = services.submission_create(
        owner=researcher, data=data, predictions=upload(answers(dataset))
    )
    url = f"{submission.get_absolute_url()}?part=status"
    waiting = client.get(url, headers={"HX-Request": "true"})
    assert b'hx-trigger="every 1s"' in waiting.content and b"<progress" in waiting.content
    services.submission_score(submission_id=submission.pk)
    done = client.get(url, headers={"HX-Request": "true"})
    assert done["HX-Refresh"] == "true"


def test_compare_runs_a_paired_bootstrap(client: Client, public_dataset, researcher) -> None:
    a = scored(researcher, public_dataset, model_name="first")
    data = services.SubmissionInput(
        model_name="second",
        weights="open",
        parameters_billions=7,
        modality="text",
        table_format="paper",
        split="all",
        data_scope="real",
    )
    b = services.submission_create(
        owner=researcher, data=data, predictions=upload(answers(public_dataset, right=12))
    )
    services.submission_score(submission_id=b.pk)
    response = client.get(f"/leaderboard/compare/?a={a.pk}&b={b.pk}")
    comparison = response.context["comparison"]
    assert comparison.metrics["recall"].difference == pytest.approx(4 / 12 - 1)
    assert comparison.metrics["recall"].n == 12
    assert b"second is better" in response.content
    same = client.get(f"/leaderboard/compare/?a={a.pk}&b={a.pk}")
    assert same.status_code == 400 and b"Choose two different submissions" in same.content
    missing = client.get(f"/leaderboard/compare/?a={a.pk}&b=99999")
    assert missing.status_code == 400 and b"No such submission" in missing.content


def test_the_same_comparison_asked_again_is_not_computed_again(
    client: Client, public_dataset, researcher, monkeypatch
) -> None:
    """Half a second of CPU per bootstrap on full submissions, for anonymous visitors: asked
    in a loop it would take the web workers. Scoring either one again computes it anew."""
    from django.core.cache import cache

    from leaderboard.selectors import comparisons

    cache.clear()
    runs = []
    real = comparisons.paired_bootstrap
    monkeypatch.setattr(
        comparisons, "paired_bootstrap", lambda *a, **k: runs.append(1) or real(*a, **k)
    )
    a = scored(researcher, public_dataset, model_name="first")
    b = scored(researcher, public_dataset, model_name="second")
    url = f"/leaderboard/compare/?a={a.pk}&b={b.pk}"
    for _ in range(20):
        assert client.get(url).status_code == 200
    assert len(runs) == 4  # precision, recall, F1, CC: once
    services.submission_rescore(submission=b, user=researcher)
    services.submission_score(submission_id=b.pk)
    assert client.get(url).status_code == 200
    assert len(runs) == 8


def test_new_comparisons_are_limited_per_visitor_and_cached_ones_are_not(
    client: Client, public_dataset, researcher, settings
) -> None:
    """Many different pairs (N submissions give N² of them, each half a second of CPU) from
    one address: past the rate, a new comparison is refused with 429 and when to come back;
    one already computed is still shown, and another address is not held up."""
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "compare": "2/hour"}
    a, b, c = (
        scored(researcher, public_dataset, model_name=name) for name in ("one", "two", "three")
    )
    visitor = Client(REMOTE_ADDR="203.0.113.7")
    assert visitor.get(f"/leaderboard/compare/?a={a.pk}&b={b.pk}").status_code == 200
    assert visitor.get(f"/leaderboard/compare/?a={a.pk}&b={c.pk}").status_code == 200
    refused = visitor.get(f"/leaderboard/compare/?a={b.pk}&b={c.pk}")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "many new comparisons lately" in refused.content.decode()
    assert "comparison-table" not in refused.content.decode()
    again = visitor.get(f"/leaderboard/compare/?a={a.pk}&b={b.pk}")
    assert again.status_code == 200 and "comparison-table" in again.content.decode()
    other = Client(REMOTE_ADDR="198.51.100.9")
    assert other.get(f"/leaderboard/compare/?a={b.pk}&b={c.pk}").status_code == 200


def test_the_compare_limit_counts_an_ipv6_64_as_one_visitor(
    client: Client, public_dataset, researcher, settings
) -> None:
    """One IPv6 host may use any address of its /64: one new address per pair was no limit."""
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "compare": "2/hour"}
    subs = [scored(researcher, public_dataset, model_name=f"m{i}") for i in range(3)]
    pairs = [(subs[0], subs[1]), (subs[0], subs[2]), (subs[1], subs[2])]
    codes = [
        Client(REMOTE_ADDR=f"2001:db8:1:2::{n}")
        .get(f"/leaderboard/compare/?a={a.pk}&b={b.pk}")
        .status_code
        for n, (a, b) in enumerate(pairs, start=1)
    ]
    assert codes == [200, 200, 429]


def test_toggling_visibility_in_a_loop_queues_one_regression(
    client: Client, dataset, researcher, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    """The page has no rate limit; each change used to queue a whole regression on the
    scoring workers, so a loop of clicks starved the submissions waiting behind it."""
    from django.core.cache import cache

    from leaderboard import tasks
    from leaderboard.services import submissions

    queued = []
    monkeypatch.setattr(tasks.refresh_property_regression, "delay", lambda: queued.append(1))
    cache.delete(submissions.REGRESSION_PENDING_KEY)
    submission = scored(researcher, dataset, model_name="mine")
    client.force_login(researcher)
    url = f"/leaderboard/submissions/{submission.pk}/visibility/"
    for i in range(30):
        with django_capture_on_commit_callbacks(execute=True):
            visibility = "private" if i % 2 == 0 else "public"
            assert client.post(url, {"visibility": visibility}).status_code == 302
    assert len(queued) == 1
    # Once the waiting one starts it has read every change so far; a later one queues again.
    services.property_regression_refresh()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"visibility": "private"})
    assert len(queued) == 2


def test_the_regression_page(client: Client, researcher) -> None:
    assert b"Not enough scored public submissions" in client.get("/leaderboard/regression/").content
    scored(researcher, property_tables())
    services.property_regression_refresh()
    html = client.get("/leaderboard/regression/").content.decode()
    assert "Row group label" in html and "From 1 submission over 30 tables" in html


def test_rows_below_the_coverage_or_sanity_rule_stay_out_of_the_regression(
    client: Client, researcher
) -> None:
    gold = property_tables()
    scored(researcher, gold, model_name="real-model", right=12)
    # A junk row: "{1}" to every question. Another answers a third of the questions.
    junk = scored(researcher, gold, model_name="junk", right=0)
    junk.results.update(prediction="{1}")
    few = dict(list(answers(gold, right=8).items())[:10])
    data = services.SubmissionInput(
        model_name="few", weights="open", parameters_billions=7, modality="text",
        table_format="paper", split="all", data_scope="real",
    )  # fmt: skip
    partial = services.submission_create(owner=researcher, data=data, predictions=upload(few))
    services.submission_score(submission_id=partial.pk)
    regression = services.property_regression_refresh()
    assert regression.submissions == 1
    assert [(row["model_name"], row["why"]) for row in regression.left_out] == [
        ("few", "answered 33% of its questions"),
        ("junk", "gave one answer, “{1}”, to 100% of its questions"),
    ]
    page = client.get("/leaderboard/regression/").content.decode()
    page = " ".join(re.sub(r"<[^>]+>", "", page).split())
    assert (
        "A row enters when it answered at least 90% of its questions and no one answer makes "
        "up more than half of its answers" in page
    )
    assert "Left out: few (answered 33% of its questions)" in page


def test_paper_rows_import_idempotently(data_dir: Path) -> None:
    out = io.StringIO()
    call_command("import_paper_results", str(data_dir / "paper-table1.csv"), stdout=out)
    assert "54 reported rows: 54 created, 0 updated, 0 unchanged." in out.getvalue()
    call_command("import_paper_results", str(data_dir / "paper-table1.csv"), stdout=out)
    assert "54 reported rows: 0 created, 0 updated, 54 unchanged." in out.getvalue()
    assert Submission.objects.filter(kind=Kind.REPORTED).count() == 54
    # A figure changed by hand is put back, and counted.
    Score.objects.filter(
        submission__kind=Kind.REPORTED,
        submission__model_name="gpt-4o",
        submission__modality="text",
        submission__data_scope="real",
    ).update(recall=0.5)
    # The paper's figures are 2025-05's: never a 2025-10 row.
    assert not Score.objects.filter(submission__kind=Kind.REPORTED, rules="2025-10").exists()
    call_command("import_paper_results", str(data_dir / "paper-table1.csv"), stdout=out)
    assert "54 reported rows: 0 created, 1 updated, 53 unchanged." in out.getvalue()


def test_an_empty_board_links_to_the_boards_that_have_rows(client: Client) -> None:
    # A fresh platform: only the demo rows, on the demo tables' board.
    for name in ("demo-oracle", "demo-lookup-only"):
        SubmissionFactory(model_name=name, data_scope="demo")
    SubmissionFactory(model_name="demo-vision", data_scope="demo", modality="vision")

    def empty_note(url: str) -> str:
        page = client.get(url).content.decode()
        return page.split('<div class="empty">')[1].split("</div>")[0]

    note = empty_note("/leaderboard/")
    assert "No model is on the real tables' board yet." in note
    assert '<a href="?data_scope=demo">The demo tables\' board has 2 rows</a>' in note
    assert "synthetic" not in note.lower()  # no row there
    # Filters are kept on the way to the other board.
    note = empty_note("/leaderboard/?weights=open")
    assert "No model on the real tables' board matches these filters yet." in note
    assert '<a href="?weights=open&amp;data_scope=demo">' in note
    assert '<a href="?data_scope=demo">The demo tables\' board has 1 row</a>' in empty_note(
        "/leaderboard/vision/"
    )
