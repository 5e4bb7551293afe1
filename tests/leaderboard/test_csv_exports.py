"""Formula injection (issue 10, item 10): no CSV the platform exports starts a formula in a
spreadsheet, and the JSON exports stay exact."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from leaderboard import services
from plumbing.csv_export import escape_cell
from tests.factories import SubmissionFactory, TableFactory
from tests.leaderboard.conftest import upload

pytestmark = pytest.mark.django_db

ATTACK = "=cmd|' /C calc'!A0"


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (ATTACK, "'" + ATTACK),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        # Plain numbers and a lone dash cannot run; a table's -5 must stay a number.
        ("-5", "-5"),
        ("+1,234.50", "+1,234.50"),
        ("-1.5e3", "-1.5e3"),
        ("-", "-"),
        ("a=b", "a=b"),
        ("", ""),
        (0.25, 0.25),
        (None, None),
    ],
)
def test_cells_that_start_a_formula_are_escaped(value: object, written: object) -> None:
    assert escape_cell(value) == written


def rows(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_board_csv_escapes_a_formula_model_name_and_the_json_keeps_it(
    client: Client,
) -> None:
    SubmissionFactory(model_name=ATTACK, organisation="@evil")
    exported = rows(client.get("/leaderboard/text/export.csv"))
    assert (exported[0]["model"], exported[0]["organisation"]) == ("'" + ATTACK, "'@evil")
    body = client.get("/leaderboard/text/export.json").json()
    assert (body[0]["model"], body[0]["organisation"]) == (ATTACK, "@evil")


def test_per_question_results_escape_formula_answers(client: Client, dataset, researcher) -> None:
    predictions = {q: "-5" for q in dataset} | {"psa--1--1--M0": '=HYPERLINK("http://x")'}
    data = services.SubmissionInput(
        model_name="m",
        weights="closed",
        modality="text",
        table_format="paper",
        split="all",
        data_scope="real",
    )
    submission = services.submission_create(
        owner=researcher, data=data, predictions=upload(predictions)
    )
    services.submission_score(submission_id=submission.pk)
    client.force_login(researcher)
    url = f"/leaderboard/submissions/{submission.pk}/results"
    by_id = {r["question_id"]: r["prediction"] for r in rows(client.get(url + ".csv"))}
    assert by_id["psa--1--1--M0"] == '\'=HYPERLINK("http://x")'
    assert by_id["psa--1--1--M1"] == "-5"
    exact = {r["question_id"]: r["prediction"] for r in client.get(url + ".json").json()}
    assert exact["psa--1--1--M0"] == '=HYPERLINK("http://x")'


def test_a_table_csv_download_escapes_formula_cells(client: Client) -> None:
    table = TableFactory(
        id="psa--7--7",
        canonical_csv='Year,Value\n2020,"=HYPERLINK(""http://x"")"\n2021,-5\n2022,-\n',
    )
    body = client.get(f"/tables/{table.id}/download/csv/").content.decode()
    assert list(csv.reader(io.StringIO(body))) == [
        ["Year", "Value"],
        ["2020", '\'=HYPERLINK("http://x")'],
        ["2021", "-5"],
        ["2022", "-"],
    ]
