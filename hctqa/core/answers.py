"""The gold-answer format: values of a row in braces separated by " | ", rows joined by " || ",
yes/no answers bare. New answers must follow it exactly; the annotation tools refuse anything
else, saying why."""

from __future__ import annotations

YES_NO = ("Yes", "No")


class AnswerFormatError(ValueError):
    """An answer that breaks the format; the message says where."""


def parse_answer(text: str) -> list[list[str]] | str:
    """Rows of values, or "Yes"/"No". Spacing around separators is forgiven; structure is not."""
    answer = text.strip()
    if not answer:
        raise AnswerFormatError("The answer is empty")
    for word in YES_NO:
        if answer.lower() == word.lower():
            return word
    rows: list[list[str]] = []
    for number, raw in enumerate(answer.split("||"), start=1):
        row = raw.strip()
        if not row:
            raise AnswerFormatError(f"Row {number} is empty: rows are joined by ' || '")
        if not (row.startswith("{") and row.endswith("}")):
            raise AnswerFormatError(
                f"Row {number} must be wrapped in braces, like {{a | b}}: {row[:40]!r}"
            )
        inner = row[1:-1]
        if "{" in inner or "}" in inner:
            raise AnswerFormatError(
                f"Row {number} has a brace inside it; join rows with ' || ': {row[:40]!r}"
            )
        values = [v.strip() for v in inner.split("|")]
        for position, value in enumerate(values, start=1):
            if not value:
                raise AnswerFormatError(f"Row {number}, value {position} is empty")
        if rows and len(values) != len(rows[0]):
            raise AnswerFormatError(
                f"Row {number} has {len(values)} value{'s' if len(values) != 1 else ''} "
                f"but row 1 has {len(rows[0])}: every row reports the same columns"
            )
        rows.append(values)
    return rows


def format_answer(parsed: list[list[str]] | str) -> str:
    if isinstance(parsed, str):
        return parsed
    return " || ".join("{" + " | ".join(row) + "}" for row in parsed)


def canonical_answer(text: str) -> str:
    """The answer in its canonical spacing, or AnswerFormatError."""
    return format_answer(parse_answer(text))


def answer_fits_question(parsed: list[list[str]] | str, *, yes_no: bool) -> str | None:
    """Why a gold answer does not fit its question's Yes/No query property, or None. A Yes/No
    question is answered Yes or No (one per row when its scope is several rows); a bare Yes or
    No answers nothing else."""
    if yes_no:
        if isinstance(parsed, str):
            return None
        if all(value.lower() in ("yes", "no") for row in parsed for value in row):
            return None
        return "a Yes/No question is answered Yes or No (for several rows: {Yes} || {No})"
    if isinstance(parsed, str):
        return f"'{parsed}' answers a Yes/No question: tick Yes/No in the query properties"
    return None
