from __future__ import annotations

import threading

import pytest
from django.core.exceptions import PermissionDenied
from django.db import close_old_connections
from django.test import Client

from annotation import selectors, services
from annotation.models import AnnotationSource, PropertyAnnotation
from dataset import services as dataset_services
from dataset.models import Table
from hctqa.core import taxonomy
from plumbing.errors import ApplicationError, ConflictError
from tests.factories import CollectionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

NESTED = {
    "multi_level_column": True,
    "balanced_multi_level_column": True,
    "symmetric_multi_level_column": True,
}


@pytest.fixture
def annotator():
    return UserFactory(username="ann", role="annotator")


def save(user, table, properties=NESTED, base_version=0, **kw):
    return services.property_annotation_save(
        annotator=user, table=table, properties=properties, base_version=base_version, **kw
    )


def draft(user, table, properties=NESTED, base_version=0, client_ms=1000, **kw):
    return services.property_draft_save(
        annotator=user,
        table=table,
        properties=properties,
        base_version=base_version,
        client_ms=client_ms,
        **kw,
    )


# --- The queue -----------------------------------------------------------------------------


def test_tables_with_the_fewest_annotations_come_first(annotator) -> None:
    busy, quiet = TableFactory(id="psa--1--1"), TableFactory(id="psa--1--2")
    save(UserFactory(role="annotator"), busy)
    assert selectors.property_queue_next(annotator=annotator) == quiet
    save(annotator, quiet)
    assert selectors.property_queue_next(annotator=annotator) == busy
    save(annotator, busy)
    assert selectors.property_queue_next(annotator=annotator) is None


def test_another_annotators_draft_in_progress_counts(annotator) -> None:
    a, b = TableFactory(id="psa--1--1"), TableFactory(id="psa--1--2")
    draft(UserFactory(role="annotator"), a)
    assert selectors.property_queue_next(annotator=annotator) == b


def test_synthetic_tables_are_not_in_the_queue(annotator) -> None:
    TableFactory(id="synthetic--x", source="synthetic")
    assert selectors.property_queue_next(annotator=annotator) is None


def test_a_skipped_table_goes_to_the_back(annotator) -> None:
    first, second = TableFactory(id="psa--1--1"), TableFactory(id="psa--1--2")
    services.annotation_skip(annotator=annotator, table=first, tool="properties")
    assert selectors.property_queue_next(annotator=annotator) == second
    save(annotator, second)
    assert selectors.property_queue_next(annotator=annotator) == first


def test_skipping_drafted_tables_does_not_bounce_between_them(annotator) -> None:
    a, b = TableFactory(id="psa--1--1"), TableFactory(id="psa--1--2")
    fresh = TableFactory(id="psa--1--3")
    draft(annotator, a)
    services.annotation_skip(annotator=annotator, table=a, tool="properties")
    assert selectors.property_queue_next(annotator=annotator, after=a.id) == b
    draft(annotator, b)
    services.annotation_skip(annotator=annotator, table=b, tool="properties")
    assert selectors.property_queue_next(annotator=annotator, after=b.id) == fresh
    # Working on a skipped table again makes its draft the place to resume.
    draft(annotator, a, client_ms=2000)
    assert selectors.property_queue_next(annotator=annotator) == a


def test_an_unsaved_draft_is_resumed_first(annotator) -> None:
    TableFactory(id="psa--1--1")
    later = TableFactory(id="psa--1--9")
    draft(annotator, later)
    assert selectors.property_queue_next(annotator=annotator) == later
    work = selectors.property_work(annotator=annotator, table=later)
    assert (
        work.has_draft
        and work.properties["balanced_multi_level_column"] is True
        and work.version == 0
    )


# --- Drafts, saves and races ---------------------------------------------------------------


def test_saving_bumps_the_version_and_clears_the_draft(annotator) -> None:
    table = TableFactory()
    draft(annotator, table, elapsed_ms=40_000)
    row = save(annotator, table, elapsed_ms=5_000)
    assert (row.version, row.draft, row.seconds_spent) == (1, None, 45)
    assert row.properties["symmetric_multi_level_column"] is True
    again = save(annotator, table, properties={"row_group_label": True}, base_version=1)
    assert again.version == 2 and taxonomy.selected(again.properties) == ["row_group_label"]


def test_a_draft_from_a_stale_tab_is_refused(annotator) -> None:
    table = TableFactory()
    save(annotator, table)  # tab A saves version 1
    with pytest.raises(ConflictError) as info:
        draft(annotator, table, base_version=0)  # tab B still thinks it is at version 0
    assert info.value.current["version"] == 1
    assert PropertyAnnotation.objects.get(annotator=annotator).draft is None


def test_a_draft_arriving_late_does_not_overwrite_a_newer_one(annotator) -> None:
    table = TableFactory()
    assert draft(annotator, table, properties={"row_group_label": True}, client_ms=2000).accepted
    assert not draft(
        annotator, table, properties={"split_header_cell": True}, client_ms=1000
    ).accepted
    assert (
        selectors.property_work(annotator=annotator, table=table).properties["row_group_label"]
        is True
    )


def test_a_stale_save_is_refused_but_a_retried_one_succeeds(annotator) -> None:
    table = TableFactory()
    save(annotator, table)
    # The same request again (its response was lost): nothing to do, no error.
    assert save(annotator, table, base_version=0).version == 1
    with pytest.raises(ConflictError, match="saved in another tab"):
        save(annotator, table, properties={"row_group_label": True}, base_version=0)
    assert (
        PropertyAnnotation.objects.get(annotator=annotator).properties["multi_level_column"] is True
    )


def test_contradictory_and_empty_sets_cannot_be_saved(annotator) -> None:
    table = TableFactory()
    with pytest.raises(
        ApplicationError, match="Multi-level columns: choose Symmetric or Asymmetric"
    ):
        save(
            annotator,
            table,
            properties={"multi_level_column": True, "balanced_multi_level_column": True},
        )
    with pytest.raises(
        ApplicationError, match="Standard relational table excludes every other property"
    ):
        save(
            annotator,
            table,
            properties={"standard_relational_table": True, "row_group_label": True},
        )
    with pytest.raises(ApplicationError, match="Choose at least one property"):
        save(annotator, table, properties={})
    with pytest.raises(ApplicationError, match="Unknown table property 'wavy'"):
        save(annotator, table, properties={"wavy": True})
    assert not PropertyAnnotation.objects.filter(annotator=annotator, version__gt=0).exists()


def test_time_spent_is_capped_per_request(annotator) -> None:
    table = TableFactory()
    draft(annotator, table, elapsed_ms=10 * 60 * 60 * 1000)  # a tab left open overnight
    assert PropertyAnnotation.objects.get(annotator=annotator).seconds_spent == 30 * 60


def test_only_annotators_annotate() -> None:
    with pytest.raises(PermissionDenied):
        save(UserFactory(role="researcher"), TableFactory())


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_saves_on_one_version_keep_exactly_one(annotator) -> None:
    table = TableFactory()
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def attempt(properties: dict) -> None:
        start.wait()
        try:
            save(annotator, table, properties=properties)
            outcomes.append("saved")
        except ConflictError:
            outcomes.append("conflict")
        finally:
            close_old_connections()

    threads = [
        threading.Thread(target=attempt, args=(p,)) for p in (NESTED, {"row_group_label": True})
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict", "saved"]
    assert PropertyAnnotation.objects.get(annotator=annotator).version == 1


def test_progress_counts_today_total_and_remaining(annotator) -> None:
    tables = [TableFactory() for _ in range(3)]
    save(annotator, tables[0])
    progress = selectors.property_progress(annotator=annotator)
    assert (progress.done_today, progress.done_total, progress.remaining) == (1, 1, 2)


# --- The release's annotation, agreement and resolution ------------------------------------


def test_the_release_counts_as_one_annotation_and_reimport_keeps_resolutions(release_by_id) -> None:
    record = release_by_id["pak--1--726"]
    dataset_services.release_import(tables=[record])
    release = PropertyAnnotation.objects.get(
        table_id="pak--1--726", source=AnnotationSource.RELEASE
    )
    assert release.version == 1 and release.properties == record.table_properties
    adjudicator = UserFactory(role="adjudicator")
    services.table_properties_resolve(
        adjudicator=adjudicator,
        table=Table.objects.get(),
        properties={"standard_relational_table": True},
    )
    assert Table.objects.get().table_properties["standard_relational_table"] is True
    summary = dataset_services.release_import(tables=[record])
    assert not summary.changed
    assert Table.objects.get().table_properties["standard_relational_table"] is True


def test_agreement_lists_disagreements_until_resolved(annotator) -> None:
    table = TableFactory(id="psa--1--1")
    PropertyAnnotation.objects.create(
        table=table,
        source="release",
        properties={**taxonomy.TABLE_PROPERTIES.empty(), **NESTED},
        version=1,
        saved_at="2026-01-01T00:00Z",
    )
    save(annotator, table, properties={**NESTED, "row_group_label": True})
    view = selectors.agreement_overview()
    assert [(d.table_id, d.properties) for d in view.open_disagreements] == [
        ("psa--1--1", ("row_group_label",))
    ]
    assert view.annotators == 1
    work = selectors.resolution_work(table_id="psa--1--1")
    assert set(work.by_coder) == {"release", "ann"} and work.majority["row_group_label"] is False
    services.table_properties_resolve(
        adjudicator=UserFactory(role="adjudicator"), table=table, properties=NESTED
    )
    view = selectors.agreement_overview()
    assert view.open_disagreements == [] and view.resolved == 1
    with pytest.raises(PermissionDenied):
        services.table_properties_resolve(adjudicator=annotator, table=table, properties=NESTED)


def test_an_adjudicator_does_not_resolve_a_table_they_annotated(client: Client) -> None:
    table = TableFactory(id="psa--1--1")
    judge = UserFactory(username="judge", role="adjudicator")
    save(judge, table, properties={**NESTED, "row_group_label": True})
    save(UserFactory(role="annotator"), table)
    with pytest.raises(PermissionDenied, match="You annotated this table yourself"):
        services.table_properties_resolve(adjudicator=judge, table=table, properties=NESTED)
    client.force_login(judge)
    page = client.get("/annotate/agreement/").content.decode()
    assert "You annotated it" in page and "/annotate/agreement/psa--1--1/" not in page
    refused = client.post(
        "/api/annotate/agreement/psa--1--1/resolve/",
        {"properties": NESTED},
        content_type="application/json",
    )
    assert refused.status_code == 403
    client.force_login(UserFactory(role="adjudicator"))
    assert "/annotate/agreement/psa--1--1/" in client.get("/annotate/agreement/").content.decode()


def test_time_spent_is_reported_per_annotator(client: Client, annotator) -> None:
    save(annotator, TableFactory(id="psa--1--1"), elapsed_ms=60_000)
    save(annotator, TableFactory(id="psa--1--2"), elapsed_ms=120_000)
    save(annotator, TableFactory(id="psa--1--3"), elapsed_ms=100_000)
    [row] = selectors.time_spent()
    assert (row.annotator, row.tables, row.median_seconds_per_table) == ("ann", 3, 100)
    assert row.questions == 0 and row.median_seconds_per_question is None
    client.force_login(UserFactory(role="adjudicator"))
    page = client.get("/annotate/agreement/").content.decode()
    assert "Time spent" in page and "100 s" in page
    api = client.get("/api/annotate/agreement/").json()
    assert api["time_spent"][0]["median_seconds_per_table"] == 100


def test_resolution_through_the_api(client: Client, annotator) -> None:
    table = TableFactory(id="psa--1--1")
    save(annotator, table, properties={**NESTED, "row_group_label": True})
    url = "/api/annotate/agreement/psa--1--1/resolve/"
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    client.force_login(UserFactory(role="adjudicator"))
    work = client.get(url).json()
    assert work["by_coder"]["ann"]["row_group_label"] is True and work["resolution"] is None
    contradictory = client.post(
        url, {"properties": {"multi_level_column": True}}, content_type="application/json"
    )
    assert contradictory.status_code == 400
    done = client.post(url, {"properties": NESTED}, content_type="application/json")
    assert done.status_code == 200 and done.json()["properties"]["multi_level_column"] is True
    assert client.get(url).json()["resolution"]["properties"]["row_group_label"] is False


# --- Pages and API -------------------------------------------------------------------------


def test_the_api_round_trip(client: Client, annotator) -> None:
    TableFactory(id="psa--1--1")
    client.force_login(annotator)
    nxt = client.get("/api/annotate/properties/next/").json()
    assert nxt == {"table": "psa--1--1", "url": "/annotate/properties/psa--1--1/"}
    work = client.get("/api/annotate/properties/psa--1--1/").json()
    assert work["version"] == 0 and 'colspan="2"' in work["table"]["html"]
    body = {
        "properties": {"multi_level_column": True},
        "base_version": 0,
        "client_ms": 5,
        "elapsed_ms": 100,
    }
    drafted = client.put(
        "/api/annotate/properties/psa--1--1/draft/", body, content_type="application/json"
    ).json()
    assert drafted["accepted"] is True
    assert [v["code"] for v in drafted["violations"]] == [
        "multi_level_column",
        "multi_level_column",
    ]
    bad = client.post(
        "/api/annotate/properties/psa--1--1/save/",
        {"properties": {"multi_level_column": True}, "base_version": 0},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "choose Balanced or Unbalanced" in bad.json()["detail"]
    saved = client.post(
        "/api/annotate/properties/psa--1--1/save/",
        {"properties": NESTED, "base_version": 0},
        content_type="application/json",
    )
    assert saved.status_code == 200 and saved.json()["version"] == 1
    stale = client.post(
        "/api/annotate/properties/psa--1--1/save/",
        {"properties": {"row_group_label": True}, "base_version": 0},
        content_type="application/json",
    )
    assert stale.status_code == 409 and stale.json()["current"]["version"] == 1
    assert client.get("/api/annotate/properties/next/").status_code == 204
    # A clock or counter no database column holds is refused, not a server error.
    huge = client.put(
        "/api/annotate/properties/psa--1--1/draft/",
        body | {"base_version": 1, "client_ms": 2**70},
        content_type="application/json",
    )
    assert huge.status_code == 400 and "client_ms" in huge.json()


def test_the_tool_page_and_its_plain_form(client: Client, annotator) -> None:
    TableFactory(id="psa--1--1")
    TableFactory(id="psa--1--2")
    client.force_login(annotator)
    assert client.get("/annotate/properties/")["Location"] == "/annotate/properties/psa--1--1/"
    page = client.get("/annotate/properties/psa--1--1/").content.decode()
    assert (
        'data-code="balanced_multi_level_column"' in page
        and '<kbd title="Shortcut">1</kbd>' in page
    )
    assert 'id="taxonomy"' in page and "js/annotate/properties.js" in page
    refused = client.post(
        "/annotate/properties/psa--1--1/", {"on": ["multi_level_column"], "base_version": "0"}
    )
    assert refused.status_code == 400 and b"choose Balanced or Unbalanced" in refused.content
    garbled = client.post(
        "/annotate/properties/psa--1--1/", {"on": list(NESTED), "base_version": "1e3"}
    )
    assert garbled.status_code == 400 and b"The form was damaged" in garbled.content
    done = client.post("/annotate/properties/psa--1--1/", {"on": list(NESTED), "base_version": "0"})
    assert done["Location"] == "/annotate/properties/psa--1--2/"
    assert PropertyAnnotation.objects.get(annotator=annotator).version == 1


def test_the_tools_are_for_their_roles(client: Client) -> None:
    TableFactory(id="psa--1--1")
    client.force_login(UserFactory(role="researcher"))
    assert client.get("/annotate/").status_code == 403
    assert client.get("/annotate/properties/psa--1--1/").status_code == 403
    assert client.get("/api/annotate/properties/next/").status_code == 403
    client.force_login(UserFactory(role="annotator"))
    assert client.get("/annotate/agreement/").status_code == 403
    client.force_login(UserFactory(role="adjudicator"))
    assert client.get("/annotate/agreement/").status_code == 200
    assert client.get("/api/annotate/agreement/").json()["open_disagreements"] == []


def test_the_tool_names_the_table_s_collection(annotator, client: Client) -> None:
    CollectionFactory(code="qnpc-2024", name="QNPC Statistical Abstract 2024")
    TableFactory(id="qnpc-2024--1--1", source="qnpc-2024")
    client.force_login(annotator)
    response = client.get("/annotate/properties/qnpc-2024--1--1/")
    assert '<span class="meta">QNPC Statistical Abstract 2024</span>' in response.content.decode()
