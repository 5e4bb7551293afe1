"""A small synthetic HCT generator, in the spirit of the paper's (Appendix C).

A relational table (one row per combination of dimension values) is pivoted into a
human-centric table: column dimensions become nested column headers, row dimensions become
nested row labels or row-group labels, and totals become aggregate rows and columns. Because
the data is known, every question's gold answer is computed, not written by hand.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

from hctqa.core import taxonomy
from hctqa.core.tables import COVERED, write_csv_rows

TOTAL = "Total"


@dataclass(frozen=True)
class Dimension:
    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class HCTSpec:
    table_id: str
    value_name: str  # "number of students": reads after "the"
    row_dims: tuple[Dimension, ...]  # one or two
    col_dims: tuple[Dimension, ...]  # one or two
    row_groups: bool = False  # the first row dimension becomes row-group label rows
    total_row: bool = False  # a global aggregate row at the bottom
    total_column: bool = False  # a global aggregate column at the right
    subtotal_columns: bool = False  # a local aggregate column closing each column group
    seed: int = 0
    low: int = 10
    high: int = 999


@dataclass(frozen=True)
class GeneratedQuestion:
    template: int
    text: str
    gold_answer: str
    query_properties: dict[str, bool | int | None]


@dataclass(frozen=True)
class GeneratedTable:
    spec: HCTSpec
    canonical_csv: str
    relational_csv: str
    table_properties: dict[str, bool | int | None]
    questions: tuple[GeneratedQuestion, ...]


Key = tuple[str, ...]


def _values(spec: HCTSpec) -> dict[Key, int]:
    """Distinct random values per cell, so no answer is ambiguous (as in the paper)."""
    rng = random.Random(spec.seed)
    keys = list(itertools.product(*(d.values for d in spec.row_dims + spec.col_dims)))
    if spec.high - spec.low + 1 < len(keys):
        raise ValueError(f"Table {spec.table_id}: the value range is too small for distinct cells")
    numbers = rng.sample(range(spec.low, spec.high + 1), len(keys))
    return dict(zip(keys, numbers, strict=True))


def _column_keys(spec: HCTSpec) -> list[Key | tuple[str, str]]:
    """Columns left to right: base columns as value tuples, aggregates tagged with TOTAL."""
    columns: list[Key | tuple[str, str]] = []
    if len(spec.col_dims) == 1:
        columns.extend((v,) for v in spec.col_dims[0].values)
    else:
        top, sub = spec.col_dims
        for a in top.values:
            columns.extend((a, b) for b in sub.values)
            if spec.subtotal_columns:
                columns.append((a, TOTAL))
    if spec.total_column:
        columns.append((TOTAL,))
    return columns


def _cell(values: dict[Key, int], spec: HCTSpec, row: Key, column: Key) -> int:
    """A base value, or the sum of the base values an aggregate column covers."""
    col_options = [d.values for d in spec.col_dims]
    if column == (TOTAL,):
        choices = list(itertools.product(*col_options))
    elif len(column) == 2 and column[1] == TOTAL:
        choices = [(column[0], b) for b in spec.col_dims[1].values]
    else:
        choices = [column]
    return sum(values[row + c] for c in choices)


def pivot(spec: HCTSpec, values: dict[Key, int]) -> list[list[str]]:
    """The canonical grid of the HCT."""
    columns = _column_keys(spec)
    nested_rows = len(spec.row_dims) == 2 and not spec.row_groups
    stub_names = [d.name for d in spec.row_dims] if nested_rows else [spec.row_dims[-1].name]
    stub = len(stub_names)
    grid: list[list[str]] = []
    if len(spec.col_dims) == 1:
        grid.append(stub_names + [c[0] for c in columns])
    else:
        top_row, sub_row = list(stub_names), [COVERED] * stub
        previous = None
        for column in columns:
            if column == (TOTAL,):
                top_row.append(TOTAL)
                sub_row.append(COVERED)
                continue
            top_row.append(column[0] if column[0] != previous else COVERED)
            sub_row.append(column[1])
            previous = column[0]
        grid.extend([top_row, sub_row])

    def body_row(labels: list[str], key: Key) -> list[str]:
        return labels + [str(_cell(values, spec, key, c)) for c in columns]

    width = stub + len(columns)
    row_keys = list(itertools.product(*(d.values for d in spec.row_dims)))
    if len(spec.row_dims) == 1:
        grid.extend(body_row([k[0]], k) for k in row_keys)
    elif nested_rows:
        for key in row_keys:
            first = key[0] if key[1] == spec.row_dims[1].values[0] else COVERED
            grid.append(body_row([first, key[1]], key))
    else:
        for a in spec.row_dims[0].values:
            grid.append([a] + [COVERED] * (width - 1))
            grid.extend(body_row([b], (a, b)) for b in spec.row_dims[1].values)
    if spec.total_row:
        totals = [str(sum(_cell(values, spec, key, c) for key in row_keys)) for c in columns]
        grid.append([TOTAL] + [COVERED] * (stub - 1) + totals)
    return grid


def _relational_csv(spec: HCTSpec, values: dict[Key, int]) -> str:
    dims = spec.row_dims + spec.col_dims
    header = [d.name for d in dims] + ["Value"]
    sql_names = [re.sub(r"\W+", "_", d.name) for d in dims] + ["Value"]
    return write_csv_rows([header, sql_names] + [list(k) + [str(v)] for k, v in values.items()])


def table_properties_of(spec: HCTSpec) -> dict[str, bool | int | None]:
    props = taxonomy.TABLE_PROPERTIES.empty()
    if len(spec.col_dims) == 2:
        props.update(
            multi_level_column=True,
            balanced_multi_level_column=True,
            symmetric_multi_level_column=True,
        )
    if len(spec.row_dims) == 2 and not spec.row_groups:
        props.update(row_nesting=True, balanced_row_nesting=True, symmetric_row_nesting=True)
    if spec.row_groups:
        props["row_group_label"] = True
    if spec.total_column or spec.subtotal_columns:
        props.update(column_aggregation=True, explicit_column_aggregation_terms=True)
        props["global_column_aggregation"] = spec.total_column
        props["local_column_group_aggregation"] = spec.subtotal_columns
    if spec.total_row:
        props.update(
            row_aggregation=True,
            global_row_aggregation=True,
            explicit_row_aggregation_terms=True,
        )
    if not any(props.values()):
        props["standard_relational_table"] = True
    return props


def format_number(value: float) -> str:
    """Integers plainly, other numbers to two decimals without trailing zeros."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _describe(dims: tuple[Dimension, ...], key: Key) -> str:
    return ", ".join(f"{d.name} {v}" for d, v in zip(dims, key, strict=True))


def _props(**set_values: bool | int) -> dict[str, bool | int | None]:
    props = taxonomy.QUERY_PROPERTIES.empty()
    props.update(set_values)
    return props


def generate_questions(spec: HCTSpec, values: dict[Key, int]) -> list[GeneratedQuestion]:
    """Six templates: lookup, multi-row filter, sum, average, top-1 rank and yes/no."""
    rng = random.Random(spec.seed + 1)
    row_keys = list(itertools.product(*(d.values for d in spec.row_dims)))
    col_keys = list(itertools.product(*(d.values for d in spec.col_dims)))
    depth = len(spec.col_dims)
    n_row, n_col = len(spec.row_dims), len(spec.col_dims)
    row, col = rng.choice(row_keys), rng.choice(col_keys)
    where_row, where_col = _describe(spec.row_dims, row), _describe(spec.col_dims, col)
    out: list[GeneratedQuestion] = []

    out.append(
        GeneratedQuestion(
            1,
            f"What is the {spec.value_name} for {where_row} and {where_col}?",
            f"{{{values[row + col]}}}",
            _props(
                row_filter=True,
                row_filter_lookup=True,
                row_filter_multiple_columns=n_row + n_col > 1,
                row_filter_single_column=n_row + n_col == 1,
                row_filter_max_depth=depth,
                row_filter_single_row=True,
                row_filter_conditions=n_row + n_col,
                returned_columns=True,
                returned_columns_plain=True,
                returned_columns_max_depth=depth,
                returned_columns_outputs=1,
            ),
        )
    )

    # Rows of the last row dimension above the lower median, within one value of the first:
    # values are distinct, so at least one row is strictly above it.
    prefix = row[:-1]
    candidates = [k for k in row_keys if k[:-1] == prefix]
    numbers = sorted(values[k + col] for k in candidates)
    threshold = numbers[(len(numbers) - 1) // 2]
    kept = [k for k in candidates if values[k + col] > threshold]
    scope = f" among {_describe(spec.row_dims[:-1], prefix)}" if prefix else ""
    last = spec.row_dims[-1].name
    out.append(
        GeneratedQuestion(
            2,
            f"For {where_col}{scope}, for which {last} values is the {spec.value_name} above "
            f"{threshold}? Report each with its value.",
            " || ".join(f"{{{k[-1]} | {values[k + col]}}}" for k in kept),
            _props(
                row_filter=True,
                row_filter_expression=True,
                row_filter_lookup=bool(prefix),
                row_filter_single_column=True,
                row_filter_max_depth=depth,
                row_filter_multiple_rows=len(kept) > 1,
                row_filter_single_row=len(kept) == 1,
                row_filter_conditions=1 + len(prefix),
                returned_columns=True,
                returned_columns_plain=True,
                returned_columns_max_depth=depth,
                returned_columns_outputs=2,
            ),
        )
    )

    total = sum(values[row + c] for c in col_keys)
    out.append(
        GeneratedQuestion(
            3,
            f"What is the total {spec.value_name} for {where_row}, summed over all "
            f"{' and '.join(d.name for d in spec.col_dims)} values?",
            f"{{{total}}}",
            _props(
                row_filter=True,
                row_filter_lookup=True,
                row_filter_single_column=n_row == 1,
                row_filter_multiple_columns=n_row > 1,
                row_filter_max_depth=1,
                row_filter_single_row=True,
                row_filter_conditions=n_row,
                returned_columns=True,
                returned_columns_expression=True,
                returned_columns_max_depth=depth,
                returned_columns_outputs=1,
                aggregation=True,
                aggregation_plain=True,
                aggregation_sum=True,
                aggregation_global=True,
                aggregation_in_table=spec.total_column,
                aggregation_not_in_table=not spec.total_column,
                aggregation_count_of_aggregations=1,
            ),
        )
    )

    mean = sum(values[k + col] for k in row_keys) / len(row_keys)
    row_names = " and ".join(d.name for d in spec.row_dims)
    out.append(
        GeneratedQuestion(
            4,
            f"What is the average {spec.value_name} per {row_names} for {where_col}, "
            "not counting totals?",
            f"{{{format_number(mean)}}}",
            _props(
                returned_columns=True,
                returned_columns_expression=True,
                returned_columns_expression_not_in_table=True,
                returned_columns_max_depth=depth,
                returned_columns_outputs=1,
                aggregation=True,
                aggregation_plain=True,
                aggregation_average=True,
                aggregation_global=True,
                aggregation_not_in_table=True,
                aggregation_count_of_aggregations=1,
            ),
        )
    )

    best = max(row_keys, key=lambda k: values[k + col])
    out.append(
        GeneratedQuestion(
            5,
            f"Which {row_names} has the highest {spec.value_name} for {where_col}? "
            "Report it with the value.",
            "{" + " | ".join([*best, str(values[best + col])]) + "}",
            _props(
                returned_columns=True,
                returned_columns_plain=True,
                returned_columns_max_depth=depth,
                returned_columns_outputs=n_row + 1,
                rank=True,
                rank_plain=True,
                rank_top=1,
            ),
        )
    )

    other = rng.choice([k for k in row_keys if k != row])
    answer = "Yes" if values[row + col] > values[other + col] else "No"
    out.append(
        GeneratedQuestion(
            6,
            f"For {where_col}, is the {spec.value_name} of {where_row} greater than that of "
            f"{_describe(spec.row_dims, other)}?",
            answer,
            _props(
                row_filter=True,
                row_filter_lookup=True,
                row_filter_single_column=n_row == 1,
                row_filter_multiple_columns=n_row > 1,
                row_filter_max_depth=1,
                row_filter_multiple_rows=True,
                row_filter_conditions=2,
                yes_no=True,
                yes_no_multiple_scope=True,
            ),
        )
    )
    return out


def generate(spec: HCTSpec) -> GeneratedTable:
    values = _values(spec)
    return GeneratedTable(
        spec=spec,
        canonical_csv=write_csv_rows(pivot(spec, values)),
        relational_csv=_relational_csv(spec, values),
        table_properties=table_properties_of(spec),
        questions=tuple(generate_questions(spec, values)),
    )
