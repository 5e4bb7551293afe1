from __future__ import annotations

import pytest

from hctqa.core import taxonomy
from hctqa.core.taxonomy import QUERY_PROPERTIES, TABLE_PROPERTIES


def test_there_are_23_table_properties_with_the_paper_hierarchy() -> None:
    assert len(TABLE_PROPERTIES.properties) == 23
    roots = [p.code for p in TABLE_PROPERTIES.roots()]
    assert roots == [
        "standard_relational_table",
        "multi_level_column",
        "row_nesting",
        "column_aggregation",
        "row_aggregation",
        "row_group_label",
        "split_header_cell",
    ]
    assert [c.code for c in TABLE_PROPERTIES.children("row_aggregation")] == [
        "global_row_aggregation",
        "local_row_group_aggregation",
        "explicit_row_aggregation_terms",
        "implicit_row_aggregation_terms",
    ]


def test_every_property_has_a_label_and_a_definition() -> None:
    for tax in (TABLE_PROPERTIES, QUERY_PROPERTIES):
        for prop in tax.properties:
            assert prop.label and prop.definition.endswith(".")


def test_query_properties_include_the_five_aggregation_types() -> None:
    types = [
        p.code
        for p in QUERY_PROPERTIES.children("aggregation")
        if p.code in taxonomy.AGGREGATION_TYPES
    ]
    assert types == list(taxonomy.AGGREGATION_TYPES)


def test_release_names_map_onto_codes(release_tables: list) -> None:
    # Every table and question of the release came through from_release without error.
    sample = release_tables[0]
    assert set(sample.table_properties) == set(TABLE_PROPERTIES.codes)
    assert set(sample.questions[0].query_properties) == set(QUERY_PROPERTIES.codes)


def test_it_normalizes_the_release_count_spellings() -> None:
    values = taxonomy.from_release(
        QUERY_PROPERTIES,
        {
            "Row Filter": True,
            "Row Filter Num Of Conditions": "1",
            "Rank Report Top": "3 ",
            "Returned Columns Num Of Output Columns": 2,
            "Aggregation Num Of Aggregations": "",
            "Row Filter Max Depth Of Involved Columns": False,
        },
    )
    assert values["row_filter_conditions"] == 1
    assert values["rank_top"] == 3
    assert values["returned_columns_outputs"] == 2
    assert values["aggregation_count_of_aggregations"] is None
    assert values["row_filter_max_depth"] is None


def test_a_missing_release_flag_counts_as_false() -> None:
    values = taxonomy.from_release(TABLE_PROPERTIES, {"Row Group Label": True})
    assert values["row_nesting"] is False
    assert values["row_group_label"] is True


def test_it_rejects_an_unknown_property_name() -> None:
    with pytest.raises(taxonomy.PropertyError, match="Unknown table property 'Diagonal Header'"):
        taxonomy.from_release(TABLE_PROPERTIES, {"Diagonal Header": True})


def test_it_rejects_a_count_that_is_not_a_number() -> None:
    with pytest.raises(taxonomy.PropertyError, match="Rank Report Top: Not a count: 'many'"):
        taxonomy.from_release(QUERY_PROPERTIES, {"Rank Report Top": "many"})


@pytest.mark.parametrize("value", [10**40, "100", -1])
def test_it_rejects_a_count_out_of_range(value: object) -> None:
    with pytest.raises(taxonomy.PropertyError, match="A count"):
        taxonomy.normalize_count(value)
    assert taxonomy.normalize_count("12 ") == 12 and taxonomy.normalize_count(0) == 0


def _props(*codes: str) -> dict:
    values = TABLE_PROPERTIES.empty()
    values.update(dict.fromkeys(codes, True))
    return values


def test_a_consistent_set_has_no_violations() -> None:
    values = _props(
        "multi_level_column", "balanced_multi_level_column", "symmetric_multi_level_column"
    )
    assert taxonomy.check(TABLE_PROPERTIES, values) == []


def test_a_child_without_its_parent_is_a_violation() -> None:
    problems = taxonomy.check(TABLE_PROPERTIES, _props("global_row_aggregation"))
    assert any("part of Row aggregation" in p.message for p in problems)


def test_multi_level_columns_need_depth_and_symmetry() -> None:
    problems = taxonomy.check(TABLE_PROPERTIES, _props("multi_level_column"))
    messages = " ".join(p.message for p in problems)
    assert "Multi-level columns: choose Balanced or Unbalanced (depth)." in messages
    assert "Multi-level columns: choose Symmetric or Asymmetric (symmetry)." in messages


def test_balanced_and_unbalanced_exclude_each_other() -> None:
    values = _props(
        "multi_level_column",
        "balanced_multi_level_column",
        "unbalanced_multi_level_column",
        "symmetric_multi_level_column",
    )
    problems = taxonomy.check(TABLE_PROPERTIES, values)
    assert [p.message for p in problems] == [
        "Multi-level columns: choose only one of Balanced or Unbalanced."
    ]


def test_standard_relational_table_excludes_every_other_property() -> None:
    problems = taxonomy.check(
        TABLE_PROPERTIES, _props("standard_relational_table", "row_group_label")
    )
    assert [p.code for p in problems] == ["standard_relational_table"]


def test_aggregation_needs_a_type() -> None:
    values = QUERY_PROPERTIES.empty()
    values.update(
        aggregation=True, aggregation_plain=True, aggregation_global=True, aggregation_in_table=True
    )
    problems = taxonomy.check(QUERY_PROPERTIES, values)
    assert [p.message for p in problems] == [
        "Aggregation needs at least one of Min or Max or Count or Sum or Average."
    ]


def test_the_release_labels_are_consistent_but_for_two_tables(release_tables: list) -> None:
    broken = [t.id for t in release_tables if taxonomy.check(TABLE_PROPERTIES, t.table_properties)]
    assert broken == ["arxiv--21--9631", "census--8--3175"]


def test_summary_lists_set_properties_with_their_details() -> None:
    values = QUERY_PROPERTIES.empty()
    values.update(row_filter=True, row_filter_lookup=True, row_filter_conditions=2)
    assert taxonomy.summary(QUERY_PROPERTIES, values) == [
        ("Row filter", ["Lookup condition", "Number of conditions: 2"])
    ]


# --- Click-by-click consistency and shortcuts ----------------------------------------------


def test_choosing_a_child_chooses_its_parent() -> None:
    values, notes = taxonomy.apply_change(
        TABLE_PROPERTIES, TABLE_PROPERTIES.empty(), "local_row_group_aggregation", True
    )
    assert values["row_aggregation"] is True
    assert notes == ["Selected Row aggregation: Local (row group) is part of it."]


def test_choosing_one_of_an_exclusive_pair_clears_the_other() -> None:
    values = _props("multi_level_column", "balanced_multi_level_column")
    values, notes = taxonomy.apply_change(
        TABLE_PROPERTIES, values, "unbalanced_multi_level_column", True
    )
    assert (
        values["balanced_multi_level_column"] is False
        and values["unbalanced_multi_level_column"] is True
    )
    assert notes == ["Cleared Balanced: it excludes Unbalanced."]


def test_at_least_one_groups_allow_both() -> None:
    values = _props("column_aggregation", "global_column_aggregation")
    values, _ = taxonomy.apply_change(
        TABLE_PROPERTIES, values, "local_column_group_aggregation", True
    )
    assert values["global_column_aggregation"] and values["local_column_group_aggregation"]


def test_standard_relational_table_clears_everything_and_is_cleared_by_anything() -> None:
    values = _props("row_group_label", "multi_level_column", "balanced_multi_level_column")
    values, notes = taxonomy.apply_change(
        TABLE_PROPERTIES, values, "standard_relational_table", True
    )
    assert taxonomy.selected(values) == ["standard_relational_table"]
    assert notes == ["Standard relational table excludes every other property: cleared the others."]
    values, notes = taxonomy.apply_change(TABLE_PROPERTIES, values, "split_header_cell", True)
    assert taxonomy.selected(values) == ["split_header_cell"]


def test_clearing_a_parent_clears_its_details() -> None:
    values = QUERY_PROPERTIES.empty()
    values, _ = taxonomy.apply_change(QUERY_PROPERTIES, values, "aggregation_sum", True)
    values, _ = taxonomy.apply_change(
        QUERY_PROPERTIES, values, "aggregation_count_of_aggregations", 2
    )
    assert values["aggregation"] is True and values["aggregation_count_of_aggregations"] == 2
    values, notes = taxonomy.apply_change(QUERY_PROPERTIES, values, "aggregation", False)
    assert (
        values["aggregation_sum"] is False and values["aggregation_count_of_aggregations"] is None
    )
    assert notes == ["Cleared Sum, Number of aggregations: they are part of Aggregation."]


def test_every_flag_has_its_own_key_and_none_is_reserved() -> None:
    for tax in (TABLE_PROPERTIES, QUERY_PROPERTIES):
        keys = [p.key for p in tax.flags()]
        assert all(keys) and len(set(keys)) == len(keys)
        assert not set(keys) & set(taxonomy.RESERVED_KEYS)
        # The query tool also uses q and w to jump to its text fields.
    assert not {"q", "w"} & {p.key for p in QUERY_PROPERTIES.flags()}


def test_the_rules_travel_as_data() -> None:
    data = taxonomy.as_json(TABLE_PROPERTIES)
    assert data["exclusive"] == ["standard_relational_table"]
    assert {
        "parent": "multi_level_column",
        "members": ["balanced_multi_level_column", "unbalanced_multi_level_column"],
        "rule": "one",
        "label": "Depth",
    } in data["groups"]
    assert data["properties"][1]["key"] == "c"
