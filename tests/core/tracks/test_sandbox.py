# ruff: noqa: S608 - the statements are hostile on purpose
"""The SQL sandbox against hostile statements: each is refused or stopped with its reason,
and the sandbox goes on serving the next statement."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from hctqa.core.tracks.sandbox import (
    CODE_BYTES,
    CODE_DENIED,
    CODE_EMPTY,
    CODE_KILLED,
    CODE_LIMIT,
    CODE_MEMORY,
    CODE_MULTIPLE,
    CODE_ROWS,
    CODE_SQL,
    CODE_STEPS,
    CODE_TEXT,
    CODE_TIME,
    Limits,
    SqlSandbox,
    TableError,
)

DB_CSV = (
    "Nationality,Year,School type,Value\r\n"
    "Nationality,Year,School_type,Value\r\n"
    "Qatari,2021/2022,Government,99\r\n"
    "Non-Qatari,2021/2022,Government,33\r\n"
    "Qatari,2022/2023,Private,51\r\n"
    "Non-Qatari,2022/2023,Private,71\r\n"
)
HONEST = "SELECT Nationality, Value FROM DBdata WHERE Year = '2022/2023' ORDER BY Value"
HONEST_ROWS = (("Qatari", 51.0), ("Non-Qatari", 71.0))
CROSS = ", ".join(f"DBdata t{i}" for i in range(12))
FLOOD = (
    "WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s WHERE length(x) < 10000),"
    " r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 30000)"
    " SELECT n || (SELECT max(x) FROM s) AS y FROM r ORDER BY y DESC"
)

HOSTILE = [
    # unbounded work
    (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r",
        CODE_STEPS,
    ),
    (f"SELECT count(*) FROM {CROSS}", CODE_STEPS),
    (
        "WITH RECURSIVE r(x) AS (SELECT 'a' UNION ALL SELECT x || x FROM r) SELECT max(length(x)) "
        "FROM r",
        CODE_LIMIT,
    ),
    (
        f"SELECT count(*) FROM {CROSS} WHERE length(replace(replace(hex(t0.Nationality), '5', "
        "hex(t0.Nationality || t1.Nationality)), '4', replace(hex(t0.Year), '3', "
        "hex(t0.Year || t1.Year || t2.Year)))) > 0",
        CODE_STEPS,
    ),
    (FLOOD, CODE_MEMORY),
    # functions that flood or touch the outside
    ("SELECT randomblob(1000000000)", CODE_DENIED),
    ("SELECT count(*) FROM DBdata a, DBdata b WHERE length(randomblob(100000)) > 0", CODE_DENIED),
    ("SELECT zeroblob(1000000000)", CODE_DENIED),
    ("SELECT printf('%.*c', 1000000000, 'x')", CODE_DENIED),
    ("SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')", CODE_DENIED),
    ("SELECT random()", CODE_DENIED),
    ("SELECT sqlite_version()", CODE_DENIED),
    ("SELECT fts3_tokenizer('simple')", CODE_DENIED),
    # other databases, the schema, pragmas
    ("ATTACH DATABASE '/tmp/x.db' AS x", CODE_DENIED),
    ("ATTACH DATABASE ':memory:' AS x", CODE_DENIED),
    ("DETACH DATABASE main", CODE_DENIED),
    ("SELECT name, sql FROM sqlite_master", CODE_DENIED),
    ("SELECT count(*) FROM sqlite_schema", CODE_DENIED),
    ("SELECT * FROM pragma_table_info('DBdata')", CODE_DENIED),
    ("SELECT count(*) FROM pragma_database_list", CODE_DENIED),
    ("SELECT count(*) FROM json_each('[1,2,3]')", CODE_DENIED),
    ("SELECT count(*) FROM dbstat", CODE_DENIED),
    ("PRAGMA query_only = OFF", CODE_DENIED),
    ("PRAGMA writable_schema = ON", CODE_DENIED),
    ("PRAGMA hard_heap_limit = 0", CODE_DENIED),
    # writes and schema changes
    ("DELETE FROM DBdata", CODE_DENIED),
    ("UPDATE DBdata SET Value = 0", CODE_DENIED),
    ("INSERT INTO DBdata VALUES ('a', 'b', 'c', 1)", CODE_DENIED),
    ("DROP TABLE DBdata", CODE_DENIED),
    ("CREATE TABLE t (x)", CODE_DENIED),
    ("CREATE TEMP TABLE t AS SELECT * FROM DBdata", CODE_DENIED),
    ("CREATE VIEW v AS SELECT 1", CODE_DENIED),
    ("ALTER TABLE DBdata RENAME TO t", CODE_DENIED),
    ("BEGIN", CODE_DENIED),
    ("SAVEPOINT s", CODE_DENIED),
    ("ANALYZE", CODE_DENIED),
    ("EXPLAIN SELECT 1", CODE_DENIED),
    ("/* hidden */ DELETE FROM DBdata", CODE_DENIED),
    ("-- hidden\n  DROP TABLE DBdata", CODE_DENIED),
    ("REINDEX", CODE_DENIED),
    ("VACUUM", CODE_DENIED),
    ("VACUUM INTO '/tmp/stolen.db'", CODE_DENIED),
    # more than one statement, however hidden
    ("SELECT 1; SELECT 2", CODE_MULTIPLE),
    ("SELECT Value FROM DBdata; DELETE FROM DBdata", CODE_MULTIPLE),
    ("SELECT 1 /* ; */; DROP TABLE DBdata", CODE_MULTIPLE),
    ("SELECT 1; -- a comment\nDROP TABLE DBdata", CODE_MULTIPLE),
    ("SELECT '; DROP TABLE DBdata'; SELECT 2", CODE_MULTIPLE),
    ("SELECT 1 --\n; ATTACH ':memory:' AS x", CODE_MULTIPLE),
    # text that is not a statement
    ("", CODE_EMPTY),
    ("   \n\t", CODE_EMPTY),
    ("-- only a comment", CODE_EMPTY),
    ("/* only a comment */", CODE_EMPTY),
    ("SELECT Value FROM DBdata\x00; DROP TABLE DBdata", CODE_TEXT),
    ("SELECT '\udcff'", CODE_TEXT),
    ("SELECT " + "1 + " * 20_000 + "1", CODE_TEXT),
    ("SELECT " + "1 + " * 4_000 + "1", CODE_LIMIT),
    ("SELECT " + ", ".join(["1"] * 500), CODE_LIMIT),
    (" UNION ALL ".join(["SELECT 1"] * 50), CODE_LIMIT),
    ("SELECT Value FROM DBdata WHERE Value = ?", CODE_SQL),
    ("SELEKT 1", CODE_DENIED),
    ("SELECT 1 FROM", CODE_SQL),
    ("SELECT nothing FROM DBdata", CODE_SQL),
]


@pytest.fixture(scope="module")
def sandbox():
    with SqlSandbox() as box:
        yield box


def test_an_honest_statement_gives_its_rows(sandbox: SqlSandbox) -> None:
    execution = sandbox.run(DB_CSV, HONEST)
    assert execution.ok
    assert execution.rows == HONEST_ROWS
    assert execution.columns == ("Nationality", "Value")


@pytest.mark.parametrize(("sql", "code"), HOSTILE, ids=[f"{i}" for i in range(len(HOSTILE))])
def test_a_hostile_statement_is_refused_or_stopped_and_the_next_one_runs(
    sandbox: SqlSandbox, sql: str, code: str
) -> None:
    execution = sandbox.run(DB_CSV, sql)
    assert (execution.code, execution.rows) == (code, ()), execution.message
    assert execution.message
    assert sandbox.run(DB_CSV, HONEST).rows == HONEST_ROWS


def test_the_table_is_unchanged_after_every_attempt(sandbox: SqlSandbox) -> None:
    for sql, _code in HOSTILE:
        sandbox.run(DB_CSV, sql)
    assert sandbox.run(DB_CSV, "SELECT count(*), sum(Value) FROM DBdata").rows == ((4, 254.0),)


def test_recursive_ctes_and_window_functions_are_allowed_within_the_limits(
    sandbox: SqlSandbox,
) -> None:
    counted = sandbox.run(
        DB_CSV,
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 5) "
        "SELECT count(*) FROM r",
    )
    assert counted.rows == ((5,),)
    ranked = sandbox.run(
        DB_CSV, "SELECT Nationality, rank() OVER (ORDER BY Value DESC) FROM DBdata LIMIT 1"
    )
    assert ranked.rows == (("Qatari", 1),)


def test_too_many_rows_or_bytes_are_not_kept(sandbox: SqlSandbox) -> None:
    rows = sandbox.run(
        DB_CSV,
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20000) "
        "SELECT x FROM r",
    )
    assert rows.code == CODE_ROWS
    wide = sandbox.run(
        DB_CSV,
        "WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s WHERE length(x) < "
        f"10000) SELECT (SELECT max(x) FROM s) FROM {', '.join(['DBdata'] * 4)}",
    )
    assert wide.code == CODE_BYTES


def test_text_that_is_not_utf8_comes_back_replaced(sandbox: SqlSandbox) -> None:
    assert sandbox.run(DB_CSV, "SELECT CAST(x'ff41' AS TEXT)").rows == (("\ufffdA",),)
    assert sandbox.run(DB_CSV, "SELECT x'00ff'").rows == ((b"\x00\xff",),)


def test_a_statement_over_the_wall_clock_is_stopped() -> None:
    limits = Limits(steps=10**12, seconds=0.2, hard_seconds=5.0)
    with SqlSandbox(limits) as box:
        slow = box.run(DB_CSV, f"SELECT count(*) FROM {CROSS}")
        assert slow.code == CODE_TIME
        assert 0.15 < slow.seconds < 2.0
        assert box.run(DB_CSV, HONEST).rows == HONEST_ROWS
        assert box.started == 1


def test_a_statement_past_the_hard_deadline_costs_the_child_not_the_caller() -> None:
    limits = Limits(steps=10**12, seconds=60.0, hard_seconds=0.5)
    with SqlSandbox(limits) as box:
        assert box.run(DB_CSV, HONEST).ok
        killed = box.run(DB_CSV, f"SELECT count(*) FROM {CROSS}")
        assert killed.code == CODE_KILLED
        assert "hard limit" in killed.message
        assert box.run(DB_CSV, HONEST).rows == HONEST_ROWS
        assert box.started == 2


def test_a_child_that_dies_mid_statement_is_replaced() -> None:
    limits = Limits(steps=10**12, seconds=60.0, hard_seconds=30.0)
    with SqlSandbox(limits) as box:
        assert box.run(DB_CSV, HONEST).ok
        assert box.proc is not None
        pid = box.proc.pid
        threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()
        died = box.run(DB_CSV, f"SELECT count(*) FROM {CROSS}")
        assert died.code == CODE_KILLED
        assert "stopped the SQL sandbox" in died.message
        assert box.run(DB_CSV, HONEST).rows == HONEST_ROWS
        assert box.started == 2


def test_each_statement_gets_a_fresh_database(sandbox: SqlSandbox) -> None:
    other = DB_CSV.replace("99", "5")
    assert sandbox.run(other, "SELECT min(Value) FROM DBdata").rows == ((5.0,),)
    assert sandbox.run(DB_CSV, "SELECT min(Value) FROM DBdata").rows == ((33.0,),)


@pytest.mark.parametrize(
    "text",
    [
        "a,Value\r\n",
        "a,b\r\na,b\r\nx,1\r\n",
        "a,Value\r\na,Value\r\nx\r\n",
        "a,Value\r\na,Value\r\nx,not a number\r\n",
    ],
)
def test_a_broken_relational_table_is_our_error_and_is_raised(
    sandbox: SqlSandbox, text: str
) -> None:
    with pytest.raises(TableError):
        sandbox.run(text, "SELECT 1")
    assert sandbox.run(DB_CSV, HONEST).rows == HONEST_ROWS
