"""Deliberately wrong answers for gold control.

A share of the gold questions a verifier is served carries a wrong proposed answer, so that an
annotator who calls every answer right is caught as surely as one who calls right answers
wrong. The wrong answer has to look like something a model would propose: the gold answer
with one of its values swapped for another cell of the same table (a number for a number),
or, failing that, a number with its last digit changed, or Yes for No.

It is guaranteed wrong by the benchmark's own reading: one value the scorer finds in the
gold answer (``scoring.gold_values``) is missing from it, so even a literal copy of it would
not score full recall.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from hctqa.core.answers import format_answer, parse_answer
from hctqa.core.scoring import gold_values

_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?")
_YES_NO = {"yes": "No", "no": "Yes"}
# Cell text that cannot be a value of the gold-answer format, or is not a value at all.
_UNUSABLE = re.compile(r"[{}|]|^__$")
_LONGEST_VALUE = 200


def _read(value: str) -> str:
    """A value as the scorer reads it inside a gold answer."""
    return gold_values("{" + value + "}")[0]


def _is_number(value: str) -> bool:
    return bool(_NUMBER.fullmatch(value.strip()))


def _other_digit(value: str, offset: int) -> str | None:
    """The number with its last digit moved ``offset`` places on, or None without a digit."""
    digits = [i for i, ch in enumerate(value) if ch.isdigit()]
    if not digits:
        return None
    at = digits[-1]
    return value[:at] + str((int(value[at]) + offset) % 10) + value[at + 1 :]


def _replacements(
    original: str, cells: Sequence[str], taken: set[str], rng: random.Random
) -> list[str]:
    """Values to put in place of ``original``, most plausible first: the other Yes/No; cells
    of the same kind (number or text), in random order; the number with another last digit;
    any other cell; then 0 and 1, of which at least one always reads differently."""
    usable = {
        c.strip()
        for c in cells
        if c.strip() and len(c.strip()) <= _LONGEST_VALUE and not _UNUSABLE.search(c.strip())
    }
    fresh = sorted(c for c in usable if _read(c) not in taken)
    rng.shuffle(fresh)
    numeric = _is_number(original)
    same_kind = [c for c in fresh if _is_number(c) == numeric]
    out: list[str] = []
    if _read(original) in _YES_NO:
        out.append(_YES_NO[_read(original)])
    out += same_kind
    if numeric:
        out += [v for k in range(1, 10) if (v := _other_digit(original, k)) is not None]
    out += [c for c in fresh if c not in same_kind]
    return [*out, "0", "1"]


def wrong_answer(gold: str, cells: Sequence[str], rng: random.Random) -> str:
    """A plausible wrong answer to a gold answer in the gold format (``answers``), in the same
    shape (rows and columns): every value the scorer reads as one chosen value of the gold is
    replaced. ``cells``: the texts of the question's table. Raises ``AnswerFormatError`` when
    the gold answer does not parse."""
    parsed = parse_answer(gold)
    if isinstance(parsed, str):  # a bare Yes or No
        return "No" if parsed == "Yes" else "Yes"
    taken = set(gold_values(gold))
    target = rng.choice(sorted({_read(v) for row in parsed for v in row}))
    original = next(v for row in parsed for v in row if _read(v) == target)
    candidates = _replacements(original, cells, taken, rng)
    # First a value the gold does not hold already; failing that, any other value.
    for strict in (True, False):
        for value in candidates:
            read = _read(value)
            if read == target or (strict and read in taken):
                continue
            rows = [[value if _read(v) == target else v for v in row] for row in parsed]
            wrong = format_answer(rows)
            if target not in gold_values(wrong):
                return wrong
    raise AssertionError("unreachable: 0 and 1 cannot both read as the same value")
