"""Reading a predictions file: JSONL or a JSON array, optionally gzipped.

Each record names its question under ``question_id``, ``qap_id``, ``qa_id`` or ``id`` and its
answer under ``response``, ``answer`` or ``prediction``. Anything else is refused with an
error that says what and where.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Collection, Mapping

ID_KEYS = ("question_id", "qap_id", "qa_id", "id")
ANSWER_KEYS = ("response", "answer", "prediction")
DEFAULT_MAX_BYTES = 50 * 1024 * 1024


class PredictionsError(ValueError):
    """A predictions file that cannot be scored; the message says why."""


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    """Decompress every gzip member (``cat a.gz b.gz`` is one valid gzip file) without ever
    holding more than ``max_bytes``: a small file can unpack to gigabytes."""
    out = bytearray()
    rest = data
    while rest:
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += decompressor.decompress(rest, max_bytes + 1 - len(out))
        except zlib.error as exc:
            raise PredictionsError(
                f"the file looks gzipped but cannot be decompressed ({exc})"
            ) from None
        if len(out) > max_bytes or decompressor.unconsumed_tail:
            raise PredictionsError(
                f"the file is larger than the {_size(max_bytes)} limit once unzipped"
            )
        if not decompressor.eof:
            raise PredictionsError("the gzip file is truncated")
        rest = decompressor.unused_data
        if rest and not rest.startswith(b"\x1f\x8b"):
            if rest.strip(b"\x00"):  # some tools pad with zeros; anything else is not gzip
                raise PredictionsError(
                    f"{len(rest):,} bytes after the end of the gzip data are not gzip"
                )
            break
    return bytes(out)


def _record_value(record: dict, keys: tuple[str, ...]) -> tuple[str | None, object]:
    for key in keys:
        if key in record:
            return key, record[key]
    return None, None


def parse_predictions(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, str]:
    """Question id → answer text. Raises ``PredictionsError`` for anything malformed."""
    if len(data) > max_bytes:
        raise PredictionsError(f"the file is {_size(len(data))}, over the {_size(max_bytes)} limit")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, max_bytes)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PredictionsError(
            f"the file is not UTF-8 text: undecodable byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start:,}"
        ) from None
    if not text.strip():
        raise PredictionsError("the file is empty")

    records: list[tuple[int, object]] = []
    if text.lstrip().startswith("["):
        try:
            array = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PredictionsError(f"line {exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(array, list):
            raise PredictionsError("a JSON file must hold an array of predictions")
        records = [(i + 1, r) for i, r in enumerate(array)]
        where = "record"
    else:
        # JSON Lines splits on \n only: str.splitlines() would also split inside an answer
        # holding U+2028, U+0085 or a form feed, which JSON strings may carry raw.
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise PredictionsError(f"line {number}: not valid JSON ({exc.msg})") from None
        where = "line"
    if not records:
        raise PredictionsError("the file holds no predictions")

    predictions: dict[str, str] = {}
    duplicates: list[str] = []
    for number, record in records:
        if not isinstance(record, dict):
            raise PredictionsError(f"{where} {number}: each prediction must be a JSON object")
        id_key, question_id = _record_value(record, ID_KEYS)
        if id_key is None:
            raise PredictionsError(
                f"{where} {number}: no question id (expected one of {', '.join(ID_KEYS)})"
            )
        if not isinstance(question_id, str) or not question_id.strip():
            raise PredictionsError(f"{where} {number}: {id_key} must be a non-empty string")
        answer_key, answer = _record_value(record, ANSWER_KEYS)
        if answer_key is None:
            raise PredictionsError(
                f"{where} {number}: no answer (expected one of {', '.join(ANSWER_KEYS)})"
            )
        if not isinstance(answer, str):
            raise PredictionsError(
                f"{where} {number}: {answer_key} must be a string, not {type(answer).__name__}"
            )
        if question_id in predictions:
            duplicates.append(question_id)
            continue
        predictions[question_id] = answer
    if duplicates:
        shown = ", ".join(duplicates[:5])
        raise PredictionsError(f"{len(duplicates):,} duplicate question ids, e.g. {shown}")
    return predictions


def check_known(predictions: Mapping[str, str], known_ids: Collection[str]) -> None:
    """Refuse predictions for questions that are not in the dataset."""
    unknown = [q for q in predictions if q not in known_ids]
    if unknown:
        shown = ", ".join(sorted(unknown)[:5])
        raise PredictionsError(f"{len(unknown):,} unknown question ids, e.g. {shown}")
