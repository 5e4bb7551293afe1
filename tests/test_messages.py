"""Messages people read start with a capital letter, written so at the source (not capitalised
when shown), and counts take the right noun form."""

from __future__ import annotations

import ast
import re
from datetime import datetime
from pathlib import Path

import pytest

from hctqa.core.wording import counted, percent, time_span, whole_percent

REPO = Path(__file__).resolve().parent.parent
# The project's own code: every app and the project package (tests, migrations and the
# benchmark scripts aside).
SOURCES = [
    path
    for folder in ("annotation", "discussion", "endpoints", "hctqa", "leaderboard", "releases")
    for path in (REPO / folder).rglob("*.py")
    if "migrations" not in path.parts
]
# What raises or records a message a person reads: on a page, in an API body, in a stored
# error field (a submission's, a run's), in a predictions file's problems.
MESSAGE_TYPES = {
    "ApplicationError",
    "ConflictError",
    "Forbidden",
    "PermissionDenied",
    "Http404",
    "NotFound",
    "ParseError",
    "ValidationError",
    "PredictionsError",
    "AnswerFormatError",
    "PromptError",
    "GenerationOutputError",
}
SECOND_ARGUMENT = {"add_error", "finish", "_fail", "_fail_item", "_stop"}
DJANGO_MESSAGES = {"error", "warning", "success", "info"}


def _start(node: ast.expr) -> ast.expr | str | None:
    """The first piece of a message: its opening text, or the expression it opens with."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return first.value if isinstance(first, ast.Constant) else first
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _start(node.left)
    return None


def _messages(tree: ast.AST) -> list[tuple[int, ast.expr]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name in MESSAGE_TYPES:
            found += [(node.lineno, a) for a in node.args[:1]]
        elif name in SECOND_ARGUMENT or (
            name in DJANGO_MESSAGES
            and isinstance(func, ast.Attribute)
            and getattr(func.value, "id", "") == "messages"
        ):
            found += [(node.lineno, a) for a in node.args[1:2]]
        if name not in ("Q", "filter", "exclude", "get"):
            found += [(node.lineno, k.value) for k in node.keywords if k.arg == "error"]
    return found


def _lower_case_openings() -> list[str]:
    bad = []
    for path in SOURCES:
        for line, message in _messages(ast.parse(path.read_text(encoding="utf-8"))):
            start = _start(message)
            where = f"{path.relative_to(REPO)}:{line}"
            if isinstance(start, str):
                if start[:1].islower():
                    bad.append(f"{where}: {start[:50]!r}")
            elif isinstance(start, ast.FormattedValue):
                whole = isinstance(message, ast.JoinedStr) and len(message.values) == 1
                # A message may open with a number ({n:,}, counted(…)), pass another message
                # on (whole, or ``exc.message``), or open with a place the code writes
                # capitalised (``where``: "Line 3", "Question 2"; ``label``) or a class name.
                opening = ast.unparse(start.value)
                allowed = opening in ("where", "label") or opening.endswith(("message", "__name__"))
                allowed |= opening.startswith("counted(")
                if not (whole or allowed or start.format_spec is not None):
                    bad.append(f"{where}: opens with {{{ast.unparse(start.value)}}}")
    return bad


def test_every_message_people_read_starts_with_a_capital_letter() -> None:
    assert _lower_case_openings() == []


def test_the_scan_finds_messages() -> None:
    # A scan that found nothing would pass whatever the code says.
    found = sum(len(_messages(ast.parse(p.read_text(encoding="utf-8")))) for p in SOURCES)
    assert found > 300


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 questions"), (1, "1 question"), (2, "2 questions"), (10065, "10,065 questions")],
)
def test_counts_take_the_right_noun_form(n: int, expected: str) -> None:
    assert counted(n, "question") == expected
    assert counted(1, "entry", "entries") == "1 entry" and counted(3, "entry", "entries") == (
        "3 entries"
    )


def test_a_time_span_says_the_date_once_on_one_day() -> None:
    start = datetime(2026, 11, 23, 14, 16)
    assert time_span(start, datetime(2026, 11, 23, 14, 20)) == "2026-11-23 14:16–14:20"
    assert time_span(start, datetime(2026, 11, 24, 9, 5)) == (
        "2026-11-23 14:16 to 2026-11-24 09:05"
    )


@pytest.mark.parametrize(
    ("share", "decimals", "expected"),
    [
        (1.0, 1, "100.0"),
        (9834 / 9835, 1, "99.9"),
        (0.9996, 0, "99"),
        (0.5, 1, "50.0"),
        (0.12345, 2, "12.35"),
        (0.0, 1, "0.0"),
        (None, 1, "0.0"),
        (1.5, 1, "100.0"),
    ],
)
def test_a_share_short_of_the_whole_never_reads_100_percent(
    share: float | None, decimals: int, expected: str
) -> None:
    assert percent(share, decimals) == expected


def test_whole_percent_is_100_only_when_all_are_done() -> None:
    assert whole_percent(199, 200) == 99
    assert whole_percent(200, 200) == 100
    assert whole_percent(0, 0) == 0


# Nouns the platform counts. After a count they take counted() (Python), |pluralize
# (templates) or counted() (static/js/annotate/common.js); a limit written as a constant
# (MAX_TABLES, settings.X) is never 1 and may stay plural.
COUNTED_NOUNS = [
    "accounts",
    "answers",
    "bytes",
    "candidates",
    "cells",
    "characters",
    "columns",
    "comments",
    "documents",
    "files",
    "hours",
    "minutes",
    "pages",
    "predictions",
    "properties",
    "questions",
    "requests",
    "rows",
    "seconds",
    "submissions",
    "tables",
    "times",
    "tries",
    "verdicts",
]
_NOUN_AFTER = re.compile(r"^ ([a-z]+)\b(?!/)")  # not a rate ("tables/s")
_CONSTANT = re.compile(r"^(settings\.)?[A-Z][A-Z0-9_]*$")
# A value that names a kind, not a count ("{scope} tables", "{t.source} tables").
_NOT_A_COUNT = re.compile(r"source|scope|code|format|display|name|label|kind")
_PLURAL_MARK = re.compile(r"[a-z]\(s\)")  # "page(s)", not an arrow function's "(s) =>"


def _plain_plurals(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and _PLURAL_MARK.search(text.replace("http(s)://", "")):
            found.append((node.lineno, node.value.strip()[:40]))
        if not isinstance(node, ast.JoinedStr):
            continue
        for value, after in zip(node.values, node.values[1:], strict=False):
            if not (isinstance(value, ast.FormattedValue) and isinstance(after, ast.Constant)):
                continue
            noun = _NOUN_AFTER.match(str(after.value))
            expression = ast.unparse(value.value)
            if (
                noun
                and noun.group(1) in COUNTED_NOUNS
                and not _CONSTANT.match(expression)
                and not _NOT_A_COUNT.search(expression)
            ):
                found.append((node.lineno, f"{{{expression}}} {noun.group(1)}"))
    return found


def test_every_counted_message_takes_the_right_noun_form() -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line}: {text}"
        for path in [*SOURCES, *(REPO / "ingest").rglob("*.py")]
        if "migrations" not in path.parts
        for line, text in _plain_plurals(ast.parse(path.read_text(encoding="utf-8")))
    ]
    nouns = "|".join(COUNTED_NOUNS)
    unplural = re.compile(rf"\{{\{{ ([^}}|]+)(\|[^}}]*)? \}}\}} ({nouns})\b")
    js_count = re.compile(rf"\$\{{[^}}]+\}} ({nouns})\b")
    for path in (REPO / "templates").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if _PLURAL_MARK.search(line):
                bad.append(f"{path.relative_to(REPO)}:{number}: (s)")
            for match in unplural.finditer(line):
                if not match.group(1).endswith(("_max", "limit")):  # a limit is never 1
                    bad.append(f"{path.relative_to(REPO)}:{number}: {match.group(0)}")
    for path in (REPO / "static" / "js").rglob("*.js"):
        if "vendor" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _PLURAL_MARK.search(line) or js_count.search(line):
                bad.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:60]}")
    assert bad == []


def test_the_plural_scan_finds_what_it_looks_for() -> None:
    tree = ast.parse('f"{n} questions"\nf"{MAX_TABLES} tables"\n"1 page(s)"')
    assert _plain_plurals(tree) == [(1, "{n} questions"), (3, "1 page(s)")]
