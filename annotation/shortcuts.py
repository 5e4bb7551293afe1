"""The keys of each annotation tool, for its shortcut sheet (opened with ``?``). The tools'
scripts bind the same keys; a browser test presses each sheet's keys."""

from __future__ import annotations

from hctqa.core import taxonomy

Shortcut = tuple[str, str]

_COMMON: list[Shortcut] = [
    ("?", "open or close this sheet"),
    ("Esc", "leave a text field (then the keys below work), or close this sheet"),
    ("+ / −", "zoom the table in or out"),
]


def _property_keys(tax: taxonomy.Taxonomy) -> list[Shortcut]:
    return [(p.key, p.label) for p in tax.properties if p.key]


def properties_tool() -> list[Shortcut]:
    return [
        ("Enter", "save and open the next table"),
        ("s", "skip this table (it comes back last)"),
        *_COMMON,
        *_property_keys(taxonomy.TABLE_PROPERTIES),
    ]


def question_tool() -> list[Shortcut]:
    return [
        ("Ctrl+Enter", "save and open the next table, from anywhere"),
        ("Enter", "save, outside a text field"),
        ("q", "write the question"),
        ("w", "write the gold answer"),
        ("s", "skip this table"),
        ("click a cell", "add its value to the answer's last row (Shift: a new row)"),
        *_COMMON,
        *_property_keys(taxonomy.QUERY_PROPERTIES),
    ]


def verify_tool() -> list[Shortcut]:
    return [
        ("g / a / n", "rate Good, Ambiguous (the rewrite gets the focus) or Nonsensical"),
        ("y", "the proposed answer is right"),
        ("w", "it is wrong: the corrected answer gets the focus"),
        ("Enter", "submit and open the next question"),
        ("Ctrl+Enter", "submit, from anywhere"),
        ("s", "skip this question"),
        ("click a cell", "add its value to the corrected answer (Shift: a new row)"),
        *_COMMON,
    ]


def adjudicate_tool() -> list[Shortcut]:
    return [
        ("g / a / n", "decide Good, Ambiguous (the question text gets the focus) or Nonsensical"),
        ("y", "keep the proposed answer"),
        ("w", "correct the answer: the gold answer gets the focus"),
        ("Enter", "decide and open the next question"),
        ("Ctrl+Enter", "decide, from anywhere"),
        ("click a cell", "add its value to the gold answer (Shift: a new row)"),
        *_COMMON,
    ]


def resolve_tool() -> list[Shortcut]:
    return [
        ("Tab", "move to the next property's box"),
        ("Space", "tick or untick the box in focus"),
        ("Enter", "resolve with the ticked set"),
        ("?", "open or close this sheet"),
    ]
