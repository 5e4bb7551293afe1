"""What researchers and readers expect of a board: their own rows marked, two rows ticked
and compared, columns hidden and shown through the URL, where each figure was computed, a
chart of recall against size, and demo rows on a board of their own."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.factories import SubmissionFactory, UserFactory
from tests.leaderboard.test_board_pages import scored

pytestmark = pytest.mark.django_db


def rows(html: str) -> list[str]:
    return re.findall(r"<tr class=\"([^\"]*)\">", html)


def test_your_own_rows_are_marked_when_signed_in(client: Client) -> None:
    ada = UserFactory(username="ada", role="researcher")
    SubmissionFactory(owner=ada, model_name="adas-model", recall=0.9)
    SubmissionFactory(model_name="someone-elses", recall=0.5)
    anonymous = client.get("/leaderboard/").content.decode()
    assert "own-row" not in anonymous and ">yours<" not in anonymous
    client.force_login(ada)
    page = client.get("/leaderboard/").content.decode()
    assert rows(page) == [" own-row", ""]
    assert page.count('<span class="badge own">yours</span>') == 1


def test_two_ticked_rows_are_compared_and_paper_rows_cannot_be(
    client: Client, public_dataset, researcher
) -> None:
    a = scored(researcher, public_dataset, model_name="first")
    b = scored(researcher, public_dataset, model_name="second", parameters_billions=13)
    paper = SubmissionFactory(kind="reported", owner=None, model_name="paper-row", recall=0.7)
    board = client.get("/leaderboard/").content.decode()
    # A plain GET form to the compare page: it works without script.
    assert (
        'form id="compare-picks" class="compare-picks" method="get" action="/leaderboard/compare/"'
        in board
    )
    assert f'name="pick" value="{a.pk}" form="compare-picks"' in board
    assert f'name="pick" value="{paper.pk}"' not in board
    assert "have no per-question answers, so they cannot be compared" in board

    response = client.get(f"/leaderboard/compare/?pick={a.pk}&pick={b.pk}&rules=2025-05")
    assert response.status_code == 200
    assert response.context["comparison"].metrics["recall"].n == 12
    one = client.get(f"/leaderboard/compare/?pick={a.pk}")
    assert one.status_code == 400 and "Tick two rows of the board to compare them, not 1" in (
        one.content.decode()
    )
    with_paper = client.get(f"/leaderboard/compare/?pick={a.pk}&pick={paper.pk}")
    assert with_paper.status_code == 400
    assert "paper-row is reported in the paper" in with_paper.content.decode()


def test_columns_are_hidden_and_shown_through_the_url(client: Client) -> None:
    SubmissionFactory(model_name="m")
    everything = client.get("/leaderboard/").content.decode()
    for header in ("Precision", "QNPC", "Scored on", "Input"):
        assert f">{header}" in everything
    some = client.get("/leaderboard/?cols=1&col=recall&col=scored_on").content.decode()
    head = re.search(r"<thead>.*?</thead>", some, re.S).group(0)
    assert ">Recall" in head and ">Scored on<" in head and ">Model" in head
    assert ">Precision" not in head and ">QNPC" not in head and ">Size" not in head
    # The checkboxes say what is shown, and the sort links keep the choice.
    assert '<input type="checkbox" name="col" value="recall" checked>' in some
    assert '<input type="checkbox" name="col" value="precision">' in some
    assert re.search(r'href="\?[^"]*cols=1&amp;col=recall&amp;col=scored_on[^"]*sort=', some)
    # The vision board offers no precision column.
    vision = client.get("/leaderboard/vision/").content.decode()
    assert 'name="col" value="precision"' not in vision


def test_each_row_says_on_which_tables_it_was_computed(client: Client, dataset, researcher) -> None:
    scored(researcher, dataset, model_name="computed-here")
    SubmissionFactory(kind="reported", owner=None, model_name="paper-real", recall=0.5)
    SubmissionFactory(
        kind="reported",
        owner=None,
        model_name="paper-synthetic",
        recall=0.5,
        data_scope="synthetic",
    )
    real = client.get("/leaderboard/").content.decode()
    assert "12 questions on 4 tables" in real and "no release" in real
    assert "The paper's real tables" in real
    assert "computed on the paper's own real tables" in real
    synthetic = client.get("/leaderboard/?data_scope=synthetic").content.decode()
    assert "The paper's synthetic tables" in synthetic and "computed-here" not in synthetic
    # The exports say it too.
    export = client.get("/leaderboard/text/export.json").json()
    computed = next(r for r in export if r["model"] == "computed-here")
    assert (computed["n_questions"], computed["tables"], computed["release"]) == (12, 4, None)


def test_demo_rows_never_share_a_board_with_real_or_synthetic_rows(client: Client) -> None:
    SubmissionFactory(model_name="demo-oracle", data_scope="demo", recall=1.0)
    SubmissionFactory(kind="reported", owner=None, model_name="gpt-4o", data_scope="synthetic")
    SubmissionFactory(model_name="a-real-model")
    for scope in ("real", "synthetic"):
        page = client.get(f"/leaderboard/?data_scope={scope}").content.decode()
        assert "demo-oracle" not in page
    demo = client.get("/leaderboard/?data_scope=demo").content.decode()
    assert "demo-oracle" in demo and "gpt-4o" not in demo and "a-real-model" not in demo
    assert "made up to try the platform" in demo
    api = client.get("/api/leaderboard/?data_scope=synthetic").json()
    assert [r["model"] for r in api["results"]] == ["gpt-4o"]


def test_the_board_charts_recall_against_size_with_the_paper_rows_apart(client: Client) -> None:
    SubmissionFactory(model_name="small", parameters_billions=7, recall=0.3)
    SubmissionFactory(model_name="closed", parameters_billions=None, weights="closed", recall=0.6)
    SubmissionFactory(
        kind="reported", owner=None, model_name="paper-70b", parameters_billions=70, recall=0.5
    )
    page = client.get("/leaderboard/").content.decode()
    data = json.loads(
        re.search(r'id="size-chart-data" type="application/json">(.*?)</script>', page).group(1)
    )
    assert data == {
        "computed": [{"x": 7.0, "y": 0.3, "name": "small"}],
        "reported": [{"x": 70.0, "y": 0.5, "name": "paper-70b"}],
        "unplotted": ["closed"],
    }
    # The text alternative: the same points in a table, and what is not plotted.
    table = re.search(r'id="size-chart-table">.*?</table>', page, re.S).group(0)
    assert "small" in table and "reported in the paper" in table
    assert "Not plotted, size unknown: closed." in page
    assert '<canvas id="size-chart"></canvas>' in page


def test_the_board_stays_at_constant_queries_with_everything_on(client: Client) -> None:
    ada = UserFactory(role="researcher")
    client.force_login(ada)

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            url = "/leaderboard/?cols=1&col=recall&col=scored_on&col=size"
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    SubmissionFactory.create_batch(3, owner=ada)
    few = queries()
    SubmissionFactory.create_batch(40)
    SubmissionFactory.create_batch(5, kind="reported", owner=None)
    assert queries() == few


def test_a_submission_made_by_upload_records_its_tables(dataset, researcher) -> None:
    submission = scored(researcher, dataset, split="test")
    assert submission.question_set_tables == 1  # the test split holds one table here


def test_comparing_a_vision_row_with_a_text_row_says_recall_differs(
    client: Client, dataset, researcher
) -> None:
    text = scored(researcher, dataset, model_name="reader")
    vision = scored(researcher, dataset, model_name="seer", modality="vision", table_format="image")
    page = client.get(f"/leaderboard/compare/?a={text.pk}&b={vision.pk}").content.decode()
    warning = re.search(r'<p class="notice" id="modality-warning">(.*?)</p>', page, re.S)
    assert warning is not None
    assert "reader is a text row and seer a vision row" in " ".join(warning.group(1).split())
    assert "a gold value counts when it occurs anywhere in the answer" in warning.group(1)
    same = scored(researcher, dataset, model_name="reader-2")
    page = client.get(f"/leaderboard/compare/?a={text.pk}&b={same.pk}").content.decode()
    assert 'id="modality-warning"' not in page


def test_the_pickers_list_the_demo_rows_only_to_compare_demo_rows(client: Client) -> None:
    SubmissionFactory(model_name="real-row")
    SubmissionFactory(model_name="synthetic-row", data_scope="synthetic")
    demos = [SubmissionFactory(model_name=f"demo-row-{n}", data_scope="demo") for n in (1, 2)]

    def offered(url: str) -> list[str]:
        page = client.get(url).content.decode()
        select = page.split('<select name="a"')[1].split("</select>")[0]
        return re.findall(r"#\d+ ([\w-]+) \(", select)

    assert offered("/leaderboard/compare/") == ["real-row", "synthetic-row"]
    # Two demo rows ticked on the demo board: the pickers offer the demo rows.
    ticked = f"/leaderboard/compare/?pick={demos[0].pk}&pick={demos[1].pk}"
    assert offered(ticked) == ["demo-row-1", "demo-row-2"]
