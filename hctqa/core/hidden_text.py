"""Characters that hide or reorder the text around them when it is shown to a person: control
characters (NUL among them, which PostgreSQL refuses in text), format characters (bidi
overrides and isolates, zero-width spaces and joiners, the BOM), and the line and paragraph
separators U+2028 and U+2029, line breaks like the control ones that a one-line name must
not hold. One rule for every text the platform shows to others: names on the board and
comments refuse them, extracted tables drop them."""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
# What a multi-line text keeps of them: its lines and indents (a textarea sends CR LF).
LINE_BREAKS = "\n\r\t"
# The hidden characters that Python reads as white space: a text whose white space is made
# single spaces keeps them until then, so that words they part stay apart.
CONTROL_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\u2028\u2029"


def _hidden(char: str, allowed: str) -> bool:
    return char not in allowed and unicodedata.category(char) in HIDDEN_CATEGORIES


def hidden_characters(text: str, *, allowed: str = "") -> list[str]:
    """The hidden characters in ``text`` but those in ``allowed`` (line breaks, tabs), each
    once, in code point order."""
    return sorted({c for c in text if _hidden(c, allowed)})


def without_hidden(text: str, *, allowed: str = "") -> str:
    """``text`` without its hidden characters but those in ``allowed``."""
    return "".join(c for c in text if not _hidden(c, allowed))


def hidden_problem(label: str, text: str, *, allowed: str = "") -> str | None:
    """What to tell someone who typed hidden characters, if they did."""
    hidden = hidden_characters(text, allowed=allowed)
    if not hidden:
        return None
    codes = ", ".join(f"U+{ord(c):04X}" for c in hidden)
    return f"{label} has invisible or direction-changing characters ({codes}); type it plainly"
