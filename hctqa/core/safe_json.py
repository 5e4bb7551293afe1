"""JSON from outside (request bodies, model replies) with a bound on nesting.

``json.loads`` recurses once per level of nesting, so ``[`` × 100,000 raises RecursionError,
which no ``except ValueError`` catches: a request became a 500. Parsed data nested just under
Python's limit would fail later, wherever it is read again from a deeper stack. Here both are
one ``NestingError`` (a ValueError) that says what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

# Far deeper than any payload the platform takes (drafts, verdicts, chat replies: a few).
MAX_DEPTH = 64


class NestingError(ValueError):
    """JSON whose arrays and objects sit inside one another too deeply."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(
            f"The JSON is nested too deeply (arrays or objects more than {max_depth} levels "
            "inside one another)"
        )


def check_depth(value: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise NestingError if ``value`` nests lists and dicts more than ``max_depth`` deep.
    Iterative, so the check itself cannot overflow the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise NestingError(max_depth)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that raises NestingError (a ValueError) for deeply nested input."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestingError(max_depth) from None
    check_depth(value, max_depth=max_depth)
    return value
