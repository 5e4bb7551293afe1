"""The two HCT-QA taxonomies: table properties and query properties.

Defined once here; the database, the annotation tools, the importers and the leaderboard
breakdowns all read them from this module. Each property has a stable snake_case code (the key
stored in the database), a human label, a definition, the name the release files use, and its
place in the parent → child hierarchy.

Sibling rules say how the children of a selected parent combine:
- ``one``: exactly one of the group must be chosen (Balanced or Unbalanced);
- ``some``: at least one must be chosen (global and/or local aggregation);
- ``at_most_one``: the choices exclude each other but may all be left empty.

Over 800 lines on purpose: more than half of them are the two taxonomies' definitions, data
read top to bottom as the paper lists them, each beside its place in the hierarchy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

PropertyKind = Literal["flag", "count"]
GroupRule = Literal["one", "some", "at_most_one"]


@dataclass(frozen=True)
class Property:
    code: str
    label: str
    definition: str
    release_name: str
    parent: str | None = None
    kind: PropertyKind = "flag"
    key: str = ""  # keyboard shortcut in the annotation tools (flags only)


@dataclass(frozen=True)
class ChoiceGroup:
    """Children of ``parent`` that belong together, and how they may be combined."""

    parent: str
    members: tuple[str, ...]
    rule: GroupRule
    label: str


@dataclass(frozen=True)
class Taxonomy:
    name: str
    singular: str
    properties: tuple[Property, ...]
    groups: tuple[ChoiceGroup, ...]
    # Codes that exclude every other property (Standard Relational Table).
    exclusive: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        codes = [p.code for p in self.properties]
        if len(set(codes)) != len(codes):
            raise ValueError(f"Taxonomy {self.name}: duplicate property codes")
        known = set(codes)
        for p in self.properties:
            if p.parent is not None and p.parent not in known:
                raise ValueError(f"Taxonomy {self.name}: {p.code} has unknown parent {p.parent}")
        for g in self.groups:
            for m in g.members:
                if self.get(m).parent != g.parent:
                    raise ValueError(f"Taxonomy {self.name}: {m} is not a child of {g.parent}")

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(p.code for p in self.properties)

    def get(self, code: str) -> Property:
        for p in self.properties:
            if p.code == code:
                return p
        raise KeyError(code)

    def full_label(self, code: str) -> str:
        """The label with its parent's, as a child's alone is ambiguous: "Column aggregation ›
        Local (column group)". An unknown code is itself."""
        try:
            prop = self.get(code)
        except KeyError:
            return code
        return f"{self.get(prop.parent).label} › {prop.label}" if prop.parent else prop.label

    def children(self, code: str) -> tuple[Property, ...]:
        return tuple(p for p in self.properties if p.parent == code)

    def roots(self) -> tuple[Property, ...]:
        return tuple(p for p in self.properties if p.parent is None)

    def by_release_name(self) -> dict[str, Property]:
        return {p.release_name: p for p in self.properties}

    def flags(self) -> tuple[Property, ...]:
        return tuple(p for p in self.properties if p.kind == "flag")

    def counts(self) -> tuple[Property, ...]:
        return tuple(p for p in self.properties if p.kind == "count")

    def empty(self) -> dict[str, bool | int | None]:
        return {p.code: (False if p.kind == "flag" else None) for p in self.properties}


# --- Table properties (paper Table 6; the release calls column nesting "Multi Level Column") ---

_T = Property
TABLE_PROPERTIES = Taxonomy(
    name="table properties",
    singular="table property",
    properties=(
        _T(
            "standard_relational_table",
            "Standard relational table",
            "A plain grid: one header row, one value per cell, and none of the other properties.",
            "Standard Relational Table",
        ),
        _T(
            "multi_level_column",
            "Multi-level columns",
            "Column headers are stacked over two or more header rows, a parent header spanning "
            "the columns of its children (column nesting).",
            "Multi Level Column",
        ),
        _T(
            "balanced_multi_level_column",
            "Balanced",
            "Every branch of the column-header tree reaches the same depth.",
            "Balanced Multi Level Column",
            "multi_level_column",
        ),
        _T(
            "unbalanced_multi_level_column",
            "Unbalanced",
            "Some branches of the column-header tree are deeper than others.",
            "Unbalanced Multi Level Column",
            "multi_level_column",
        ),
        _T(
            "symmetric_multi_level_column",
            "Symmetric",
            "Each nested parent header repeats the same set of child headers.",
            "Symmetric Multi Level Column",
            "multi_level_column",
        ),
        _T(
            "asymmetric_multi_level_column",
            "Asymmetric",
            "Nested parent headers have different sets of child headers.",
            "Asymmetric Multi Level Column",
            "multi_level_column",
        ),
        _T(
            "row_nesting",
            "Row nesting",
            "Row labels are stacked over two or more columns, a parent label spanning the rows of "
            "its children as one merged cell.",
            "Row Nesting",
        ),
        _T(
            "balanced_row_nesting",
            "Balanced",
            "Every branch of the row-label tree reaches the same depth, read left to right.",
            "Balanced Row Nesting",
            "row_nesting",
        ),
        _T(
            "unbalanced_row_nesting",
            "Unbalanced",
            "Some branches of the row-label tree are deeper than others.",
            "Unbalanced Row Nesting",
            "row_nesting",
        ),
        _T(
            "symmetric_row_nesting",
            "Symmetric",
            "Each parent row label repeats the same set of child labels.",
            "Symmetric Row Nesting",
            "row_nesting",
        ),
        _T(
            "asymmetric_row_nesting",
            "Asymmetric",
            "Parent row labels have different sets of child labels.",
            "Asymmetric Row Nesting",
            "row_nesting",
        ),
        _T(
            "column_aggregation",
            "Column aggregation",
            "Some column is computed from other columns (a total, an average, a difference).",
            "Column Aggregation",
        ),
        _T(
            "global_column_aggregation",
            "Global",
            "A column aggregates all the other value columns, or all the local group totals.",
            "Global Column Aggregation",
            "column_aggregation",
        ),
        _T(
            "local_column_group_aggregation",
            "Local (column group)",
            "A column aggregates only a subset of the columns, typically the children of one "
            "parent header.",
            "Local Column-Group Aggregation",
            "column_aggregation",
        ),
        _T(
            "explicit_column_aggregation_terms",
            "Explicit terms",
            "The aggregate column's header says so in plain words, such as Total or Average.",
            "Explicit Column Aggregation Terms",
            "column_aggregation",
        ),
        _T(
            "implicit_column_aggregation_terms",
            "Implicit terms",
            "The aggregate column's header does not reveal that it is an aggregate; a reader "
            "needs domain knowledge to tell.",
            "Implicit Column Aggregation Terms",
            "column_aggregation",
        ),
        _T(
            "row_aggregation",
            "Row aggregation",
            "Some row is computed from other rows.",
            "Row Aggregation",
        ),
        _T(
            "global_row_aggregation",
            "Global",
            "A row aggregates all the other value rows of the table.",
            "Global Row Aggregation",
            "row_aggregation",
        ),
        _T(
            "local_row_group_aggregation",
            "Local (row group)",
            "A row aggregates only a group of rows, shown by indentation, numbering or a label.",
            "Local Row-Group Aggregation",
            "row_aggregation",
        ),
        _T(
            "explicit_row_aggregation_terms",
            "Explicit terms",
            "A text cell of the aggregate row names the aggregation, such as Total.",
            "Explicit Row Aggregation Terms",
            "row_aggregation",
        ),
        _T(
            "implicit_row_aggregation_terms",
            "Implicit terms",
            "No text cell of the aggregate row says that it aggregates.",
            "Implicit Row Aggregation Terms",
            "row_aggregation",
        ),
        _T(
            "row_group_label",
            "Row group label",
            "A row holding only a label in its first cell, acting as a heading for the rows "
            "around it.",
            "Row Group Label",
        ),
        _T(
            "split_header_cell",
            "Split header cell",
            "A header cell divided by a diagonal line, naming both the row labels and the column "
            "labels.",
            "Split Header Cell",
        ),
    ),
    groups=(
        ChoiceGroup(
            "multi_level_column",
            ("balanced_multi_level_column", "unbalanced_multi_level_column"),
            "one",
            "Depth",
        ),
        ChoiceGroup(
            "multi_level_column",
            ("symmetric_multi_level_column", "asymmetric_multi_level_column"),
            "one",
            "Symmetry",
        ),
        ChoiceGroup(
            "row_nesting",
            ("balanced_row_nesting", "unbalanced_row_nesting"),
            "one",
            "Depth",
        ),
        ChoiceGroup(
            "row_nesting",
            ("symmetric_row_nesting", "asymmetric_row_nesting"),
            "one",
            "Symmetry",
        ),
        ChoiceGroup(
            "column_aggregation",
            ("global_column_aggregation", "local_column_group_aggregation"),
            "some",
            "Scope",
        ),
        ChoiceGroup(
            "column_aggregation",
            ("explicit_column_aggregation_terms", "implicit_column_aggregation_terms"),
            "some",
            "Terms",
        ),
        ChoiceGroup(
            "row_aggregation",
            ("global_row_aggregation", "local_row_group_aggregation"),
            "some",
            "Scope",
        ),
        ChoiceGroup(
            "row_aggregation",
            ("explicit_row_aggregation_terms", "implicit_row_aggregation_terms"),
            "some",
            "Terms",
        ),
    ),
    exclusive=("standard_relational_table",),
)


# --- Query properties (paper Table 7, plus the release's "Rank Report Top") ---

_Q = Property
QUERY_PROPERTIES = Taxonomy(
    name="query properties",
    singular="query property",
    properties=(
        _Q(
            "row_filter",
            "Row filter",
            "The question keeps only the rows that meet some condition, like a WHERE clause.",
            "Row Filter",
        ),
        _Q(
            "row_filter_lookup",
            "Lookup condition",
            "The condition matches cell values exactly.",
            "Row Filter Condition Type Lookup",
            "row_filter",
        ),
        _Q(
            "row_filter_expression",
            "Expression condition",
            "The condition compares or computes, for example greater than a number.",
            "Row Filter Condition Type Expression",
            "row_filter",
        ),
        _Q(
            "row_filter_single_column",
            "Single involved column",
            "The condition reads one column.",
            "Row Filter Involved Columns Single",
            "row_filter",
        ),
        _Q(
            "row_filter_multiple_columns",
            "Multiple involved columns",
            "The condition reads more than one column.",
            "Row Filter Involved Columns Multiple",
            "row_filter",
        ),
        _Q(
            "row_filter_max_depth",
            "Max depth of involved columns",
            "The deepest header level among the columns the condition reads.",
            "Row Filter Max Depth Of Involved Columns",
            "row_filter",
            "count",
        ),
        _Q(
            "row_filter_single_row",
            "Single retained row",
            "Exactly one row survives the condition.",
            "Row Filter Retained Rows Single",
            "row_filter",
        ),
        _Q(
            "row_filter_multiple_rows",
            "Multiple retained rows",
            "Several rows survive the condition.",
            "Row Filter Retained Rows Multiple",
            "row_filter",
        ),
        _Q(
            "row_filter_conditions",
            "Number of conditions",
            "How many conditions the filter combines.",
            "Row Filter Num Of Conditions",
            "row_filter",
            "count",
        ),
        _Q(
            "returned_columns",
            "Returned columns",
            "The answer reports values of particular columns, like a SELECT list.",
            "Returned Columns",
        ),
        _Q(
            "returned_columns_plain",
            "Plain projection",
            "Column values are reported as they stand.",
            "Returned Columns Project On Plain",
            "returned_columns",
        ),
        _Q(
            "returned_columns_expression",
            "Expression projection",
            "Reported values are computed from columns.",
            "Returned Columns Project On Expression",
            "returned_columns",
        ),
        _Q(
            "returned_columns_max_depth",
            "Max depth of returned columns",
            "The deepest header level among the reported columns.",
            "Returned Columns Max Depth Of Involved Columns",
            "returned_columns",
            "count",
        ),
        _Q(
            "returned_columns_expression_in_table",
            "Expression present in the table",
            "The computed value can already be read somewhere in the table.",
            "Returned Columns Expression In Table Present",
            "returned_columns",
        ),
        _Q(
            "returned_columns_expression_not_in_table",
            "Expression not in the table",
            "The computed value appears nowhere in the table.",
            "Returned Columns Expression In Table Not Present",
            "returned_columns",
        ),
        _Q(
            "returned_columns_outputs",
            "Number of output columns",
            "How many values each answer row holds.",
            "Returned Columns Num Of Output Columns",
            "returned_columns",
            "count",
        ),
        _Q(
            "yes_no",
            "Yes/No",
            "The answer is Yes or No.",
            "Yes/No",
        ),
        _Q(
            "yes_no_single_scope",
            "Single scope",
            "The judgement rests on one row or column.",
            "Yes/No Scope Single",
            "yes_no",
        ),
        _Q(
            "yes_no_multiple_scope",
            "Multiple scope",
            "The judgement compares several rows or columns.",
            "Yes/No Scope Multiple",
            "yes_no",
        ),
        _Q(
            "aggregation",
            "Aggregation",
            "Answering needs an aggregate such as a sum, an average or a count.",
            "Aggregation",
        ),
        _Q(
            "aggregation_plain",
            "Aggregation on plain values",
            "The aggregate runs over cell values as they stand.",
            "Aggregation Aggregation On Plain",
            "aggregation",
        ),
        _Q(
            "aggregation_expression",
            "Aggregation on an expression",
            "The aggregate runs over values computed first.",
            "Aggregation Aggregation On Expression",
            "aggregation",
        ),
        _Q(
            "aggregation_min",
            "Min",
            "The smallest value.",
            "Aggregation Aggregation Type Min",
            "aggregation",
        ),
        _Q(
            "aggregation_max",
            "Max",
            "The largest value.",
            "Aggregation Aggregation Type Max",
            "aggregation",
        ),
        _Q(
            "aggregation_count",
            "Count",
            "How many values there are.",
            "Aggregation Aggregation Type Count",
            "aggregation",
        ),
        _Q(
            "aggregation_sum",
            "Sum",
            "The values added up.",
            "Aggregation Aggregation Type Sum",
            "aggregation",
        ),
        _Q(
            "aggregation_average",
            "Average",
            "The arithmetic mean.",
            "Aggregation Aggregation Type Avg",
            "aggregation",
        ),
        _Q(
            "aggregation_local",
            "Local grouping",
            "One aggregate per group of rows, like GROUP BY.",
            "Aggregation Grouping Local",
            "aggregation",
        ),
        _Q(
            "aggregation_global",
            "Global grouping",
            "One aggregate over all the retained rows.",
            "Aggregation Grouping Global",
            "aggregation",
        ),
        _Q(
            "aggregation_in_table",
            "Aggregate present in the table",
            "The table already shows the aggregate, for example in a total row.",
            "Aggregation Aggregation In Table Present",
            "aggregation",
        ),
        _Q(
            "aggregation_not_in_table",
            "Aggregate not in the table",
            "The aggregate has to be computed.",
            "Aggregation Aggregation In Table Not Present",
            "aggregation",
        ),
        _Q(
            "aggregation_count_of_aggregations",
            "Number of aggregations",
            "How many different aggregates the answer needs.",
            "Aggregation Num Of Aggregations",
            "aggregation",
            "count",
        ),
        _Q(
            "rank",
            "Rank",
            "The question orders rows, such as the top three.",
            "Rank",
        ),
        _Q(
            "rank_plain",
            "Rank on plain values",
            "Rows are ordered by a column as it stands.",
            "Rank Rank On Plain",
            "rank",
        ),
        _Q(
            "rank_expression",
            "Rank on an expression",
            "Rows are ordered by a computed value.",
            "Rank Rank On Expression",
            "rank",
        ),
        _Q(
            "rank_top",
            "Top k reported",
            "How many of the ranked rows the answer reports.",
            "Rank Report Top",
            "rank",
            "count",
        ),
    ),
    groups=(
        ChoiceGroup(
            "row_filter",
            ("row_filter_lookup", "row_filter_expression"),
            "some",
            "Condition type",
        ),
        ChoiceGroup(
            "row_filter",
            ("row_filter_single_column", "row_filter_multiple_columns"),
            "some",
            "Involved columns",
        ),
        ChoiceGroup(
            "row_filter",
            ("row_filter_single_row", "row_filter_multiple_rows"),
            "one",
            "Retained rows",
        ),
        ChoiceGroup(
            "returned_columns",
            ("returned_columns_plain", "returned_columns_expression"),
            "some",
            "Project on",
        ),
        ChoiceGroup(
            "returned_columns",
            ("returned_columns_expression_in_table", "returned_columns_expression_not_in_table"),
            "at_most_one",
            "Expression in table",
        ),
        ChoiceGroup(
            "yes_no",
            ("yes_no_single_scope", "yes_no_multiple_scope"),
            "one",
            "Scope",
        ),
        ChoiceGroup(
            "aggregation",
            ("aggregation_plain", "aggregation_expression"),
            "one",
            "Aggregation on",
        ),
        ChoiceGroup(
            "aggregation",
            (
                "aggregation_min",
                "aggregation_max",
                "aggregation_count",
                "aggregation_sum",
                "aggregation_average",
            ),
            "some",
            "Type",
        ),
        ChoiceGroup(
            "aggregation",
            ("aggregation_local", "aggregation_global"),
            "one",
            "Grouping",
        ),
        ChoiceGroup(
            "aggregation",
            ("aggregation_in_table", "aggregation_not_in_table"),
            "one",
            "In table",
        ),
        ChoiceGroup(
            "rank",
            ("rank_plain", "rank_expression"),
            "one",
            "Rank on",
        ),
    ),
)

AGGREGATION_TYPES: tuple[str, ...] = (
    "aggregation_min",
    "aggregation_max",
    "aggregation_count",
    "aggregation_sum",
    "aggregation_average",
)


class PropertyError(ValueError):
    """A property set that names an unknown property or holds a value of the wrong kind."""


# Conditions, columns or aggregations in one question: the release's largest is 12.
MAX_COUNT = 99


def normalize_count(value: object) -> int | None:
    """The release writes counts as 1, "1", "3 ", "" or False; store an int or None."""
    if value is None or value is False or value == "":
        return None
    if value is True:
        raise PropertyError("A count cannot be true")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int):
        if value < 0:
            raise PropertyError(f"A count cannot be negative: {value}")
        if value > MAX_COUNT:
            raise PropertyError(f"A count is at most {MAX_COUNT}, not {value}")
        return value
    raise PropertyError(f"Not a count: {value!r}")


def normalize(taxonomy: Taxonomy, values: Mapping[str, object]) -> dict[str, bool | int | None]:
    """A complete, typed property dict keyed by code. Unknown codes are an error."""
    result = taxonomy.empty()
    for code, value in values.items():
        if code not in result:
            raise PropertyError(f"Unknown {taxonomy.singular} {code!r}")
        prop = taxonomy.get(code)
        if prop.kind == "flag":
            if not isinstance(value, bool):
                raise PropertyError(f"{prop.release_name} must be true or false, not {value!r}")
            result[code] = value
        else:
            try:
                result[code] = normalize_count(value)
            except PropertyError as exc:
                raise PropertyError(f"{prop.release_name}: {exc}") from None
    return result


def from_release(taxonomy: Taxonomy, values: Mapping[str, object]) -> dict[str, bool | int | None]:
    """Map a release-file property dict (keyed by release names) onto codes.

    Missing names count as false: 543 release tables omit "Row Nesting" while all of their row
    nesting children are false.
    """
    names = taxonomy.by_release_name()
    coded: dict[str, object] = {}
    for name, value in values.items():
        prop = names.get(name)
        if prop is None:
            raise PropertyError(f"Unknown {taxonomy.singular} {name!r}")
        if prop.kind == "flag" and value in ("", None):
            value = False
        coded[prop.code] = value
    return normalize(taxonomy, coded)


def selected(values: Mapping[str, object]) -> list[str]:
    """Codes of the flags that are set, in taxonomy order when given a normalized dict."""
    return [code for code, value in values.items() if value is True]


@dataclass(frozen=True)
class Violation:
    code: str
    message: str


def check(taxonomy: Taxonomy, values: Mapping[str, object]) -> list[Violation]:
    """Consistency problems in a property set, each with a short explanation."""
    problems: list[Violation] = []
    on = {code for code, value in values.items() if value is True}
    for prop in taxonomy.properties:
        if prop.parent is None:
            continue
        child_set = (prop.kind == "flag" and prop.code in on) or (
            prop.kind == "count" and values.get(prop.code) not in (None, False, "")
        )
        if child_set and prop.parent not in on:
            parent = taxonomy.get(prop.parent)
            problems.append(
                Violation(prop.code, f"{prop.label} is part of {parent.label}, which is not set.")
            )
    for group in taxonomy.groups:
        if group.parent not in on:
            continue
        chosen = [m for m in group.members if m in on]
        parent = taxonomy.get(group.parent)
        names = " or ".join(taxonomy.get(m).label for m in group.members)
        if group.rule == "one" and len(chosen) != 1:
            if chosen:
                message = f"{parent.label}: choose only one of {names}."
            else:
                message = f"{parent.label}: choose {names} ({group.label.lower()})."
            problems.append(Violation(group.parent, message))
        elif group.rule == "some" and not chosen:
            problems.append(
                Violation(group.parent, f"{parent.label} needs at least one of {names}.")
            )
        elif group.rule == "at_most_one" and len(chosen) > 1:
            problems.append(Violation(group.parent, f"{parent.label}: choose only one of {names}."))
    for code in taxonomy.exclusive:
        if code in on and len(on) > 1:
            label = taxonomy.get(code).label
            problems.append(Violation(code, f"{label} excludes every other property."))
    return problems


@dataclass(frozen=True)
class PropertyNode:
    prop: Property
    value: bool | int | None
    children: tuple[PropertyNode, ...]


def tree(taxonomy: Taxonomy, values: Mapping[str, object]) -> list[PropertyNode]:
    """The taxonomy as a tree of properties with their values, for display."""

    def node(prop: Property) -> PropertyNode:
        value = values.get(prop.code)
        typed: bool | int | None = value if isinstance(value, bool | int) else None
        return PropertyNode(prop, typed, tuple(node(c) for c in taxonomy.children(prop.code)))

    return [node(root) for root in taxonomy.roots()]


def summary(taxonomy: Taxonomy, values: Mapping[str, object]) -> list[tuple[str, list[str]]]:
    """Set properties as (root label, [chosen children and counts]), e.g.
    ("Row filter", ["Lookup condition", "Number of conditions: 1"])."""
    out: list[tuple[str, list[str]]] = []
    for root in taxonomy.roots():
        if values.get(root.code) is not True:
            continue
        details: list[str] = []
        for child in taxonomy.children(root.code):
            value = values.get(child.code)
            if child.kind == "flag" and value is True:
                details.append(child.label)
            elif child.kind == "count" and isinstance(value, int) and value is not True:
                details.append(f"{child.label}: {value}")
        out.append((root.label, details))
    return out


# --- Keyboard shortcuts and click-by-click consistency ------------------------------------

# One key per flag. "s" skips and Enter saves in both tools, so neither is used here.
_TABLE_KEYS = {
    "standard_relational_table": "t",
    "multi_level_column": "c",
    "balanced_multi_level_column": "1",
    "unbalanced_multi_level_column": "2",
    "symmetric_multi_level_column": "3",
    "asymmetric_multi_level_column": "4",
    "row_nesting": "r",
    "balanced_row_nesting": "5",
    "unbalanced_row_nesting": "6",
    "symmetric_row_nesting": "7",
    "asymmetric_row_nesting": "8",
    "column_aggregation": "a",
    "global_column_aggregation": "g",
    "local_column_group_aggregation": "l",
    "explicit_column_aggregation_terms": "e",
    "implicit_column_aggregation_terms": "i",
    "row_aggregation": "o",
    "global_row_aggregation": "h",
    "local_row_group_aggregation": "k",
    "explicit_row_aggregation_terms": "x",
    "implicit_row_aggregation_terms": "y",
    "row_group_label": "b",
    "split_header_cell": "d",
}
_QUERY_KEYS = {
    "row_filter": "f",
    "row_filter_lookup": "l",
    "row_filter_expression": "e",
    "row_filter_single_column": "1",
    "row_filter_multiple_columns": "2",
    "row_filter_single_row": "3",
    "row_filter_multiple_rows": "4",
    "returned_columns": "c",
    "returned_columns_plain": "p",
    "returned_columns_expression": "x",
    "returned_columns_expression_in_table": "i",
    "returned_columns_expression_not_in_table": "n",
    "yes_no": "y",
    "yes_no_single_scope": "5",
    "yes_no_multiple_scope": "6",
    "aggregation": "a",
    "aggregation_plain": "7",
    "aggregation_expression": "8",
    "aggregation_min": "m",
    "aggregation_max": "h",
    "aggregation_count": "o",
    "aggregation_sum": "u",
    "aggregation_average": "v",
    "aggregation_local": "k",
    "aggregation_global": "g",
    "aggregation_in_table": "9",
    "aggregation_not_in_table": "0",
    "rank": "r",
    "rank_plain": "b",
    "rank_expression": "z",
}
RESERVED_KEYS = ("s", "Enter")


def _with_keys(taxonomy: Taxonomy, keys: Mapping[str, str]) -> Taxonomy:
    from dataclasses import replace

    return replace(
        taxonomy,
        properties=tuple(replace(p, key=keys.get(p.code, "")) for p in taxonomy.properties),
    )


TABLE_PROPERTIES = _with_keys(TABLE_PROPERTIES, _TABLE_KEYS)
QUERY_PROPERTIES = _with_keys(QUERY_PROPERTIES, _QUERY_KEYS)


def _descendants(taxonomy: Taxonomy, code: str) -> list[Property]:
    out: list[Property] = []
    for child in taxonomy.children(code):
        out.append(child)
        out.extend(_descendants(taxonomy, child.code))
    return out


def apply_change(
    taxonomy: Taxonomy, values: Mapping[str, object], code: str, value: bool | int | None
) -> tuple[dict[str, bool | int | None], list[str]]:
    """Set one property the way an annotator's click does, keeping the set consistent.

    - choosing a property chooses its parent, and its parent's parent;
    - choosing one of a pair that excludes each other (Balanced / Unbalanced) clears the other;
    - choosing an exclusive property (Standard Relational Table) clears all others, and
      choosing anything else clears it;
    - clearing a property clears its details.

    Returns the new values and a short note for each side effect. What the annotator still
    has to choose (a parent's required sub-choices) is reported by ``check``.
    """
    prop = taxonomy.get(code)
    result = normalize(taxonomy, {k: v for k, v in values.items() if k in taxonomy.codes})
    notes: list[str] = []
    turning_on = value is True or (prop.kind == "count" and value is not None)

    if prop.kind == "count":
        result[code] = normalize_count(value)
    else:
        if not isinstance(value, bool):
            raise PropertyError(f"{prop.label} must be true or false")
        result[code] = value

    if not turning_on:
        cleared = [
            d.label for d in _descendants(taxonomy, code) if result[d.code] not in (False, None)
        ]
        for d in _descendants(taxonomy, code):
            result[d.code] = False if d.kind == "flag" else None
        if cleared:
            verb = "it is" if len(cleared) == 1 else "they are"
            notes.append(f"Cleared {', '.join(cleared)}: {verb} part of {prop.label}.")
        return result, notes

    if code in taxonomy.exclusive:
        others = [
            p for p in taxonomy.properties if p.code != code and result[p.code] not in (False, None)
        ]
        for p in others:
            result[p.code] = False if p.kind == "flag" else None
        if others:
            notes.append(f"{prop.label} excludes every other property: cleared the others.")
        return result, notes

    for exclusive in taxonomy.exclusive:
        if result.get(exclusive) is True:
            result[exclusive] = False
            notes.append(
                f"Cleared {taxonomy.get(exclusive).label}: it excludes every other property."
            )

    parent = prop.parent
    while parent is not None:
        if result[parent] is not True:
            result[parent] = True
            notes.append(f"Selected {taxonomy.get(parent).label}: {prop.label} is part of it.")
        parent = taxonomy.get(parent).parent

    if prop.kind == "flag":
        for group in taxonomy.groups:
            if code in group.members and group.rule in ("one", "at_most_one"):
                for sibling in group.members:
                    if sibling != code and result[sibling] is True:
                        result[sibling] = False
                        notes.append(
                            f"Cleared {taxonomy.get(sibling).label}: it excludes {prop.label}."
                        )
    return result, notes


def as_json(taxonomy: Taxonomy) -> dict[str, object]:
    """The taxonomy for the annotation tools' scripts: the rules are data, defined here once."""
    return {
        "name": taxonomy.name,
        "properties": [
            {
                "code": p.code,
                "label": p.label,
                "definition": p.definition,
                "parent": p.parent,
                "kind": p.kind,
                "key": p.key,
            }
            for p in taxonomy.properties
        ],
        "groups": [
            {"parent": g.parent, "members": list(g.members), "rule": g.rule, "label": g.label}
            for g in taxonomy.groups
        ],
        "exclusive": list(taxonomy.exclusive),
    }
