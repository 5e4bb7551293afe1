from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from dataset.models import Question
from tests.factories import QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_it_renders_the_table_with_merged_headers(client: Client) -> None:
    TableFactory(id="psa--1--1")
    html = client.get("/tables/psa--1--1/").content.decode()
    assert '<th scope="colgroup" colspan="2" data-row="0" data-col="1">2019</th>' in html
    assert (
        '<th scope="col" rowspan="2" data-row="0" data-col="0" class="hct-corner">Region</th>'
        in html
    )


def test_it_shows_the_table_properties_with_definitions(client: Client) -> None:
    TableFactory(id="psa--1--1")
    html = client.get("/tables/psa--1--1/").content.decode()
    assert '<li class="property on">' in html
    assert "Multi-level columns" in html
    assert "Every branch of the column-header tree reaches the same depth." in html


def test_it_lists_questions_in_natural_order_with_gold_answers(client: Client) -> None:
    table = TableFactory(id="psa--1--1")
    for n in (10, 2):
        QuestionFactory(
            table=table, id=f"psa--1--1--M{n}", text=f"Question {n}?", gold_answer=f"{{g{n}}}"
        )
    html = client.get("/tables/psa--1--1/").content.decode()
    assert html.index("Question 2?") < html.index("Question 10?")
    assert "{g2}" in html and "{g10}" in html


@pytest.mark.parametrize("role", [None, "annotator", "researcher", "adjudicator"])
def test_test_split_gold_answers_are_hidden(client: Client, role: str | None) -> None:
    QuestionFactory(table=TableFactory(id="psa--1--1", split="test"), gold_answer="{secret}")
    if role:
        client.force_login(UserFactory(role=role))
    html = client.get("/tables/psa--1--1/").content.decode()
    assert "secret" not in html
    assert "hidden (test split)" in html


def test_admins_see_test_split_gold_answers(client: Client) -> None:
    QuestionFactory(table=TableFactory(id="psa--1--1", split="test"), gold_answer="{secret}")
    client.force_login(UserFactory(role="admin"))
    assert "{secret}" in client.get("/tables/psa--1--1/").content.decode()


def test_other_formats_render_in_place_and_download(client: Client) -> None:
    TableFactory(id="psa--1--1")
    fragment = client.get("/tables/psa--1--1/?format=markdown", headers={"HX-Request": "true"})
    assert b"<html" not in fragment.content
    assert b"| Region | 2019 - Male |" in fragment.content
    download = client.get("/tables/psa--1--1/download/json/")
    assert download["Content-Type"] == "application/json; charset=utf-8"
    assert download["Content-Disposition"] == 'attachment; filename="psa--1--1.json"'
    assert b'"2020 - Female": "4"' in download.content


def test_bad_format_and_unknown_table_are_refused(client: Client) -> None:
    TableFactory(id="psa--1--1")
    bad = client.get("/tables/psa--1--1/?format=latex")
    assert bad.status_code == 400
    assert b"latex is not one of the available choices" in bad.content
    assert client.get("/tables/psa--1--1/download/latex/").status_code == 400
    assert client.get("/tables/psa--404--1/").status_code == 404


def test_the_query_count_does_not_grow_with_questions(client: Client) -> None:
    table = TableFactory(id="psa--1--1", split="test")
    client.force_login(UserFactory(role="annotator"))

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/tables/psa--1--1/").status_code == 200
        return len(ctx.captured_queries)

    QuestionFactory(table=table)
    few = queries()
    QuestionFactory.create_batch(20, table=table, origin=Question.Origin.MODEL)
    assert queries() == few <= 10


def test_a_table_image_is_shown_and_served(client: Client, settings, tmp_path) -> None:
    import io

    from django.core.files.base import ContentFile
    from PIL import Image

    settings.MEDIA_ROOT = tmp_path
    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), "white").save(buffer, format="PNG")
    table = TableFactory(id="psa--1--1")
    table.image.save("psa_1_1.png", ContentFile(buffer.getvalue()))
    html = client.get("/tables/psa--1--1/").content.decode()
    assert f'<img src="{table.image.url}" alt="Source image of table psa--1--1">' in html
    served = client.get(table.image.url)
    assert served.status_code == 200
    assert b"".join(served.streaming_content).startswith(b"\x89PNG")
