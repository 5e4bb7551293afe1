"""Stage 3: the 15 question templates, their SQL, gold answers and text (SYNTHETIC.md §6).

Gold answers come from running each query with the standard library's ``sqlite3`` on the
relational table, formatted as the released ``sqlResult`` (R's ``round(x, 2)`` and number
printing). The draws follow the original script, including the 20 draws R's sqldf spends on
savepoint names before every query.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hctqa.core.synthgen.nltext import (
    ForWhich,
    OrderBy,
    Selection,
    for_which_premise,
    question_text,
    r_strsplit,
    report_text,
    squish,
)
from hctqa.core.synthgen.params import QuestionTemplates
from hctqa.core.synthgen.rrandom import RRandom, r_colon, r_format, r_round, sample_r

EXPRESSIONS = ("sum", "min", "max", "avg")
SQL_TIMEOUT_STEPS = 2_000_000  # sqlite VM steps per query before it is abandoned


class SqlError(RuntimeError):
    pass


class Database:
    """The relational table as ``DBdata`` in an in-memory SQLite database (attributes as
    TEXT, Value as REAL, rows in DB order)."""

    def __init__(
        self, sql_names: Sequence[str], rows: Sequence[Sequence[str]], values: Sequence[float]
    ):
        self.connection = sqlite3.connect(":memory:")
        columns = ", ".join(f'"{n}" TEXT' for n in sql_names) + ', "Value" REAL'
        self.connection.execute(f"CREATE TABLE DBdata ({columns})")
        marks = ", ".join("?" * (len(sql_names) + 1))
        self.connection.executemany(
            f"INSERT INTO DBdata VALUES ({marks})",
            [(*r, float(v)) for r, v in zip(rows, values, strict=True)],
        )
        steps = [0]

        def guard() -> int:
            steps[0] += 1
            return 1 if steps[0] > SQL_TIMEOUT_STEPS // 100_000 else 0

        self._steps = steps
        self.connection.set_progress_handler(guard, 100_000)

    def run(self, sql: str) -> list[tuple]:
        self._steps[0] = 0
        try:
            return self.connection.execute(sql).fetchall()
        except sqlite3.Error as exc:
            raise SqlError(f"The SQL failed ({exc}): {sql}") from None

    def close(self) -> None:
        self.connection.close()


def format_result(rows: Sequence[Sequence[object]]) -> str:
    """``{a | b} || {c | d}``: numbers rounded with R's round(x, 2) and printed as R does."""

    def cell(value: object) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return r_format(r_round(float(value), 2))
        return "NA" if value is None else str(value)

    return " || ".join("{" + " | ".join(cell(v) for v in row) + "}" for row in rows)


@dataclass(frozen=True)
class Question:
    template: int
    sql: str
    answer: str
    texts: tuple[str, ...]


@dataclass(frozen=True)
class TableData:
    """What stage 3 reads: DB.csv (SQL names) and the HCT signature."""

    table_id: str
    sql_names: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    values: tuple[float, ...]
    col_names: tuple[str, ...]  # SQL names, HCT order
    row_names: tuple[str, ...]
    aggregated_columns: bool
    agg_fun: str


def _r_mean(values: Sequence[float]) -> float:
    x = np.array(values, dtype=np.longdouble)
    n = np.longdouble(len(values))
    s = np.cumsum(x)[-1] / n
    if np.isfinite(s):
        s += np.cumsum(x - s)[-1] / n
    return float(s)


class _Headers:
    def __init__(self, names: Sequence[str], rows: Sequence[tuple[str, ...]]):
        self.names = tuple(names)
        self.rows = tuple(rows)

    def selection(self, indices: Sequence[int]) -> Selection:
        return Selection(self.names, tuple(self.rows[i - 1] for i in indices))

    def clause(self, indices: Sequence[int]) -> str:
        if len(self.names) > 1:
            parts = []
            for i in indices:
                row = self.rows[i - 1]
                parts.append(
                    "("
                    + " AND ".join(f"{n} = '{v}'" for n, v in zip(self.names, row, strict=True))
                    + ")"
                )
            inner = " OR ".join(parts)
        else:
            inner = (
                f"{self.names[0]} IN ("
                + ",".join(f"'{self.rows[i - 1][0]}'" for i in indices)
                + ")"
            )
        return f"({inner})"


def _pick(rng: RRandom, headers: _Headers, low: int, high: int) -> list[int]:
    """R's geneIndexForRandomClauses: sorted 1-based indices."""
    n = len(headers.rows)
    if low == 0 and high == 0:
        return list(range(1, n + 1))
    if low == high:
        k = low
    else:
        seq = r_colon(max(1, min(low, high)), min(n, max(low, high)))
        k = sample_r(rng, seq)[0]
    perm = sample_r(rng, r_colon(1, n))
    return sorted(perm[:k])


class _Generator:
    def __init__(
        self, rng: RRandom, data: TableData, templates: QuestionTemplates, names: Sequence[str]
    ):
        self.rng = rng
        self.data = data
        self.templates = templates
        self.names = list(names)  # display names of the family's codes: rows, then columns
        self.db = Database(data.sql_names, data.rows, data.values)
        index = {n: i for i, n in enumerate(data.sql_names)}
        rows = data.rows
        first = rows[0]
        col_idx = [index[n] for n in data.col_names]
        row_idx = [index[n] for n in data.row_names]
        col_rows = [r for r in rows if all(r[i] == first[i] for i in row_idx)]
        row_rows = [r for r in rows if all(r[i] == first[i] for i in col_idx)]
        self.col_h = _Headers(data.col_names, [tuple(r[i] for i in col_idx) for r in col_rows])
        self.row_h = _Headers(data.row_names, [tuple(r[i] for i in row_idx) for r in row_rows])
        level1 = list(dict.fromkeys(r[0] for r in self.row_h.rows))
        self.l1 = _Headers(data.row_names[:1], [(v,) for v in level1])

    def sql(self, query: str) -> list[tuple]:
        self.rng.sample_letters(10)  # sqldf's two random savepoint names
        self.rng.sample_letters(10)
        return self.db.run(query)

    def text(self, number: int, columns, rows, **kwargs) -> tuple[str, ...]:
        return tuple(
            question_text(
                pattern,
                columns=columns,
                rows=rows,
                all_names=self.names,
                simplify_nested=self.templates.simplify_nested,
                **kwargs,
            )
            for pattern in self.templates.patterns[number]
        )

    def expressions(self, pool: Sequence[str], count: int) -> list[str]:
        order = self.rng.sample_number(len(pool))
        return [pool[i - 1] for i in order[:count]]

    def select(
        self, number: int, rows_pick, cols_pick, expr_pool=None, expr_count=0, group_by=None
    ):
        r = _pick(self.rng, *rows_pick)
        c = _pick(self.rng, *cols_pick)
        row_h, col_h = rows_pick[0], cols_pick[0]
        where = f"{col_h.clause(c)} AND {row_h.clause(r)}"
        expressions = self.expressions(expr_pool, expr_count) if expr_pool else []
        selected = ",".join(f"{e}(Value)" for e in expressions) or "Value"
        if group_by:
            keys = ",".join(group_by)
            head = selected if number == 9 else f"{keys},{selected}"
            query = f"SELECT {head} FROM DBdata WHERE {where} GROUP BY {keys}"
        else:
            query = f"SELECT {selected} FROM DBdata WHERE {where}"
        answer = format_result(self.sql(query))
        return query, answer, col_h.selection(c), row_h.selection(r), expressions

    def run(self) -> list[Question]:
        out: list[Question] = []
        row_h, col_h, l1 = self.row_h, self.col_h, self.l1
        report_pattern = self.templates.report

        def add(number: int, query: str, answer: str, texts: tuple[str, ...]) -> None:
            out.append(Question(number, query, answer, texts))

        for number, rows_pick, cols_pick in (
            (1, (row_h, 1, 1), (col_h, 1, 1)),
            (2, (row_h, 2, 10), (col_h, 1, 1)),
            (3, (row_h, 1, 1), (col_h, 2, 10)),
        ):
            q, a, cs, rs, _ = self.select(number, rows_pick, cols_pick)
            add(number, q, a, self.text(number, cs, rs))

        pool4 = (
            [e for e in EXPRESSIONS if e != self.data.agg_fun]
            if self.data.aggregated_columns
            else list(EXPRESSIONS)
        )
        q, a, cs, rs, ex = self.select(4, (row_h, 1, 1), (col_h, 2, 10), pool4, 2)
        add(4, q, a, self.text(4, cs, rs, expressions=ex))

        if self.data.aggregated_columns:
            add(*self.template5())

        q, a, cs, rs, _ = self.select(6, (row_h, 2, 4), (col_h, 2, 5))
        add(6, q, a, self.text(6, cs, rs))
        q, a, cs, rs, ex = self.select(7, (row_h, 2, 5), (col_h, 1, 1), EXPRESSIONS, 2)
        add(7, q, a, self.text(7, cs, rs, expressions=ex))
        group8 = list(col_h.names)
        q, a, cs, rs, ex = self.select(8, (row_h, 2, 5), (col_h, 2, 5), EXPRESSIONS, 2, group8)
        report8 = report_text(self._display(group8), report_pattern)
        add(
            8,
            q,
            a,
            tuple(f"{t} {report8}" for t in self.text(8, cs, rs, expressions=ex, group_by=group8)),
        )

        group9 = [row_h.names[0]]
        q, a, cs, rs, ex = self.select_fixed(9, None, group9, (col_h, 1, 1))
        add(9, q, a, self.text(9, cs, rs, expressions=ex, group_by=group9))
        report = report_text(self._display(group9), report_pattern)
        q, a, cs, rs, ex = self.select_fixed(10, EXPRESSIONS, group9, (col_h, 1, 1))
        add(
            10,
            q,
            a,
            tuple(f"{t} {report}" for t in self.text(10, cs, rs, expressions=ex, group_by=group9)),
        )
        group11 = group9 + list(col_h.names)
        report = report_text(self._display(group11), report_pattern)
        q, a, cs, rs, ex = self.select_fixed(11, EXPRESSIONS, group11, (col_h, 2, 3))
        add(
            11,
            q,
            a,
            tuple(f"{t} {report}" for t in self.text(11, cs, rs, expressions=ex, group_by=group11)),
        )

        for number in (12, 13):
            r = _pick(self.rng, l1, 2, 2)
            c = _pick(self.rng, col_h, 1, 1)
            where = f"{col_h.clause(c)} AND {l1.clause(r)}"
            base = f"SELECT Value FROM DBdata WHERE {where}"
            if number == 12:
                count = len(self.sql(base))
                direction = self.rng.sample(["ASC", "DESC"])[0]
                top = min(max(1, count - 1), 5)
                k = 2 if top <= 2 else sample_r(self.rng, r_colon(2, top))[0]
                query = f"{base} ORDER BY VALUE {direction} LIMIT {k}"
            else:
                direction = self.rng.sample(["ASC", "DESC"])[0]
                k = 0
                query = f"{base} ORDER BY VALUE {direction}"
            answer = format_result(self.sql(query))
            texts = self.text(
                number, col_h.selection(c), l1.selection(r), order_by=OrderBy(k, direction)
            )
            add(number, query, answer, texts)

        q14, a14, t14, c14 = self.template14()
        add(14, q14, a14, (t14,))
        add(*self.template15(q14, t14, c14))
        self.db.close()
        return out

    def _display(self, sql_names: Sequence[str]) -> list[str]:
        from hctqa.core.synthgen.params import sql_name

        return [next((n for n in self.names if sql_name(n) == s), s) for s in sql_names]

    def select_fixed(self, number, pool, group_by, cols_pick):
        # Templates 9-11: every level-1 row group (no draw), then the columns, then one
        # expression (template 9 always asks for the minimum).
        r = list(range(1, len(self.l1.rows) + 1))
        c = _pick(self.rng, *cols_pick)
        expressions = self.expressions(pool, 1) if pool else ["min"]
        col_h = cols_pick[0]
        where = f"{col_h.clause(c)} AND {self.l1.clause(r)}"
        selected = ",".join(f"{e}(Value)" for e in expressions)
        keys = ",".join(group_by)
        head = selected if number == 9 else f"{keys},{selected}"
        query = f"SELECT {head} FROM DBdata WHERE {where} GROUP BY {keys}"
        answer = format_result(self.sql(query))
        return query, answer, col_h.selection(c), self.l1.selection(r), expressions

    def template5(self) -> tuple[int, str, str, tuple[str, ...]]:
        col_h, row_h = self.col_h, self.row_h
        fun = self.data.agg_fun
        r = _pick(self.rng, row_h, 1, 1)
        names = list(col_h.names)
        x_index = self.rng.sample_number(len(names))[0] - 1
        x = names[x_index]
        parents = names[:x_index]
        clauses = []
        fixed: dict[str, str] = {}
        if len(parents) == 1:
            values = list(dict.fromkeys(row[0] for row in col_h.rows))
            chosen = self.rng.sample(values)[0]
            fixed = {parents[0]: chosen}
        elif parents:
            combos = list(dict.fromkeys(row[:x_index] for row in col_h.rows))
            chosen_index = self.rng.sample_number(len(combos))[0] - 1
            fixed = dict(zip(parents, combos[chosen_index], strict=True))
        for name, value in fixed.items():
            clauses.append(f"{name} = '{value}'")
        matching = [
            row for row in col_h.rows if all(row[names.index(n)] == v for n, v in fixed.items())
        ]
        in_values = list(dict.fromkeys(row[x_index] for row in matching))
        clauses.append(f"({x} IN ('" + "','".join(in_values) + "'))")
        where = " AND ".join(clauses) + " AND " + row_h.clause(r)
        query = f"SELECT {fun}(Value) FROM DBdata WHERE {where}"
        answer = format_result(self.sql(query))
        sel_names = (x, *fixed.keys())
        sel = Selection(sel_names, tuple((v, *fixed.values()) for v in in_values))
        return 5, query, answer, self.text(5, sel, row_h.selection(r), expressions=[fun])

    def template14(self) -> tuple[str, str, str, list[int]]:
        col_h = self.col_h
        c = _pick(self.rng, col_h, 1, 1)
        attrs = list(self.row_h.names)
        threshold = r_format(r_round(_r_mean(self.data.values), 2))
        order = self.rng.sample_number(2)
        ops = [" > ", " < "]
        op = ops[order[0] - 1]
        head = f"SELECT {','.join(attrs)} FROM DBdata WHERE {col_h.clause(c)} AND Value"
        query = f"{head}{op}{threshold}"
        result = self.sql(query)
        if not result:
            op = ops[order[1] - 1]
            query = f"{head}{op}{threshold}"
            result = self.sql(query)
        answer = format_result(result)
        text = question_text(
            self.templates.patterns[14][0],
            columns=col_h.selection(c),
            rows=None,
            all_names=self.names,
            simplify_nested=self.templates.simplify_nested,
            for_which=ForWhich(tuple(attrs), op, threshold),
        )
        return query, answer, text, c

    def template15(
        self, query14: str, text14: str, c14: list[int]
    ) -> tuple[int, str, str, tuple[str, ...]]:
        col_h = self.col_h
        self.sql(query14)
        c = c14
        if len(col_h.rows) > 1:
            while c == c14:
                c = _pick(self.rng, col_h, 1, 1)
        attrs = list(self.row_h.names)
        query = (
            f"SELECT {','.join(attrs)},Value FROM DBdata WHERE {col_h.clause(c)}"
            f" AND ({','.join(attrs)}) IN ({query14})"
        )
        answer = format_result(self.sql(query))
        pattern = self.templates.patterns[1][0]
        premise = question_text(
            pattern,
            columns=col_h.selection(c),
            rows=None,
            all_names=self.names,
            simplify_nested=self.templates.simplify_nested,
        ).replace("?", "")
        second = for_which_premise(attrs, pattern, self.names)
        parts = r_strsplit(text14, "for which")
        condition = parts[1] if len(parts) > 1 else "NA"
        report = report_text([*attrs, self.templates.value_meaning], self.templates.report)
        text = squish(f"{premise} {second} for which {condition} {report}")
        return 15, query, answer, (text,)


def table_questions(
    rng: RRandom, data: TableData, templates: QuestionTemplates, names: Sequence[str]
) -> list[Question]:
    """Every applicable template for one table, drawing from ``rng`` in the original order."""
    return _Generator(rng, data, templates, names).run()


def qanda_json(table_id: str, questions: Sequence[Question]) -> str:
    """The QandA.json text, exactly as the original wrote it (strings are not escaped)."""
    items = []
    for q in questions:
        if len(q.texts) == 1:
            nlq = f'"{q.texts[0]}"'
        else:
            nlq = "[" + ",\n         ".join(f'"{t}"' for t in q.texts) + "]"
        items.append(
            f'{{"name": "template {q.template}",\n "sql": "{q.sql}",\n'
            f' "sqlResult": "{q.answer}",\n "nlq": {nlq}}}'
        )
    return f'{{\n"filename": "{table_id}_DB.csv",\n"questions": [' + ",\n".join(items) + "]\n}\n"
