"""Submitted SQL, run where it can do no harm: the NL-to-SQL track's sandbox.

Every statement is hostile input. Each one runs:

- in a **child process** (``python -m hctqa.core.tracks.sandbox``) that the scoring worker
  starts and kills at will: its address space is capped (``RLIMIT_AS``), it may write no
  file (``RLIMIT_FSIZE`` 0) nor open one (``RLIMIT_NOFILE``), and SQLite's heap is capped
  process-wide (``PRAGMA hard_heap_limit``), which only a process of its own may set without
  capping the worker's own databases. A statement whose single step outlasts every check
  (or that crashes SQLite) costs the child, never the worker: the parent kills it past a
  hard deadline, records the statement, and starts a fresh child for the next. Replies are
  JSON, never pickles, so even a child taken over could not run code in the worker;
- in a **database of its own**: a fresh in-memory SQLite database holding one table,
  ``DBdata``, built from the item's relational CSV (attributes as TEXT, ``Value`` as REAL, as
  the generator built it), then made read-only (``PRAGMA query_only``), with extensions off
  and temporary storage in memory;
- behind an **authorizer** that allows ``SELECT``, reading the columns of ``DBdata`` and
  the functions in ``FUNCTIONS`` (aggregates, string and math functions, window functions),
  and recursive CTEs; everything else is refused when the statement is compiled: ``ATTACH``,
  ``PRAGMA``, writes, schema changes, transactions, ``sqlite_master``, ``load_extension``,
  ``randomblob``, ``zeroblob``, ``random``, file or system functions;
- under **limits** (``Limits``): SQLite's own (``setlimit``: string and blob length, SQL
  length, columns, expression depth, compound selects, program size, LIKE pattern length,
  function arguments, no attached databases), a step limit and a wall-clock limit checked
  together in the progress handler, a cap on result rows and on result bytes;
- **one statement** only: the standard library's ``execute`` compiles the first statement
  and refuses any other after it, comments or not (``SELECT 1; -- x`` passes, ``SELECT 1;
  /* ; */ SELECT 2`` does not). An empty statement, NUL characters and text that is not
  UTF-8 are refused before the child sees them.

A statement that breaks a rule or a limit gives an ``Execution`` with its ``code`` (``CODES``)
and a message; it never raises. ``SqlSandbox.run`` is the one entry point.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import select
import sqlite3
import struct
import subprocess
import sys
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from hctqa.core.wording import counted

TABLE = "DBdata"
VALUE_COLUMN = "Value"

# The codes an execution may end with ("" when it ran to the end).
CODE_EMPTY = "empty"  # nothing to run: blank, or only comments
CODE_TEXT = "text"  # NUL characters, not UTF-8, too long: refused unrun
CODE_MULTIPLE = "multiple_statements"
CODE_DENIED = "denied"  # the authorizer refused something (a table, a function, a pragma)
CODE_SQL = "sql_error"  # SQLite could not compile or run it (syntax, no such column)
CODE_LIMIT = "limit"  # one of SQLite's own limits (too long a string, too many columns)
CODE_STEPS = "steps"  # over the step limit
CODE_TIME = "time"  # over the wall-clock limit, seen by the progress handler
CODE_MEMORY = "memory"  # over the heap limit
CODE_ROWS = "result_rows"
CODE_BYTES = "result_bytes"
CODE_KILLED = "killed"  # past the hard deadline, or the child died: it was stopped
CODES = (
    CODE_EMPTY,
    CODE_TEXT,
    CODE_MULTIPLE,
    CODE_DENIED,
    CODE_SQL,
    CODE_LIMIT,
    CODE_STEPS,
    CODE_TIME,
    CODE_MEMORY,
    CODE_ROWS,
    CODE_BYTES,
    CODE_KILLED,
)

# Functions a question over one table may need; every other one is refused. ``printf`` and
# ``format`` are left out although harmless in kind: SQLite 3.40 repeats ``%.*c`` up to its
# precision before its length limit applies (a second per 10^8), one step the progress
# handler cannot interrupt.
FUNCTIONS = frozenset(
    {
        # aggregates
        "avg",
        "count",
        "group_concat",
        "string_agg",
        "max",
        "min",
        "sum",
        "total",
        # scalars
        "abs",
        "coalesce",
        "ifnull",
        "iif",
        "nullif",
        "instr",
        "length",
        "like",
        "glob",
        "lower",
        "upper",
        "ltrim",
        "rtrim",
        "trim",
        "replace",
        "round",
        "substr",
        "substring",
        "typeof",
        "char",
        "unicode",
        "hex",
        "quote",
        "sign",
        # math (when SQLite has them)
        "ceil",
        "ceiling",
        "floor",
        "trunc",
        "exp",
        "ln",
        "log",
        "log10",
        "log2",
        "mod",
        "pi",
        "pow",
        "power",
        "sqrt",
        # window functions
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
    }
)


@dataclass(frozen=True)
class Limits:
    """What one statement may use. The step limit counts SQLite's virtual-machine
    instructions (about 25 million a second here); the gold SQL of every released synthetic
    question needs under a tenth of a percent of it (``benchmarks/tracks_sql.py``)."""

    max_sql_chars: int = 20_000
    steps: int = 1_000_000
    seconds: float = 0.5  # wall clock, checked by the progress handler
    hard_seconds: float = 2.0  # the child is killed past this
    max_rows: int = 10_000
    max_result_bytes: int = 1_000_000
    # SQLITE_LIMIT_LENGTH: the longest string or blob. It also bounds the work of one step
    # (instr, like and replace are quadratic at worst), which no handler can interrupt.
    max_length: int = 20_000
    heap_bytes: int = 128 * 1024 * 1024  # PRAGMA hard_heap_limit in the child
    memory_mb: int = 1024  # RLIMIT_AS of the child
    progress_every: int = 32  # VM instructions between two checks


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Execution:
    """What a statement gave: its result rows (values as SQLite returned them: int, float,
    str, bytes or None) and column names, or ``code`` and ``message`` saying why not."""

    rows: tuple[tuple[Any, ...], ...] = ()
    columns: tuple[str, ...] = ()
    code: str = ""
    message: str = ""
    seconds: float = 0.0
    steps: int = 0

    @property
    def ok(self) -> bool:
        return not self.code


# --- The relational table ------------------------------------------------------------------


class TableError(ValueError):
    """A relational CSV the sandbox cannot load (ours, never a submission's)."""


@dataclass(frozen=True)
class RelationalTable:
    """``DB.csv``: display names (line 1), SQL names (line 2), then the rows."""

    display_names: tuple[str, ...]
    sql_names: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    @property
    def attributes(self) -> tuple[str, ...]:
        """The SQL names of the attribute columns (all but ``Value``)."""
        return tuple(n for n in self.sql_names if n != VALUE_COLUMN)


def read_relational_csv(text: str) -> RelationalTable:
    """Parse a generator's ``DB.csv`` (CRLF or LF). Its last column is ``Value``."""
    rows = [row for row in csv.reader(io.StringIO(text, newline="")) if row]
    if len(rows) < 3:
        raise TableError("A relational CSV has two header lines and at least one row")
    display, names, body = rows[0], rows[1], rows[2:]
    if len(display) != len(names) or names[-1] != VALUE_COLUMN or len(set(names)) != len(names):
        raise TableError(
            "Line 2 of a relational CSV names each column once (SQL names), Value last"
        )
    for number, row in enumerate(body, start=3):
        if len(row) != len(names):
            raise TableError(f"Line {number} has {counted(len(row), 'cell')}, not {len(names)}")
    return RelationalTable(tuple(display), tuple(names), tuple(tuple(r) for r in body))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _database_bytes(relational_csv: str) -> bytes:
    """The item's database, serialized: one table, ``DBdata``, in the generator's types."""
    table = read_relational_csv(relational_csv)
    connection = sqlite3.connect(":memory:")
    try:
        columns = ", ".join(
            f"{_quoted(n)} {'REAL' if n == VALUE_COLUMN else 'TEXT'}" for n in table.sql_names
        )
        connection.execute(f"CREATE TABLE {TABLE} ({columns})")
        marks = ", ".join("?" * len(table.sql_names))
        value = table.sql_names.index(VALUE_COLUMN)
        try:
            rows = [
                tuple(float(v) if i == value else v for i, v in enumerate(row))
                for row in table.rows
            ]
        except ValueError as exc:
            raise TableError(f"A Value that is not a number: {exc}") from None
        connection.executemany(f"INSERT INTO {TABLE} VALUES ({marks})", rows)  # noqa: S608
        connection.commit()
        return connection.serialize()
    finally:
        connection.close()


def database_key(relational_csv: str) -> str:
    return hashlib.sha256(relational_csv.encode("utf-8")).hexdigest()


# --- Checks before the child ---------------------------------------------------------------


def precheck(sql: object, limits: Limits = DEFAULT_LIMITS) -> Execution | None:
    """The refusal of a statement that need not reach SQLite, or None."""
    if not isinstance(sql, str):
        return Execution(code=CODE_TEXT, message="The prediction is not SQL text")
    if len(sql) > limits.max_sql_chars:
        return Execution(
            code=CODE_TEXT,
            message=f"The SQL is {counted(len(sql), 'character')} long, over the "
            f"{limits.max_sql_chars:,} a statement may take",
        )
    if "\x00" in sql:
        return Execution(code=CODE_TEXT, message="The SQL contains a NUL character")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        return Execution(
            code=CODE_TEXT,
            message=f"The SQL is not UTF-8 text (a lone surrogate at character {exc.start})",
        )
    keyword = first_keyword(sql)
    if not keyword:
        return Execution(code=CODE_EMPTY, message="The SQL is empty (or only comments)")
    if keyword.lower() not in QUERY_KEYWORDS:
        return Execution(
            code=CODE_DENIED,
            message=f"Only a query may be given (SELECT, WITH or VALUES), not {keyword[:20]}",
        )
    return None


QUERY_KEYWORDS = frozenset({"select", "with", "values"})


def first_keyword(sql: str) -> str:
    """The statement's first word after white space and comments ("" if none)."""
    i, n = 0, len(sql)
    while i < n:
        if sql[i].isspace():
            i += 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end == -1 else end + 2
        else:
            end = i
            while end < n and (sql[end].isalnum() or sql[end] == "_"):
                end += 1
            return sql[i:end] if end > i else sql[i]
    return ""


# --- The parent ----------------------------------------------------------------------------

_HEADER = struct.Struct(">I")
_MAX_REPLY_BYTES = 8 * 1024 * 1024
_STARTUP_SECONDS = 30.0
_REPO = Path(__file__).resolve().parents[3]


class _Stopped(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _frame(value: object) -> bytes:
    data = json.dumps(value, ensure_ascii=False, allow_nan=True).encode("utf-8")
    return _HEADER.pack(len(data)) + data


class SqlSandbox:
    """One sandbox child at a time, statement by statement. Use it as a context manager (or
    call ``close``): the child lives until then, or until a statement costs it its life."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0  # children started, for the benchmark and the tests
        self._loadable: set[str] = set()  # relational tables known to load

    def __enter__(self) -> SqlSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, relational_csv: str, sql: object) -> Execution:
        """Run ``sql`` on a fresh database of ``relational_csv``. Never raises for anything
        the statement does; raises ``TableError`` for a relational CSV that cannot be read
        (the item's own data, not the submission's)."""
        refused = precheck(sql, self.limits)
        if refused is not None:
            return refused
        key = database_key(relational_csv)
        if key not in self._loadable:  # our data: a broken table is our error, raised
            _database_bytes(relational_csv)
            self._loadable.add(key)
        request = {"db": key, "csv": relational_csv, "sql": sql}
        started = time.monotonic()
        try:
            reply = self._call(request)
        except _Stopped as stopped:
            return Execution(
                code=CODE_KILLED, message=stopped.why, seconds=time.monotonic() - started
            )
        if reply.get("ok"):
            rows = tuple(tuple(_value(v) for v in row) for row in reply["rows"])
            return Execution(
                rows=rows,
                columns=tuple(reply["columns"]),
                seconds=reply["seconds"],
                steps=reply["steps"],
            )
        return Execution(
            code=str(reply.get("code")),
            message=str(reply.get("message"))[:500],
            seconds=float(reply.get("seconds", 0.0)),
            steps=int(reply.get("steps", 0)),
        )

    def _start(self) -> subprocess.Popen[bytes]:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(_REPO),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        proc = subprocess.Popen(  # noqa: S603 - this interpreter, our own module
            [sys.executable, "-m", "hctqa.core.tracks.sandbox", json.dumps(asdict(self.limits))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=_REPO,
            env=env,
        )
        self.proc = proc
        self.started += 1
        try:
            ready = self._read(proc, time.monotonic() + _STARTUP_SECONDS)
        except _Stopped:
            self.close()
            raise
        if ready != {"ready": True}:
            self.close()
            raise _Stopped("the SQL sandbox did not start")
        return proc

    def _read_exact(self, proc: subprocess.Popen[bytes], size: int, deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        while size:
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], left)[0] if left > 0 else []
            if not ready:
                raise _Stopped(
                    f"the statement ran past the hard limit of {self.limits.hard_seconds:g} s "
                    "and was stopped"
                )
            chunk = os.read(fd, min(size, 1 << 20))
            if not chunk:
                raise _Stopped("the statement stopped the SQL sandbox (it was restarted)")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _read(self, proc: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
        size = _HEADER.unpack(self._read_exact(proc, _HEADER.size, deadline))[0]
        if size > _MAX_REPLY_BYTES:
            raise _Stopped("the SQL sandbox sent a reply over its size limit")
        reply = json.loads(self._read_exact(proc, size, deadline))
        if not isinstance(reply, dict):
            raise _Stopped("the SQL sandbox sent a reply that is not an object")
        return reply

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        proc = self.proc if self.proc is not None and self.proc.poll() is None else self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(_frame(request))
            proc.stdin.flush()
            return self._read(proc, time.monotonic() + self.limits.hard_seconds)
        except (_Stopped, BrokenPipeError, ValueError) as exc:
            self.close()
            if isinstance(exc, _Stopped):
                raise
            raise _Stopped("the statement stopped the SQL sandbox (it was restarted)") from None

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _value(value: Any) -> Any:
    if isinstance(value, dict):  # a blob, sent as hex
        return bytes.fromhex(str(value.get("blob", "")))
    return value


# --- The child -----------------------------------------------------------------------------

_SQLITE_LIMITS = (
    # (limit, value or the Limits field it comes from)
    ("SQLITE_LIMIT_LENGTH", "max_length"),
    ("SQLITE_LIMIT_SQL_LENGTH", "max_sql_chars"),
    ("SQLITE_LIMIT_COLUMN", 100),
    ("SQLITE_LIMIT_EXPR_DEPTH", 100),
    ("SQLITE_LIMIT_COMPOUND_SELECT", 20),
    ("SQLITE_LIMIT_VDBE_OP", 50_000),
    ("SQLITE_LIMIT_FUNCTION_ARG", 32),
    ("SQLITE_LIMIT_ATTACHED", 0),
    ("SQLITE_LIMIT_LIKE_PATTERN_LENGTH", 1_000),
    ("SQLITE_LIMIT_VARIABLE_NUMBER", 1),
    ("SQLITE_LIMIT_TRIGGER_DEPTH", 1),
    ("SQLITE_LIMIT_WORKER_THREADS", 0),
)
# What SQLite says when the authorizer refused (a virtual table's constructor fails when the
# schema reads it makes are refused).
_DENIED_MESSAGES = (
    "not authorized",
    "authorization denied",
    "prohibited",
    "vtable constructor failed",
)
_LIMIT_MESSAGES = (
    "too big",
    "too many",
    "too large",
    "too long",
    "too deep",
    "parser stack overflow",
)


# Names a statement may not read: SQLite's own tables and its virtual-table modules
# (``dbstat``, ``json_each``, ``sqlite_stmt``, …), filled in by the child from the library
# it runs.
_NOT_READ: set[str] = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}


def _authorizer(action: int, arg1: str | None, arg2: str | None, db: str | None, _: Any) -> int:
    if action == sqlite3.SQLITE_SELECT:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_READ:
        # A column of DBdata; or ``count(*)`` over a CTE of the statement, which SQLite
        # reports as a read of the CTE's name with no column.
        if arg1 == TABLE and db in ("main", None):
            return sqlite3.SQLITE_OK
        name = (arg1 or "").lower()
        cte = arg2 == "" and db is None and name and not name.startswith(("sqlite_", "pragma_"))
        return sqlite3.SQLITE_OK if cte and name not in _NOT_READ else sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION:
        ok = arg2 is not None and arg2.lower() in FUNCTIONS
        return sqlite3.SQLITE_OK if ok else sqlite3.SQLITE_DENY
    if action == getattr(sqlite3, "SQLITE_RECURSIVE", 33):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class _Guard:
    """The progress handler: steps and wall clock, one check every ``progress_every``
    instructions; ``why`` says which stopped the statement."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = 0
        self.deadline = 0.0
        self.why = ""

    def start(self) -> None:
        self.steps = 0
        self.why = ""
        self.deadline = time.monotonic() + self.limits.seconds

    def __call__(self) -> int:
        self.steps += self.limits.progress_every
        if self.steps > self.limits.steps:
            self.why = CODE_STEPS
            return 1
        if time.monotonic() > self.deadline:
            self.why = CODE_TIME
            return 1
        return 0


def _json_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"blob": value.hex()}
    return value


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes) else 8


def _connection(data: bytes, limits: Limits, guard: _Guard) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    connection.deserialize(data)
    with contextlib.suppress(AttributeError):  # a Python built without extension loading
        connection.enable_load_extension(False)
    for name, value in _SQLITE_LIMITS:
        number = value if isinstance(value, int) else getattr(limits, value)
        connection.setlimit(getattr(sqlite3, name), number)
    connection.execute("PRAGMA query_only = ON")
    connection.execute("PRAGMA temp_store = MEMORY")
    connection.execute("PRAGMA trusted_schema = OFF")
    # Text that is not UTF-8 (CAST(x'ff' AS TEXT)) is shown with replacement characters.
    connection.text_factory = lambda raw: raw.decode("utf-8", "replace")
    connection.set_authorizer(_authorizer)
    connection.set_progress_handler(guard, limits.progress_every)
    return connection


def execute(data: bytes, sql: str, limits: Limits, guard: _Guard) -> dict[str, Any]:
    """One statement on a fresh copy of the serialized database ``data``; the reply."""
    connection = _connection(data, limits, guard)
    guard.start()
    started = time.monotonic()

    def failed(code: str, message: str) -> dict[str, Any]:
        return {
            "ok": False,
            "code": code,
            "message": message,
            "seconds": time.monotonic() - started,
            "steps": guard.steps,
        }

    try:
        cursor = connection.execute(sql)
        if cursor.description is None:
            return failed(CODE_EMPTY, "The SQL holds no statement (only comments)")
        columns = [str(d[0]) for d in cursor.description]
        rows: list[list[Any]] = []
        size = 0
        while True:
            batch = cursor.fetchmany(256)
            if not batch:
                break
            for row in batch:
                rows.append([_json_value(v) for v in row])
                size += sum(_size(v) for v in row)
            if len(rows) > limits.max_rows:
                return failed(
                    CODE_ROWS,
                    f"The result has over {counted(limits.max_rows, 'row')}, the most kept",
                )
            if size > limits.max_result_bytes:
                return failed(
                    CODE_BYTES,
                    f"The result is over {counted(limits.max_result_bytes, 'byte')}, the most kept",
                )
        return {
            "ok": True,
            "columns": columns,
            "rows": rows,
            "seconds": time.monotonic() - started,
            "steps": guard.steps,
        }
    except MemoryError:
        return failed(CODE_MEMORY, "The statement needed more memory than a statement may use")
    except sqlite3.ProgrammingError as exc:
        if "one statement at a time" in str(exc):
            return failed(CODE_MULTIPLE, "Only one statement may be given")
        return failed(CODE_SQL, str(exc)[:300])
    except sqlite3.Error as exc:
        message = str(exc)
        if "interrupted" in message and guard.why == CODE_STEPS:
            return failed(CODE_STEPS, f"The statement ran over {limits.steps:,} steps")
        if "interrupted" in message and guard.why == CODE_TIME:
            return failed(CODE_TIME, f"The statement ran over {limits.seconds:g} s")
        if any(words in message for words in _DENIED_MESSAGES):
            return failed(CODE_DENIED, message[:300])
        if "out of memory" in message:
            return failed(CODE_MEMORY, "The statement needed more memory than a statement may use")
        if any(words in message for words in _LIMIT_MESSAGES):
            return failed(CODE_LIMIT, message[:300])
        return failed(CODE_SQL, message[:300])
    finally:
        connection.close()


def _serve(requests: IO[bytes], replies: IO[bytes], limits: Limits) -> None:
    databases: OrderedDict[str, bytes] = OrderedDict()
    guard = _Guard(limits)
    replies.write(_frame({"ready": True}))
    replies.flush()
    while True:
        header = requests.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        request = json.loads(requests.read(_HEADER.unpack(header)[0]))
        key = request["db"]
        try:
            if key not in databases:
                databases[key] = _database_bytes(request["csv"])
                if len(databases) > 64:
                    databases.popitem(last=False)
            databases.move_to_end(key)
            reply = execute(databases[key], request["sql"], limits, guard)
        except MemoryError:
            reply = {"ok": False, "code": CODE_MEMORY, "message": "Out of memory"}
        replies.write(_frame(reply))
        replies.flush()


def _confine(limits: Limits) -> None:
    """The child's own limits, set once it has imported what it needs."""
    import resource

    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
    connection = sqlite3.connect(":memory:")
    connection.execute(f"PRAGMA hard_heap_limit = {int(limits.heap_bytes)}")
    with contextlib.suppress(sqlite3.Error):  # a library without the introspection pragmas
        _NOT_READ.update(row[0].lower() for row in connection.execute("PRAGMA module_list"))
    _NOT_READ.update({"dbstat", "json_each", "json_tree", "sqlite_stmt", "sqlite_dbpage"})
    connection.close()


def main() -> None:
    fields = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    limits = Limits(**fields)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, never into the replies
    _confine(limits)
    _serve(sys.stdin.buffer, replies, limits)


if __name__ == "__main__":
    main()
