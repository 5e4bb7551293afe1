"""CSV files for spreadsheets, safe from formula injection.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage
return before one) as a formula: a model named ``=cmd|' /C calc'!A0`` on the board would run a
command on the reader's machine. As OWASP recommends, such a cell is written with a leading
single quote, which spreadsheets show as text. A plain number (``-5``, ``+1.5e3``) and a lone
dash stay as they are: neither can run, and a table's negative numbers must stay numbers.
JSON exports are never escaped: they are exact.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d[\d,]*)?\.?\d+(?:[eE][+-]?\d+)?%?")


def escape_cell(value: Any) -> Any:
    """The value as a spreadsheet should read it: text that would start a formula gets a
    leading single quote. Anything but text is returned unchanged."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if value in ("-", "+") or _PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value


def dict_rows_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Rows of named values as CSV, with a header row (even with no rows, so a script
    reading the file still finds its columns)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    writer.writerows({k: escape_cell(v) for k, v in row.items()} for row in rows)
    return out.getvalue()


def escaped_csv_text(text: str) -> str:
    """A CSV text with every cell escaped; rows without such a cell come out unchanged."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([escape_cell(cell) for cell in row] for row in csv.reader(io.StringIO(text)))
    return out.getvalue()
