from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dataset.services import release_import
from hctqa.core.demo import demo_tables
from tests.factories import TableFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def dataset(release_by_id: dict) -> None:
    release_import(
        tables=[*demo_tables(), release_by_id["pak--1--726"], release_by_id["arxiv--4--4924"]]
    )


def test_a_reader_filters_the_dataset_and_opens_a_table(
    live_server, page: Page, dataset: None
) -> None:
    page.goto(f"{live_server.url}/dataset/")
    rows = page.locator("table.listing tbody tr")
    expect(rows).to_have_count(8)

    # Filters apply in place (htmx) and the address follows, so the view can be shared.
    page.select_option("#id_source", "pak")
    expect(rows).to_have_count(1)
    expect(page).to_have_url(re.compile(r"source=pak"))
    page.select_option("#id_source", "")
    page.fill("#id_q", "accidents")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("synthetic--demo-accidents")

    page.goto(f"{live_server.url}/dataset/?source=pak")
    page.get_by_role("link", name="pak--1--726").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("pak--1--726")


def test_merged_headers_render_over_their_children(live_server, page: Page, dataset: None) -> None:
    page.goto(f"{live_server.url}/tables/pak--1--726/")
    parent = page.locator('table.hct thead th[colspan="3"]')
    expect(parent).to_have_text("Infant Mortality Rates Per 1000 Population.")
    expect(page.locator('table.hct thead th[rowspan="2"]')).to_have_text("Year")
    expect(page.locator("table.hct th.hct-group")).to_have_text(["All Areas", "Urban", "Rural"])

    # The parent really spans its three children on screen.
    children = page.locator("table.hct thead tr:nth-child(2) th")
    expect(children).to_have_text(["Women", "Men", "Both Sexes"])
    top = parent.bounding_box()
    first, last = children.first.bounding_box(), children.last.bounding_box()
    assert abs(top["x"] - first["x"]) < 2
    assert abs((top["x"] + top["width"]) - (last["x"] + last["width"])) < 2
    assert top["y"] + top["height"] <= first["y"] + 1

    # Row nesting: the parent label spans its child rows.
    page.goto(f"{live_server.url}/tables/arxiv--4--4924/")
    nest = page.locator('table.hct tbody th[rowspan="4"]').first
    expect(nest).to_have_text("Exploration")


def test_other_formats_swap_in_place(live_server, page: Page, dataset: None) -> None:
    page.goto(f"{live_server.url}/tables/synthetic--demo-accidents/")
    page.locator("nav.tabs").get_by_role("link", name="Markdown").click()
    expect(page.locator("#table-view pre")).to_contain_text("| Severity | Event | 2019 - Q1 |")
    expect(page.get_by_role("heading", name="Questions (6)")).to_be_visible()


def test_only_the_ticked_properties_look_ticked(live_server, page: Page) -> None:
    TableFactory(
        id="psa--1--1", table_properties={"row_nesting": True, "balanced_row_nesting": True}
    )
    page.goto(f"{live_server.url}/tables/psa--1--1/")
    # Each property's label as (ticked, bold): "Row nesting" and "Balanced" under it are
    # ticked; its other children are not, and are not bold by inheritance either.
    labels = page.locator(".property-tree li.property").evaluate_all(
        """items => items.map(li => [li.classList.contains("on"),
            Number(getComputedStyle(li.querySelector(".property-label")).fontWeight) >= 600])"""
    )
    assert sum(on for on, _ in labels) == 2
    assert all(on == bold for on, bold in labels), labels
