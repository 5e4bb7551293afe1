# ruff: noqa: E501, S608 - the hostile statements are long, and SQL built from strings on purpose
"""Hostile statements for the NL-to-SQL track's sandbox: the kinds of attack it must survive
(recursive CTEs, cross joins that explode, randomblob floods, ATTACH, load_extension, writes,
several statements and comments that hide them, NUL, text that is not UTF-8), each in a few
spellings. ``benchmarks/tracks_sql.py`` times a file of them; the tests score one through the
platform's worker."""

from __future__ import annotations

CROSS = ", ".join(f"DBdata t{i}" for i in range(10))
BIG = "(SELECT max(x) FROM s)"
DOUBLING = (
    "WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s WHERE length(x) < 8000) "
)


def hostile_statements() -> list[tuple[str, str]]:
    """(kind, SQL): the kinds of attack the track must survive, each in a few spellings."""
    out: list[tuple[str, str]] = []
    for n in range(1, 6):
        out += [
            (
                "recursive CTE",
                f"WITH RECURSIVE r(x) AS (SELECT {n} UNION ALL SELECT x + {n} FROM r) SELECT count(*) FROM r",
            ),
            (
                "recursive CTE",
                f"WITH RECURSIVE r(x) AS (SELECT '{'a' * n}' UNION ALL SELECT x || x FROM r) SELECT max(length(x)) FROM r",
            ),
            (
                "cross join",
                f"SELECT count(*) FROM {', '.join(f'DBdata t{i}' for i in range(6 + n))}",
            ),
            ("cross join", f"SELECT t0.Value FROM {CROSS} ORDER BY random()"),
            ("cross join", f"SELECT t0.* FROM {CROSS} LIMIT {n}00000"),
            ("randomblob", f"SELECT randomblob({n}000000000)"),
            ("randomblob", f"SELECT hex(randomblob(1000000)) FROM {CROSS}"),
            ("zeroblob", f"SELECT length(zeroblob({n}000000000))"),
            ("printf width", f"SELECT printf('%.*c', {n}00000000, 'x')"),
            (
                "memory",
                DOUBLING + f", r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {n}0000) "
                f"SELECT n || {BIG} AS y FROM r ORDER BY y DESC",
            ),
            ("memory", DOUBLING + f"SELECT group_concat({BIG}) FROM DBdata t0, DBdata t1"),
            (
                "string work",
                DOUBLING + f"SELECT count(*) FROM DBdata t0, DBdata t1, DBdata t2 "
                f"WHERE instr({BIG}, substr({BIG}, 1, 4000) || '{n}') > 0",
            ),
            (
                "string work",
                DOUBLING
                + f"SELECT count(*) FROM DBdata t0, DBdata t1 WHERE replace({BIG}, 'ab', 'ba') LIKE '%a%b%a%b%a%{n}'",
            ),
            (
                "result rows",
                f"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < {n}00000) SELECT x FROM r",
            ),
            ("attach", f"ATTACH DATABASE '/tmp/hostile{n}.db' AS x{n}"),
            ("attach", f"SELECT 1; ATTACH DATABASE ':memory:' AS x{n}"),
            ("load_extension", f"SELECT load_extension('/tmp/evil{n}.so')"),
            (
                "load_extension",
                f"SELECT load_extension('libc.so.6', 'system') FROM DBdata LIMIT {n}",
            ),
            (
                "multiple statements",
                f"SELECT Value FROM DBdata; DELETE FROM DBdata WHERE Value > {n}",
            ),
            (
                "hidden statements",
                f"SELECT Value FROM DBdata /* ; */ ; /* */ DROP TABLE DBdata -- {n}",
            ),
            ("hidden statements", f"SELECT '{n};' AS x; -- \n PRAGMA writable_schema = ON"),
            ("hidden statements", f"/* SELECT */ DELETE FROM DBdata WHERE Value < {n}"),
            ("pragma", f"PRAGMA hard_heap_limit = {n}"),
            ("pragma", f"SELECT * FROM pragma_table_info('DBdata') LIMIT {n}"),
            ("schema", f"SELECT sql FROM sqlite_master LIMIT {n}"),
            ("write", f"UPDATE DBdata SET Value = {n}"),
            ("write", f"INSERT INTO DBdata SELECT * FROM DBdata LIMIT {n}"),
            ("write", f"CREATE TEMP TABLE t{n} AS SELECT * FROM DBdata"),
            ("write", f"VACUUM INTO '/tmp/stolen{n}.db'"),
            ("long SQL", "SELECT " + " + ".join(["Value"] * (400 * n)) + " FROM DBdata"),
            (
                "long SQL",
                "SELECT Value FROM DBdata WHERE "
                + " OR ".join([f"Value = {i}" for i in range(200 * n)]),
            ),
            ("NUL", f"SELECT Value FROM DBdata\x00; DROP TABLE DBdata -- {n}"),
            ("not UTF-8", f"SELECT '\udcff{n}' FROM DBdata"),
            ("empty", "-- " + "nothing " * n),
        ]
    return out
