"""A model page's recall per table property and per query property beside its board's
median, and the regression's coefficients with their intervals: charts with the same
figures in tables."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from leaderboard.models import PropertyRegression
from tests.factories import SubmissionFactory
from tests.leaderboard.test_board_pages import property_tables, scored

pytestmark = pytest.mark.django_db


def groups(**recall: float | tuple[float, bool]) -> dict:
    """Breakdowns with these table-property groups (a tuple: recall, withheld)."""
    rows = []
    for key, value in recall.items():
        value, withheld = value if isinstance(value, tuple) else (value, False)
        rows.append(
            {"key": key, "label": key.title(), "recall": value, "n": 10, "withheld": withheld}
        )
    return {"table_properties": rows, "query_properties": [], "templates": [], "margin": 0}


def chart_data(page: str, element_id: str) -> dict:
    found = re.search(rf'id="{element_id}" type="application/json">(.*?)</script>', page)
    assert found, element_id
    return json.loads(found.group(1))


def test_a_model_page_sets_each_group_beside_its_boards_median(client: Client) -> None:
    shown = SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.2, wide=0.9))
    SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.4, wide=(0.1, True)))
    SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.6))
    # Another board (the test split, synthetic tables, private): not in the median.
    SubmissionFactory(recall=0.5, split="test", breakdowns=groups(nested=0.99))
    SubmissionFactory(recall=0.5, data_scope="synthetic", breakdowns=groups(nested=0.99))
    SubmissionFactory(recall=0.5, visibility="private", breakdowns=groups(nested=0.99))
    page = client.get(shown.get_absolute_url()).content.decode()
    data = chart_data(page, "by-table-property-data")
    # nested: the median of 0.2, 0.4, 0.6; wide: the other row's group is withheld.
    assert data == {"labels": ["Nested", "Wide"], "recall": [0.2, 0.9], "median": [0.4, 0.9]}
    table = re.search(r'id="by-table-property-table">.*?</table>', page, re.S).group(0)
    assert "Board median" in table and "0.400" in table and "of 3 rows" in table
    assert "of 1 row<" in table
    assert '<canvas id="by-table-property-chart"></canvas>' in page
    assert "chart.umd.min.js" in page and "js/model_page.js" in page


def test_a_submission_on_no_public_board_has_no_median(client: Client) -> None:
    mine = SubmissionFactory(recall=0.5, split="validation", breakdowns=groups(nested=0.2))
    client.force_login(mine.owner)
    page = client.get(mine.get_absolute_url()).content.decode()
    assert "Recall by table property" in page and "Board median" not in page
    assert "model_page.js" not in page


def test_the_medians_follow_the_board_as_it_changes(client: Client) -> None:
    shown = SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.2))
    url = shown.get_absolute_url()
    assert chart_data(client.get(url).content.decode(), "by-table-property-data")["median"] == [0.2]
    SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.6))
    assert chart_data(client.get(url).content.decode(), "by-table-property-data")["median"] == [0.4]


def test_the_medians_follow_a_row_hidden_and_another_shown(client: Client) -> None:
    """The board keeps its size and its newest row, yet its rows changed."""
    from leaderboard.services import submission_visibility_set

    later = SubmissionFactory(recall=0.5, visibility="private", breakdowns=groups(nested=0.8))
    shown = SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.2))
    hidden = SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.6))
    SubmissionFactory(recall=0.5, breakdowns=groups(nested=0.9))
    url = shown.get_absolute_url()
    assert chart_data(client.get(url).content.decode(), "by-table-property-data")["median"] == [0.6]
    submission_visibility_set(submission=hidden, user=hidden.owner, visibility="private")
    submission_visibility_set(submission=later, user=later.owner, visibility="public")
    assert chart_data(client.get(url).content.decode(), "by-table-property-data")["median"] == [0.8]


def test_the_regression_page_charts_each_coefficient_with_its_interval(
    client: Client, researcher
) -> None:
    PropertyRegression.objects.create(
        computed_at="2026-11-23T10:00:00Z",
        submissions=4,
        tables=30,
        r_squared=0.2,
        intercept=0.5,
        coefficients=[
            {
                "code": "x",
                "label": "Row nesting",
                "coef": -0.1,
                "std_error": 0.02,
                "p_value": 0.001,
                "tables_with": 12,
            },
        ],  # fmt: skip
    )
    page = client.get("/leaderboard/regression/").content.decode()
    data = chart_data(page, "coefficients-data")
    assert data == {"labels": ["Row nesting"], "coef": [-0.1], "interval": [[-0.1392, -0.0608]]}
    assert "[-0.139, -0.061]" in page and '<canvas id="coefficients-chart"></canvas>' in page


def test_the_regression_intervals_come_from_a_real_fit(client: Client, researcher) -> None:
    from leaderboard import services

    scored(researcher, property_tables())
    services.property_regression_refresh()
    page = client.get("/leaderboard/regression/").content.decode()
    data = chart_data(page, "coefficients-data")
    assert data["labels"] == ["Row group label"]
    (low, high), coef = data["interval"][0], data["coef"][0]
    assert low <= coef <= high
