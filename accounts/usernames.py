"""Usernames that look alike: the skeleton two confusable usernames share.

Unicode's UTS #39 defines the skeleton of a string: each character replaced by the prototype
it can be mistaken for (Cyrillic ``а`` and fullwidth ``ａ`` by ``a``, dotless ``ı`` by ``i``,
``m`` by ``rn``), so that two strings are confusable when their skeletons are equal. The
prototypes come from Unicode's confusables data as the ``confusable_homoglyphs`` package ships
it. Usernames are also compared without case, so the skeleton is taken of the case-folded
name, and once more of the result (a prototype may be a capital letter: ``0`` → ``O``).
Combining marks that sit on or around a letter (nonspacing and enclosing: accents, a
stacked acute, a circle) are dropped first, from the compatibility decomposition: UTS #39
keeps them, so ``researcher`` with U+0301 on its last letter was a name of its own. Spacing
marks are their script's letters (Devanagari vowel signs) and stay.

A skeleton is a key for comparison, never shown.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

# Mapping, case-folding and normalising again settles in two rounds for every username tried;
# the bound only keeps a pathological input from looping.
_MAX_ROUNDS = 5


@lru_cache(maxsize=4096)
def _prototype(char: str) -> str:
    # The package lists, for a character Unicode maps to a prototype, that one prototype; and
    # for a prototype, every character mapped to it.
    homoglyphs = confusables.confusables_data.get(char)
    if not homoglyphs or len(homoglyphs) != 1:
        return char
    target = homoglyphs[0]["c"]
    back = confusables.confusables_data.get(target)
    if back is not None and len(back) == 1 and back[0]["c"] == char:
        # A prototype with a single look-alike reads the same from both sides: either one
        # stands for the pair.
        return min(char, target)
    return target


# Nonspacing and enclosing marks; spacing ones (Mc) are letters of their scripts.
_DROPPED_MARKS = frozenset({"Mn", "Me"})


def _without_marks(text: str) -> str:
    """``text`` decomposed (NFKD), without its nonspacing and enclosing marks."""
    return "".join(
        c
        for c in unicodedata.normalize("NFKD", text)
        if unicodedata.category(c) not in _DROPPED_MARKS
    )


def username_skeleton(username: str) -> str:
    """The UTS #39 skeleton of the case-folded, NFKD-decomposed username, without the
    combining marks that sit on or around its letters."""
    text = _without_marks(username)
    for _ in range(_MAX_ROUNDS):
        folded = _without_marks(text.casefold())
        mapped = _without_marks("".join(_prototype(c) for c in folded))
        if mapped == text:
            break
        text = mapped
    return text
