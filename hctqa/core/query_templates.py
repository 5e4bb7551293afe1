"""Question templates for the query tool: picking one pre-fills the query properties, and the
nudge panel compares an annotator's mix of questions with a target mix."""

from __future__ import annotations

from dataclasses import dataclass, field

from hctqa.core.taxonomy import QUERY_PROPERTIES, normalize


@dataclass(frozen=True)
class QueryTemplate:
    code: str
    name: str
    example: str
    properties: dict[str, bool | int | None] = field(default_factory=dict)

    def filled(self) -> dict[str, bool | int | None]:
        return normalize(QUERY_PROPERTIES, self.properties)


_LOOKUP_FILTER = {
    "row_filter": True,
    "row_filter_lookup": True,
    "row_filter_single_column": True,
    "row_filter_single_row": True,
    "row_filter_conditions": 1,
    "row_filter_max_depth": 1,
}

TEMPLATES: tuple[QueryTemplate, ...] = (
    QueryTemplate(
        "lookup",
        "Look up one value",
        "What was the number of <measure> for <row> in <column>?",
        {
            **_LOOKUP_FILTER,
            "returned_columns": True,
            "returned_columns_plain": True,
            "returned_columns_outputs": 1,
            "returned_columns_max_depth": 1,
        },
    ),
    QueryTemplate(
        "filter_rows",
        "Rows meeting a condition",
        "Which <rows> had more than <number> <measure> in <column>? Report each with its value.",
        {
            "row_filter": True,
            "row_filter_expression": True,
            "row_filter_single_column": True,
            "row_filter_multiple_rows": True,
            "row_filter_conditions": 1,
            "row_filter_max_depth": 1,
            "returned_columns": True,
            "returned_columns_plain": True,
            "returned_columns_outputs": 2,
            "returned_columns_max_depth": 1,
        },
    ),
    QueryTemplate(
        "sum",
        "Total over rows",
        "What is the total <measure> across all <rows> in <column>?",
        {
            "returned_columns": True,
            "returned_columns_expression": True,
            "returned_columns_expression_not_in_table": True,
            "returned_columns_outputs": 1,
            "aggregation": True,
            "aggregation_plain": True,
            "aggregation_sum": True,
            "aggregation_global": True,
            "aggregation_not_in_table": True,
            "aggregation_count_of_aggregations": 1,
        },
    ),
    QueryTemplate(
        "average",
        "Average over rows",
        "What is the average <measure> of <rows> in <column>?",
        {
            "returned_columns": True,
            "returned_columns_expression": True,
            "returned_columns_expression_not_in_table": True,
            "returned_columns_outputs": 1,
            "aggregation": True,
            "aggregation_plain": True,
            "aggregation_average": True,
            "aggregation_global": True,
            "aggregation_not_in_table": True,
            "aggregation_count_of_aggregations": 1,
        },
    ),
    QueryTemplate(
        "extreme",
        "Highest or lowest",
        "Which <row> had the highest <measure> in <column>, and what was it?",
        {
            "returned_columns": True,
            "returned_columns_plain": True,
            "returned_columns_outputs": 2,
            "aggregation": True,
            "aggregation_plain": True,
            "aggregation_max": True,
            "aggregation_global": True,
            "aggregation_in_table": True,
            "aggregation_count_of_aggregations": 1,
        },
    ),
    QueryTemplate(
        "group_totals",
        "Per-group totals",
        "For each <group>, what is the total <measure> in <column>?",
        {
            "returned_columns": True,
            "returned_columns_expression": True,
            "returned_columns_outputs": 2,
            "aggregation": True,
            "aggregation_plain": True,
            "aggregation_sum": True,
            "aggregation_local": True,
            "aggregation_not_in_table": True,
            "aggregation_count_of_aggregations": 1,
        },
    ),
    QueryTemplate(
        "top_k",
        "Top k",
        "What are the top 3 <rows> by <measure> in <column>?",
        {
            "returned_columns": True,
            "returned_columns_plain": True,
            "returned_columns_outputs": 1,
            "rank": True,
            "rank_plain": True,
            "rank_top": 3,
        },
    ),
    QueryTemplate(
        "yes_no_compare",
        "Yes/no comparison",
        "Was the <measure> of <row A> higher than that of <row B> in <column>?",
        {
            "row_filter": True,
            "row_filter_lookup": True,
            "row_filter_single_column": True,
            "row_filter_multiple_rows": True,
            "row_filter_conditions": 2,
            "row_filter_max_depth": 1,
            "yes_no": True,
            "yes_no_multiple_scope": True,
        },
    ),
    QueryTemplate(
        "difference",
        "Difference between two values",
        "By how much did <measure> change from <column A> to <column B> for <row>?",
        {
            **_LOOKUP_FILTER,
            "returned_columns": True,
            "returned_columns_expression": True,
            "returned_columns_expression_not_in_table": True,
            "returned_columns_outputs": 1,
            "returned_columns_max_depth": 1,
        },
    ),
)

# The share of human-written questions with each top-level property in the HCT-QA release
# (3,248 questions); the nudge panel shows an annotator's own shares against these.
TARGET_MIX: dict[str, float] = {
    "returned_columns": 0.987,
    "row_filter": 0.569,
    "aggregation": 0.360,
    "rank": 0.124,
    "yes_no": 0.098,
}


def template(code: str) -> QueryTemplate:
    for t in TEMPLATES:
        if t.code == code:
            return t
    raise KeyError(code)
