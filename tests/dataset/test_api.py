from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.factories import QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables() -> None:
    train = TableFactory(id="psa--1--1", split="train")
    QuestionFactory(table=train, id="psa--1--1--M0", gold_answer="{open gold}")
    test = TableFactory(
        id="pak--1--1", source="pak", split="test", table_properties={"row_group_label": True}
    )
    QuestionFactory(table=test, id="pak--1--1--M0", gold_answer="{hidden gold}")


def token_header(role: str) -> dict[str, str]:
    user = UserFactory(role=role)
    return {"Authorization": f"Token {Token.objects.create(user=user).key}"}


def test_it_lists_tables_with_filters(client: Client, tables: None) -> None:
    body = client.get("/api/tables/?source=pak").json()
    assert body["count"] == 1
    [row] = body["results"]
    assert row["id"] == "pak--1--1" and row["question_count"] == 1
    assert row["url"] == "http://testserver/tables/pak--1--1/"
    assert client.get("/api/tables/?table_property=row_group_label").json()["count"] == 1


def test_it_returns_a_table_with_its_questions(client: Client, tables: None) -> None:
    body = client.get("/api/tables/psa--1--1/").json()
    assert body["canonical_csv"].startswith("Region,2019,__")
    assert body["table_properties"]["multi_level_column"] is True
    assert [q["gold_answer"] for q in body["questions"]] == ["{open gold}"]


def test_test_split_gold_answers_are_null(client: Client, tables: None) -> None:
    detail = client.get("/api/tables/pak--1--1/").json()
    assert detail["questions"][0]["gold_answer"] is None
    listed = client.get("/api/questions/?split=test").json()["results"]
    assert [q["gold_answer"] for q in listed] == [None]
    one = client.get("/api/questions/pak--1--1--M0/", headers=token_header("researcher")).json()
    assert one["gold_answer"] is None and one["split"] == "test"


def test_an_admin_token_sees_test_split_gold(client: Client, tables: None) -> None:
    one = client.get("/api/questions/pak--1--1--M0/", headers=token_header("admin")).json()
    assert one["gold_answer"] == "{hidden gold}"


def test_a_bad_token_is_refused(client: Client, tables: None) -> None:
    response = client.get("/api/tables/", headers={"Authorization": "Token not-a-token"})
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_tables_render_in_each_format(client: Client, tables: None) -> None:
    body = client.get("/api/tables/psa--1--1/formats/markdown/").json()
    assert body["content"].startswith("| Region | 2019 - Male |")
    bad = client.get("/api/tables/psa--1--1/formats/latex/")
    assert bad.status_code == 400
    assert "Unknown format 'latex'" in bad.json()["format"][0]


def test_bad_filters_are_refused_with_the_field(client: Client) -> None:
    response = client.get("/api/questions/?origin=alien&split=dev")
    assert response.status_code == 400
    body = response.json()
    assert "alien is not one of the available choices" in body["origin"][0]
    assert "dev is not one of the available choices" in body["split"][0]


def test_unknown_ids_are_404(client: Client) -> None:
    assert client.get("/api/tables/psa--0--0/").status_code == 404
    assert client.get("/api/questions/psa--0--0--M0/").status_code == 404


def test_the_api_is_read_only(client: Client, tables: None) -> None:
    client.force_login(UserFactory(role="admin"))
    assert client.post("/api/tables/", {"id": "x"}).status_code == 405
    assert client.delete("/api/questions/psa--1--1--M0/").status_code == 405


def test_the_openapi_schema_and_docs_page(client: Client) -> None:
    schema = client.get("/api/schema/?format=json").json()
    assert schema["info"]["title"] == "HCT-QA platform API"
    assert {"/api/tables/", "/api/questions/{question_id}/", "/api/auth/token/"} <= set(
        schema["paths"]
    )
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs
    # Served from the sidecar package, not a CDN: the docs work offline.
    assert "cdn.jsdelivr" not in docs and "/static/drf_spectacular_sidecar/" in docs


def test_a_token_can_be_obtained_with_username_and_password(client: Client) -> None:
    UserFactory(username="ada")
    response = client.post("/api/auth/token/", {"username": "ada", "password": "a-Long-password-1"})
    assert response.status_code == 200 and len(response.json()["token"]) == 40
    wrong = client.post("/api/auth/token/", {"username": "ada", "password": "nope"})
    assert wrong.status_code == 400


def test_pages_past_the_end_are_404_with_a_reason(client: Client, tables: None) -> None:
    response = client.get("/api/tables/?page=9")
    assert response.status_code == 404
    assert response.json() == {"detail": "Page 9 is past the last page (1)"}
    bad = client.get("/api/tables/?page=zero")
    assert bad.status_code == 400
    assert bad.json() == {"page": ["Enter a whole number."]}
    # Past any offset a database accepts: still a 404 with the reason, not a server error.
    assert client.get("/api/tables/?page_size=ten").json() == {
        "page_size": ["a whole number from 1 to 500, not 'ten'"]
    }
    assert client.get("/api/tables/?page_size=0").status_code == 400
    assert client.get("/api/tables/?page_size=100000").status_code == 200  # capped at 500
    huge = client.get(f"/api/tables/?page={10**30}")
    assert huge.status_code == 404
    assert huge.json() == {"detail": f"Page {10**30} is past the last page (1)"}


def test_a_list_page_is_one_query(client: Client, tables: None, django_assert_num_queries) -> None:
    with django_assert_num_queries(1):
        body = client.get("/api/tables/?page_size=1&page=2").json()
    assert body["count"] == 2 and body["previous"] and not body["next"]
