"""Stage 4: the nonsensical (``_NONSEM``) variant of every file (SYNTHETIC.md §8).

One random stream (``set.seed(0)``) runs over the tables of all families in Windows collation
order of their ``_QandA.json`` names. Each table's words become codes made of consonants,
replaced one pair after another as ``\\bkey\\b`` regular expressions.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

from hctqa.core.synthgen.rrandom import RRandom

CONSONANTS = "bcdfghjklmnpqrstvwxyz"
PREFIXES = ("AA", "BB", "CC", "DD", "EE", "FF", "GG", "HH", "JJ", "KK", "LL", "MM")
_COMBINATIONS: dict[int, list[str]] = {}


def code_length(count: int) -> int:
    """The smallest k >= 2 with C(21, k) >= count (R tries at most up to k = 12)."""
    k = 2
    while math.comb(len(CONSONANTS), k) < count and k < 12:
        k += 1
    return k


def draws_for(count: int) -> int:
    """How many ``unif_index`` calls a table with ``count`` codes costs."""
    return math.comb(len(CONSONANTS), code_length(count))


def _combinations(k: int) -> list[str]:
    if k not in _COMBINATIONS:
        _COMBINATIONS[k] = ["".join(c) for c in itertools.combinations(CONSONANTS, k)]
    return _COMBINATIONS[k]


def dictionary(
    rng: RRandom, sql_names: Sequence[str], rows: Sequence[Sequence[str]]
) -> list[tuple[str, str]]:
    """(key, replacement) pairs in the order they are applied."""
    columns = len(sql_names)
    per_column = len(rows) + 2
    codes_needed = per_column * columns
    pool = _combinations(code_length(codes_needed))
    order = rng.sample_int(len(pool))
    codes = [pool[i - 1] for i in order[:codes_needed]]
    pairs: list[tuple[str, str]] = []
    for i, name in enumerate(sql_names):
        prefix = PREFIXES[i]
        column_codes = codes[i * per_column : (i + 1) * per_column]
        pairs.append((name.replace("_", " "), prefix))
        pairs.append((name, prefix))
        values = list(dict.fromkeys(r[i] for r in rows))
        pairs.extend((v, prefix + column_codes[j]) for j, v in enumerate(values))
    return pairs


_PLAIN = re.compile(r"[A-Za-z0-9 _/-]+")


def compile_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[re.Pattern[str], str, str]]:
    """Each key as the original's ``\\bkey\\b`` regular expression (the key unescaped), with
    the literal to look for first when the key has no regular-expression syntax."""
    out = []
    for key, value in pairs:
        # Codes are letters only, so the value is safe as a replacement template.
        literal = key if _PLAIN.fullmatch(key) else ""
        out.append((re.compile(r"\b" + key + r"\b"), value, literal))
    return out


def apply(
    text: str, pairs: Sequence[tuple[str, str]] | list[tuple[re.Pattern[str], str, str]]
) -> str:
    """The NONSEM text of one file (LF line ends in and out; one extra line end, as R's
    write.table adds). A carriage return is a non-word character like a line feed, so
    replacing on LF text gives what the original got on CRLF text."""
    compiled = pairs if pairs and isinstance(pairs[0][0], re.Pattern) else compile_pairs(pairs)
    for pattern, value, literal in compiled:
        if literal and literal not in text:
            continue
        text = pattern.sub(value, text)
    return text.replace("\r", "") + "\n"
