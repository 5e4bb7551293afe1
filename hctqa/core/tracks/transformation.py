"""The transformation track: from a human-centric table to its relational form.

**Items** (``transformation_item``, ``transformation_items``): one per synthetic table, under
the table's id. Inputs: ``hct``, the table in each text format of the QA prompts
(``prompts.table_text``: ``csv``, ``html``, ``markdown``, ``json``, ``latex`` and ``paper``,
pandas' rendering), so that a system reads the format it prefers. Gold: the relational
table (the generator's ``DB.csv``) as CSV text: one header row (the display names), then one
row per combination of attribute values with its ``Value``. A prediction is CSV text of the
same shape: a header row (its names are not scored), then one column per attribute and one
for the value, in any order.

**Figures** (``score_transformation``), means over items:

- every value, predicted and gold, is normalized as the QA scorer normalizes gold values
  (``scoring.normalize_value``: lower-cased and stripped, commas between digits and trailing
  decimal zeros dropped, so ``55.00`` is ``55``);
- **columns are matched by their values**: predicted column j and gold column i share
  ``w[j][i]`` values (the size of the multiset intersection of their normalized values);
  among the one-to-one assignments of predicted to gold columns with the largest total
  ``w`` (found by ``scipy.optimize.linear_sum_assignment``, ties enumerated, at most
  ``MAX_ASSIGNMENTS``), the one under which the most rows are right is taken (the first in
  column order on a tie). Names and order never count;
- each predicted row is read in the gold's column order through that assignment (a gold
  column no predicted column is assigned to matches nothing); a predicted row is right when
  it equals a gold row, each gold row matched once (multisets);
- ``row_precision`` = right / predicted rows, ``row_recall`` = right / gold rows,
  ``row_f1`` their harmonic mean; ``exact`` = 1 when the prediction has exactly the gold's
  columns and rows (precision and recall 1, no extra column).

A prediction that is missing or not readable CSV scores 0 with the reason recorded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from hctqa.core.prompts import KEPT_WORDS, table_text
from hctqa.core.release import ReleaseTable
from hctqa.core.scoring import normalize_value
from hctqa.core.tables import TableFormatError, parse_table, read_csv_rows, write_csv_rows
from hctqa.core.tracks.sandbox import TableError, read_relational_csv
from hctqa.core.tracks.shared import (
    REASON_MISSING,
    Item,
    ItemResult,
    PredictionError,
    Scorecard,
    TrackError,
    f1,
    mean,
)
from hctqa.core.wording import counted

TRACK = "transformation"
FIGURES = ("row_precision", "row_recall", "row_f1", "exact")
HCT_FORMATS = ("csv", "html", "markdown", "json", "latex", "paper")
MAX_ROWS = 100_000
MAX_COLUMNS = 64
MAX_CELLS = 400_000
_UNMATCHED = object()
# Assignments of columns sharing the most values that are compared row by row (ties).
MAX_ASSIGNMENTS = 1_000
MAX_SEARCH_STEPS = 100_000


# --- Items ---------------------------------------------------------------------------------


def relational_gold(relational_csv: str) -> str:
    """``DB.csv`` as the track's gold: its display-name header and its rows (the SQL-name
    line left out), LF line ends."""
    try:
        table = read_relational_csv(relational_csv)
    except TableError as exc:
        raise TrackError(f"The relational table cannot be read: {exc}") from None
    return write_csv_rows([list(table.display_names), *map(list, table.rows)])


def transformation_item(*, table_id: str, canonical_csv: str, relational_csv: str) -> Item:
    """A transformation item from a table's canonical CSV and relational CSV."""
    try:
        hct = {fmt: table_text(canonical_csv, fmt) for fmt in HCT_FORMATS}
    except (TableFormatError, ValueError) as exc:
        raise TrackError(f"{table_id}: the table cannot be rendered ({exc})") from None
    return Item(
        id=table_id,
        track=TRACK,
        table_id=table_id,
        split_key=table_id,
        inputs={"hct": hct},
        gold=relational_gold(relational_csv),
    )


def transformation_items(table: ReleaseTable) -> list[Item]:
    if table.synthetic is None:
        raise TrackError(f"{table.id} is not a synthetic table: it has no relational table")
    return [
        transformation_item(
            table_id=table.id,
            canonical_csv=table.canonical_csv,
            relational_csv=table.synthetic.relational_csv,
        )
    ]


# --- Scoring -------------------------------------------------------------------------------


def read_relation(csv_text: Any) -> list[tuple[str, ...]]:
    """The normalized rows of a relational CSV (its header row left out)."""
    if not isinstance(csv_text, str):
        raise PredictionError("A transformation prediction is CSV text")
    try:
        rows = read_csv_rows(csv_text)
    except TableFormatError as exc:
        raise PredictionError(str(exc)) from None
    body = rows[1:]
    width = len(rows[0])
    if width > MAX_COLUMNS or len(body) > MAX_ROWS or width * len(body) > MAX_CELLS:
        raise PredictionError(
            f"The CSV is {counted(len(body), 'row')} × {counted(width, 'column')}, over the limits "
            f"({MAX_ROWS:,} rows, {MAX_COLUMNS} columns, {MAX_CELLS:,} cells)"
        )
    return [tuple(normalize_value(v) for v in row) for row in body]


def _right_rows(
    predicted: Sequence[tuple[str, ...]], gold_rows: Counter, columns: Mapping[int, int], width: int
) -> int:
    projected = Counter(
        tuple(row[columns[i]] if i in columns else _UNMATCHED for i in range(width))
        for row in predicted
    )
    return sum((projected & gold_rows).values())


def _best_assignments(shared: np.ndarray) -> list[dict[int, int]]:
    """Every one-to-one assignment (gold column → predicted column) with the largest total
    of shared values, in column order, at most ``MAX_ASSIGNMENTS`` of them."""
    n_pred, n_gold = shared.shape
    pred_index, gold_index = linear_sum_assignment(shared, maximize=True)
    best = int(shared[pred_index, gold_index].sum())
    found: list[dict[int, int]] = []
    # The most each remaining gold column could still add: a bound to prune by.
    column_max = shared.max(axis=0) if n_pred else np.zeros(n_gold, dtype=np.int64)
    rest = np.concatenate((np.cumsum(column_max[::-1])[::-1], [0]))
    steps = 0

    def walk(i: int, used: set[int], total: int, chosen: dict[int, int]) -> None:
        nonlocal steps
        steps += 1
        if len(found) >= MAX_ASSIGNMENTS or steps > MAX_SEARCH_STEPS:
            return
        if total + rest[i] < best:
            return
        if i == n_gold:
            found.append({g: p for g, p in chosen.items() if shared[p, g] > 0})
            return
        for j in range(n_pred):
            if j not in used and shared[j, i] > 0:
                chosen[i] = j
                walk(i + 1, used | {j}, total + int(shared[j, i]), chosen)
                del chosen[i]
        walk(i + 1, used, total, chosen)  # no predicted column for this gold column

    walk(0, set(), 0, {})
    if not found:  # the search was cut short: the solver's own assignment
        found.append(
            {int(g): int(p) for p, g in zip(pred_index, gold_index, strict=True) if shared[p, g]}
        )
    return found


def match_columns(
    predicted: Sequence[tuple[str, ...]], gold: Sequence[tuple[str, ...]]
) -> dict[int, int]:
    """Gold column → predicted column: among the assignments sharing the most values, the
    one under which the most rows are right (the first in column order on a tie)."""
    if not predicted or not gold:
        return {}
    n_pred, n_gold = len(predicted[0]), len(gold[0])
    pred_columns = [Counter(row[j] for row in predicted) for j in range(n_pred)]
    gold_columns = [Counter(row[i] for row in gold) for i in range(n_gold)]
    shared = np.array(
        [[sum((p & g).values()) for g in gold_columns] for p in pred_columns], dtype=np.int64
    )
    candidates = _best_assignments(shared)
    if len(candidates) == 1:
        return candidates[0]
    gold_rows = Counter(gold)
    return max(candidates, key=lambda c: _right_rows(predicted, gold_rows, c, n_gold))


def compare_relations(
    predicted: Sequence[tuple[str, ...]], gold: Sequence[tuple[str, ...]]
) -> dict[str, float]:
    """An item's figures from normalized rows (headers left out)."""
    if not gold:
        raise TrackError("A gold relational table has rows")
    columns = match_columns(predicted, gold)
    n_gold = len(gold[0])
    right = _right_rows(predicted, Counter(gold), columns, n_gold)
    precision = right / len(predicted) if predicted else 0.0
    recall = right / len(gold)
    exact = bool(predicted) and len(predicted[0]) == n_gold and right == len(predicted) == len(gold)
    return {
        "row_precision": precision,
        "row_recall": recall,
        "row_f1": f1(precision, recall),
        "exact": float(exact),
    }


def score_transformation(items: Sequence[Item], predictions: Mapping[str, Any]) -> Scorecard:
    """Score transformation predictions (item id → CSV text or None) on ``items``."""
    results: dict[str, ItemResult] = {}
    zero = dict.fromkeys(FIGURES, 0.0)
    for item in items:
        value = predictions.get(item.id)
        if value is None:
            results[item.id] = ItemResult(item.id, zero, REASON_MISSING, "No prediction")
            continue
        try:
            predicted = read_relation(value)
        except PredictionError as exc:
            results[item.id] = ItemResult(item.id, zero, exc.code, exc.message)
            continue
        figures = compare_relations(predicted, read_relation(item.gold))
        results[item.id] = ItemResult(item.id, figures, detail={"rows": len(predicted)})
    return Scorecard(
        track=TRACK,
        n=len(items),
        figures={name: mean(r.figures[name] for r in results.values()) for name in FIGURES},
        results=results,
    )


# --- The unpivot baseline ------------------------------------------------------------------

AGGREGATE_WORDS = KEPT_WORDS | {"all"}


def _is_aggregate(label: str) -> bool:
    return " ".join(label.lower().split()) in AGGREGATE_WORDS


def unpivot(canonical_csv: str) -> str:
    """The relational form the platform reads off a table's headers, as a prediction.

    The table is parsed as the dataset parses it (``tables.parse_table``: header rows, row
    header columns, merged cells). Each value cell becomes a row: the labels of its row
    header columns, then the labels above it in each header row (merged labels repeated
    into every position they cover), then its value. A blank row label takes the label
    above it at that level (a group's label on its first row, or on an outline row). Rows
    and columns labelled as aggregates (Total, Average, Minimum, …) are left out, and so is
    an outline row: a row label spanning every row header column above rows with labels of
    their own. A row repeating the labels of one already written is left out too.
    """
    table = parse_table(canonical_csv)
    owners: dict[tuple[int, int], str] = {}
    spans: dict[tuple[int, int], int] = {}
    for cell in table.cells:
        for r in range(cell.row, cell.row + cell.rowspan):
            for c in range(cell.col, cell.col + cell.colspan):
                owners[(r, c)] = " ".join(cell.text.split())
                spans[(r, c)] = cell.colspan
    hr, hc = table.header_rows, table.header_columns
    columns = [(c, [owners.get((r, c), "") for r in range(hr)]) for c in range(hc, table.n_columns)]
    columns = [(c, path) for c, path in columns if not any(_is_aggregate(x) for x in path)]
    out: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    current = [""] * hc
    for r in range(hr, table.n_rows):
        labels = [owners.get((r, c), "") for c in range(hc)]
        outline = hc > 1 and labels[0] and spans.get((r, 0), 1) >= hc
        for level, label in enumerate(labels):
            if label and label != current[level]:
                current[level] = label
                current[level + 1 :] = [""] * (hc - level - 1)
        if outline:
            continue
        path = [labels[level] or current[level] for level in range(hc)]
        if any(_is_aggregate(x) for x in path):
            continue
        for c, column_path in columns:
            value = owners.get((r, c), "")
            key = (*path, *column_path)
            if not value or key in seen:
                continue
            seen.add(key)
            out.append([*key, value])
    width = hc + hr
    header = [f"Attribute {i}" for i in range(1, width + 1)] + ["Value"]
    return write_csv_rows([header, *out])
