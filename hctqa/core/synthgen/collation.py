"""The collation of the Windows ``strcoll`` the original generator sorted with (spec Appendix C).

Punctuation first (in Windows' own order, where ``-`` comes before a space), then digits, then
letters without regard to case; a shorter prefix first; ties broken by case (lowercase first)
and finally by code point.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

_SYMBOLS = "'- !\"#$%&()*,./:;?@[\\]^_`{|}~+<=>"
_SYMBOL_RANK = {c: i for i, c in enumerate(_SYMBOLS)}


def _primary(c: str) -> tuple[int, int]:
    if c in _SYMBOL_RANK:
        return (0, _SYMBOL_RANK[c])
    if "0" <= c <= "9":
        return (1, ord(c))
    if c.isascii() and c.isalpha():
        return (2, ord(c.lower()))
    return (3, ord(c))


@lru_cache(maxsize=65536)
def windows_key(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...], str]:
    """A sort key that orders strings as the original Windows run did."""
    primary = tuple(_primary(c) for c in text)
    case = tuple(1 if c.isascii() and c.isupper() else 0 for c in text)
    return (primary, case, text)


def windows_sorted(items: Iterable[str]) -> list[str]:
    return sorted(items, key=windows_key)
