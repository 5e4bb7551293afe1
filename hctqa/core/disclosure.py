"""Which breakdown groups may be published without giving away single hidden answers.

A group's mean score is a sum over its questions. Two published groups whose questions
differ by a few hidden (test-split) questions give those questions' scores by subtraction:
``row_nesting`` over 126 questions and ``balanced_row_nesting`` over 125 of them give the
126th's score. So a group is published only when its hidden questions differ from those of
every group already published by none or by more than ``margin`` (the symmetric
difference, which covers a group nested in another and one containing it). Questions whose
gold is public do not count: anyone can score them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Hidden questions two published groups must differ by, at the least.
DISCLOSURE_MARGIN = 10


def withheld_groups(
    groups: Sequence[frozenset[str]],
    *,
    published: Iterable[frozenset[str]],
    margin: int = DISCLOSURE_MARGIN,
) -> list[bool]:
    """For each group in turn, whether it is withheld. ``groups`` and ``published`` (the
    figures always shown: overall, per source) hold only hidden questions. The empty group
    counts as published, so a group of 1 to ``margin`` hidden questions is withheld. A group
    that is published joins those the later groups are compared with."""
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
