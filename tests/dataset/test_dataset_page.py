from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from dataset.models import Question
from tests.factories import SIMPLE_CSV, CollectionFactory, QuestionFactory, TableFactory

pytestmark = pytest.mark.django_db


def get(client: Client, query: str = "", **headers: str):
    return client.get(f"/dataset/{query}", headers=headers)


def listed(response) -> list[str]:
    return [t.id for t in response.context["page"].object_list]


def test_it_lists_tables_with_their_question_counts(client: Client) -> None:
    table = TableFactory(id="psa--1--1")
    QuestionFactory(table=table, origin=Question.Origin.HUMAN)
    QuestionFactory(table=table, id="psa--1--1--A0", origin=Question.Origin.MODEL)
    response = get(client)
    assert response.status_code == 200
    row = response.context["page"].object_list[0]
    assert (row.id, row.question_count, row.human_question_count) == ("psa--1--1", 2, 1)
    assert b'href="/tables/psa--1--1/"' in response.content


def test_the_source_column_names_each_table_s_collection(client: Client) -> None:
    CollectionFactory(code="qnpc-2024", name="QNPC Statistical Abstract 2024")
    TableFactory(id="qnpc-2024--1--1", source="qnpc-2024")
    TableFactory(id="psa--1--1")  # a release source, its collection row missing
    TableFactory(id="synthetic--a_1", source="synthetic")
    cells = [
        re.sub(r"\s+", " ", cell).strip()
        for cell in re.findall(r"<td>([^<]*)</td>", get(client).content.decode())
    ]
    assert cells == ["QNPC", "QNPC Statistical Abstract 2024", "Synthetic"]


def test_it_filters_by_source_split_and_table_property(client: Client) -> None:
    TableFactory(id="psa--1--1", split="test")
    TableFactory(id="pak--1--1", source="pak", table_properties={"row_group_label": True})
    assert listed(get(client, "?source=pak")) == ["pak--1--1"]
    assert listed(get(client, "?split=test")) == ["psa--1--1"]
    assert listed(get(client, "?table_property=row_group_label")) == ["pak--1--1"]
    assert listed(get(client, "?table_property=multi_level_column")) == ["psa--1--1"]


def test_it_filters_on_having_a_human_written_question(client: Client) -> None:
    covered = TableFactory(id="psa--1--1")
    QuestionFactory(table=covered)
    uncovered = TableFactory(id="psa--1--2")
    QuestionFactory(table=uncovered, id="psa--1--2--A0", origin=Question.Origin.MODEL)
    assert listed(get(client, "?has_human_question=yes")) == ["psa--1--1"]
    assert listed(get(client, "?has_human_question=no")) == ["psa--1--2"]


def test_text_search_looks_in_ids_cells_and_questions(client: Client) -> None:
    TableFactory(id="psa--1--1", canonical_csv=SIMPLE_CSV)
    other = TableFactory(id="arxiv--2--2", canonical_csv="Model,Score\nResNet,0.9\n")
    QuestionFactory(table=other, text="Which model scores best on ImageNet?")
    assert listed(get(client, "?q=south")) == ["psa--1--1"]
    assert listed(get(client, "?q=imagenet")) == ["arxiv--2--2"]
    assert listed(get(client, "?q=arxiv--2")) == ["arxiv--2--2"]


def test_it_paginates_fifty_tables_a_page(client: Client) -> None:
    TableFactory.create_batch(51)
    first = get(client)
    assert len(first.context["page"].object_list) == 50
    assert b"page 1 of 2" in first.content
    assert len(get(client, "?page=2").context["page"].object_list) == 1


def test_an_htmx_request_gets_only_the_results_fragment(client: Client) -> None:
    TableFactory(id="psa--1--1")
    response = get(client, "?source=psa", HX_Request="true")
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"psa--1--1" in response.content


def test_bad_filters_are_refused_with_the_reason(client: Client) -> None:
    response = get(client, "?source=nasa&table_property=wobbly&page=0")
    assert response.status_code == 400
    text = response.content.decode()
    assert "Select a valid choice. nasa is not one of the available choices." in text
    assert "wobbly is not one of the available choices" in text
    assert "greater than or equal to 1" in text


def test_the_query_count_does_not_grow_with_the_data(client: Client) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert get(client, "?has_human_question=yes&q=a").status_code == 200
        return len(ctx.captured_queries)

    for table in TableFactory.create_batch(3):
        QuestionFactory(table=table)
    small = queries()
    for table in TableFactory.create_batch(60):
        QuestionFactory.create_batch(3, table=table)
    assert queries() == small <= 10


def test_no_results_says_so(client: Client) -> None:
    TableFactory(id="psa--1--1")
    response = get(client, "?q=zzz-nothing", HX_Request="true")
    assert b"0 tables" in response.content
    assert b"No table matches these filters." in response.content


def test_a_page_past_the_end_shows_the_last_page(client: Client) -> None:
    TableFactory.create_batch(51)
    response = get(client, "?page=7")
    assert response.context["page"].number == 2
    assert len(response.context["page"].object_list) == 1
    # Past any offset a database accepts (SQLite: 64 bits).
    huge = get(client, f"?page={10**30}")
    assert huge.status_code == 200 and huge.context["page"].number == 2


def test_each_search_hit_shows_the_text_that_matched(client: Client) -> None:
    TableFactory(id="psa--1--1", canonical_csv=SIMPLE_CSV)
    other = TableFactory(id="arxiv--2--2", canonical_csv="Model,Score\nResNet,0.9\n")
    QuestionFactory(table=other, text="Which model scores best on ImageNet?")
    page = get(client, "?q=imagenet").content.decode()
    assert "question</span>: Which model scores best on <mark>ImageNet</mark>?" in page
    page = get(client, "?q=south").content.decode()
    assert "cell</span>: " in page and "<mark>South</mark>" in page
    page = get(client, "?q=arxiv--2").content.decode()
    assert "table id</span>: <mark>arxiv--2</mark>--2" in page


def test_search_hits_are_escaped(client: Client) -> None:
    TableFactory(id="psa--1--1", canonical_csv="Region,Value\n<img src=x onerror=alert(1)>,1\n")
    page = get(client, "?q=onerror").content.decode()
    assert "<img src=x" not in page
    assert "&lt;img src=x <mark>onerror</mark>=alert(1)&gt; | 1" in page


def test_a_private_question_is_never_shown_as_a_hit(client: Client) -> None:
    table = TableFactory(id="psa--1--1")
    QuestionFactory(
        table=table, id="psa--1--1--A0", origin="model", status="unverified", text="Secret plan?"
    )
    assert listed(get(client, "?q=secret")) == []


def test_pages_are_numbered(client: Client) -> None:
    TableFactory.create_batch(50 * 12 + 1)
    page = get(client, "?page=6&source=psa").content.decode()
    numbers = page.split('class="page-numbers"')[1].split("</ol>")[0]
    assert 'aria-current="page" href="?source=psa&page=6"' in numbers
    for n in (1, 4, 5, 7, 8, 13):
        assert f'page={n}"' in numbers
    assert 'page=2"' not in numbers and "…" in numbers
