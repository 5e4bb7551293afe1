"""Which figures on hidden (test-split) questions may be shown without giving away single
hidden answers. Every figure on test-split questions goes through here: the overall and
per-source scores, the breakdown groups and the comparisons, for everyone, their owner
included.

A figure is a mean over questions. Its hidden questions are the ones that matter: questions
whose gold is public can be scored by anyone, so they cannot hide anything. Two rules:

- A figure on 1 to ``DISCLOSURE_MARGIN`` hidden questions is withheld: the answers the rules
  leave out (2025-10) could make it the mean of one guess.
- Two figures whose hidden questions differ by a few give those questions' scores by
  subtraction: ``row_nesting`` over 126 hidden questions and ``balanced_row_nesting`` over 125
  of them give the 126th's. So a figure is shown only when its hidden questions differ from
  those of every figure already shown by none or by more than the margin (the symmetric
  difference, which covers a group nested in another and one containing it). The figures
  on the parts of a whole (the sources of the overall figure) add up to it, so the parts
  withheld must together hold none or more than the margin, too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

# Hidden questions a figure rests on, and two shown figures differ by, at the least (beyond
# none).
DISCLOSURE_MARGIN = 10

K = TypeVar("K")


def too_few(hidden: int, *, margin: int = DISCLOSURE_MARGIN) -> bool:
    """Whether a figure on ``hidden`` hidden questions is withheld for that alone: 1 to
    ``margin`` of them."""
    return 0 < hidden <= margin


def withheld_groups(
    groups: Sequence[frozenset[str]],
    *,
    published: Iterable[frozenset[str]],
    margin: int = DISCLOSURE_MARGIN,
) -> list[bool]:
    """For each group in turn, whether it is withheld. ``groups`` and ``published`` (the
    figures shown already) hold only hidden questions. The empty group counts as published,
    so a group of 1 to ``margin`` hidden questions is withheld. A group that is published
    joins those the later groups are compared with."""
    shown: list[frozenset[str]] = [frozenset(), *published]
    out = []
    for group in groups:
        size = len(group)
        withheld = False
        for other in shown:
            # The symmetric difference is at least the difference in size: skip the set work.
            if abs(size - len(other)) > margin:
                continue
            if 0 < len(group ^ other) <= margin:
                withheld = True
                break
        out.append(withheld)
        if not withheld:
            shown.append(group)
    return out


def withheld_whole_and_parts(
    whole: frozenset[str], parts: Mapping[K, frozenset[str]], *, margin: int = DISCLOSURE_MARGIN
) -> tuple[bool, dict[K, bool]]:
    """Whether a figure on ``whole`` is withheld, and each figure on ``parts`` (disjoint,
    together ``whole``: the overall figure and its sources), all by their hidden questions.
    A part near the whole, or too small, is withheld (``withheld_groups``). While the
    withheld parts together hold 1 to ``margin`` hidden questions, the whole minus the parts
    shown would give them: the smallest part shown is withheld too, until they hold more
    (at worst every part is withheld, and only the whole is shown)."""
    whole_withheld = too_few(len(whole), margin=margin)
    keys = list(parts)
    flags = withheld_groups(
        [parts[k] for k in keys], published=[] if whole_withheld else [whole], margin=margin
    )
    withheld = dict(zip(keys, flags, strict=True))
    if not whole_withheld:
        hidden_in_withheld = sum(len(parts[k]) for k in keys if withheld[k])
        while too_few(hidden_in_withheld, margin=margin):
            smallest = min(
                (k for k in keys if not withheld[k] and parts[k]), key=lambda k: len(parts[k])
            )
            withheld[smallest] = True
            hidden_in_withheld += len(parts[smallest])
    return whole_withheld, withheld
