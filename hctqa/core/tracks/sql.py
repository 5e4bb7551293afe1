"""The NL-to-SQL track: from a question and the relational table's schema to SQL.

**Items** (``sql_item``, ``sql_items``): one per synthetic question with SQL, under the QA
question's own id (``synthetic--<table>--T<n>``), so that the SQL board and the QA board
line up question by question. Inputs: ``question`` (the ``nlq``) and ``schema``: the table
``DBdata`` with each column's SQL name, type and, for the attribute columns, its distinct
values in the table's order (``Value``'s are the data being asked about, so they are not
listed). Gold: the generator's ``sql``, exactly. Reference (hidden like gold): the
relational CSV (``DB.csv``), the gold answer (``sqlResult``) and whether the gold orders its
rows.

**Figures** (``score_sql``), means over items:

- ``execution_accuracy``: the prediction runs in the sandbox (``sandbox``) on the item's
  table; its rows, formatted as the generator formats ``sqlResult`` (R's rounding to two
  decimals and number printing, ``{a | b}`` per row), equal the gold answer's rows: in the
  same order where the gold SQL has ``ORDER BY``, as a multiset otherwise. Values within a
  row keep their order (the question says which comes first);
- ``recall`` (and ``recall_2025_10``): the QA scorer (``scoring``, rules ``2025-05`` and
  ``2025-10``) applied to the executed result, read as a QA response: every value of every
  row joined with `` || ``, as the QA prompt asks models to answer. A statement that fails
  answers the empty string. So an SQL system and a QA model are measured alike on the same
  question.

A prediction that is missing, or that the sandbox refuses or stops, scores 0 with the reason
recorded; the rest of the file is scored. A file's statements share a time budget
(``budget_seconds``): once it is spent, the remaining items score 0 with the reason
``budget``, so one file cannot hold a worker for hours.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from hctqa.core import scoring
from hctqa.core.hidden_text import without_hidden
from hctqa.core.release import ReleaseTable
from hctqa.core.synthgen.questions import format_result
from hctqa.core.tracks.sandbox import (
    TABLE,
    VALUE_COLUMN,
    Execution,
    SqlSandbox,
    read_relational_csv,
)
from hctqa.core.tracks.shared import (
    REASON_MISSING,
    Item,
    ItemResult,
    Scorecard,
    TrackError,
    mean,
)

TRACK = "sql"
FIGURES = ("execution_accuracy", "recall", "recall_2025_10")
REASON_BUDGET = "budget"
# A file's statements may run this long in all, plus this much per statement: far above an
# honest file's needs (10,000 statements take about 10 s), far below a worker's day.
BUDGET_SECONDS = 60.0
BUDGET_SECONDS_PER_ITEM = 0.05
# How much of an executed result an item's result keeps to show.
SHOWN_RESULT_CHARS = 2_000

_STRING_OR_COMMENT = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?(?:\*/|$)", re.S
)
_ORDER_BY = re.compile(r"\border\s+by\b", re.I)


def orders_rows(sql: str) -> bool:
    """Whether a statement has ``ORDER BY`` outside its strings and comments."""
    return bool(_ORDER_BY.search(_STRING_OR_COMMENT.sub(" ", sql)))


# --- Items ---------------------------------------------------------------------------------


def schema_of(relational_csv: str) -> dict[str, Any]:
    """The schema a system is given: ``{"table": "DBdata", "columns": [{"name", "type",
    "values"?}]}``; attribute columns list their distinct values in the table's order."""
    table = read_relational_csv(relational_csv)
    columns: list[dict[str, Any]] = []
    for position, name in enumerate(table.sql_names):
        if name == VALUE_COLUMN:
            columns.append({"name": name, "type": "REAL"})
            continue
        values = list(dict.fromkeys(row[position] for row in table.rows))
        columns.append({"name": name, "type": "TEXT", "values": values})
    return {"table": TABLE, "columns": columns}


def sql_item(
    *,
    item_id: str,
    table_id: str,
    question: str,
    sql: str,
    gold_answer: str,
    relational_csv: str,
) -> Item:
    """One NL-to-SQL item from a question's text, SQL and gold answer and its table's
    relational CSV (the strings the dataset stores)."""
    if not question.strip() or not sql.strip():
        raise TrackError(f"{item_id}: an NL-to-SQL item needs a question and its SQL")
    return Item(
        id=item_id,
        track=TRACK,
        table_id=table_id,
        split_key=table_id,
        inputs={"question": question, "schema": schema_of(relational_csv)},
        gold=sql,
        reference={
            "relational_csv": relational_csv,
            "gold_answer": gold_answer,
            "ordered": orders_rows(sql),
        },
    )


def sql_items(table: ReleaseTable) -> list[Item]:
    """The NL-to-SQL items of a synthetic table read from the release (every question with
    SQL)."""
    if table.synthetic is None:
        raise TrackError(f"{table.id} is not a synthetic table: it has no relational table")
    return [
        sql_item(
            item_id=q.id,
            table_id=table.id,
            question=q.text,
            sql=q.sql,
            gold_answer=q.gold_answer,
            relational_csv=table.synthetic.relational_csv,
        )
        for q in table.questions
        if q.sql
    ]


# --- Scoring -------------------------------------------------------------------------------


def result_rows(execution: Execution) -> list[str]:
    """Each result row as the generator writes it in ``sqlResult``: ``{a | b}``."""
    return [format_result([row]) for row in execution.rows]


def gold_rows(gold_answer: str) -> list[str]:
    """The rows of a gold answer in the generator's format (``""`` is no row)."""
    return gold_answer.split(" || ") if gold_answer else []


def qa_response(execution: Execution) -> str:
    """The executed result read as a QA answer: every value joined with `` || ``."""
    return " || ".join(format_result([(v,)])[1:-1] for row in execution.rows for v in row)


def _shown(execution: Execution) -> str:
    text = without_hidden(format_result(execution.rows))
    return text if len(text) <= SHOWN_RESULT_CHARS else text[:SHOWN_RESULT_CHARS] + "…"


def same_result(execution: Execution, gold_answer: str, *, ordered: bool) -> bool:
    """Execution accuracy for one item: the result's rows equal the gold answer's, in order
    when ``ordered``, as a multiset otherwise."""
    found, wanted = result_rows(execution), gold_rows(gold_answer)
    if ordered:
        return found == wanted
    return Counter(found) == Counter(wanted)


def score_sql(
    items: Sequence[Item],
    predictions: Mapping[str, Any],
    *,
    sandbox: SqlSandbox | None = None,
    budget_seconds: float | None = None,
    model_name: str = "",
) -> Scorecard:
    """Score NL-to-SQL predictions (item id → SQL text or None) on ``items``.

    Statements run one at a time in ``sandbox`` (a fresh one, closed at the end, when not
    given). ``budget_seconds`` bounds the whole file (default ``BUDGET_SECONDS`` plus
    ``BUDGET_SECONDS_PER_ITEM`` per item). ``model_name`` decides the 2025-10 rule for models
    named like GPT, as on the QA board.
    """
    budget = (
        budget_seconds
        if budget_seconds is not None
        else BUDGET_SECONDS + BUDGET_SECONDS_PER_ITEM * len(items)
    )
    own = sandbox is None
    box = sandbox or SqlSandbox()
    started = time.monotonic()
    accuracy: dict[str, float] = {}
    responses: dict[str, str] = {}
    failures: dict[str, tuple[str, str]] = {}
    details: dict[str, dict[str, Any]] = {}
    try:
        for item in items:
            sql = predictions.get(item.id)
            accuracy[item.id] = 0.0
            responses[item.id] = ""
            if sql is None:
                failures[item.id] = (REASON_MISSING, "No prediction for this item")
                continue
            if time.monotonic() - started > budget:
                failures[item.id] = (
                    REASON_BUDGET,
                    f"Not run: the file's statements had used their {budget:g} s",
                )
                continue
            execution = box.run(item.reference["relational_csv"], sql)
            details[item.id] = {"steps": execution.steps, "seconds": round(execution.seconds, 4)}
            if not execution.ok:
                failures[item.id] = (execution.code, execution.message)
                continue
            details[item.id]["result"] = _shown(execution)
            right = same_result(
                execution, item.reference["gold_answer"], ordered=item.reference["ordered"]
            )
            accuracy[item.id] = float(right)
            responses[item.id] = qa_response(execution)
    finally:
        if own:
            box.close()
    gold_answers = {item.id: item.reference["gold_answer"] for item in items}
    qa = scoring.evaluate_all(gold_answers, responses, "text", model_name=model_name)
    recall = {rules: {q: s.recall for q, s in ev.scores.items()} for rules, ev in qa.items()}
    results = {}
    for item in items:
        figures = {
            "execution_accuracy": accuracy[item.id],
            "recall": recall["2025-05"].get(item.id, 0.0),
            "recall_2025_10": recall["2025-10"].get(item.id, 0.0),
        }
        code, message = failures.get(item.id, ("", ""))
        results[item.id] = ItemResult(
            item.id, figures, reason=code, message=message, detail=details.get(item.id, {})
        )
    return Scorecard(
        track=TRACK,
        n=len(items),
        figures={
            "execution_accuracy": mean(accuracy.values()),
            "recall": qa["2025-05"].overall.recall,
            "recall_2025_10": qa["2025-10"].overall.recall,
        },
        results=results,
        extra={"qa": {rules: ev.overall.as_dict() for rules, ev in qa.items()}},
    )
