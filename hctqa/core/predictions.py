"""Reading a predictions file: JSONL or a JSON array, optionally gzipped.

Each record names its question under ``question_id``, ``qap_id``, ``qa_id`` or ``id`` and its
answer under ``response``, ``answer``, ``prediction`` or ``output`` (the key of the
benchmark's own result files). An answer is a string, or JSON ``null`` for "no answer" (read
as ``None``). A record may carry the gold answer its author scored against under ``gt``; it
is returned apart (``PredictionsFile.claimed_gold``) and never scored.

The file is read as a stream, a chunk at a time, so memory stays bounded by the answers kept
(one per known question), not by the file: a record longer than any honest one is refused
without being held whole, unknown ids are counted, not kept, and reading stops at the first
``MAX_PROBLEMS`` problems, which are all reported.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import re
import zlib
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from hctqa.core.wording import counted

ID_KEYS = ("question_id", "qap_id", "qa_id", "id")
ANSWER_KEYS = ("response", "answer", "prediction", "output")
GOLD_KEY = "gt"
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_ANSWER_CHARS = 10_000
# Reading stops after this many problems: enough to fix a file by, without holding millions.
MAX_PROBLEMS = 100
# A record holds an id, an answer (at most max_answer_chars characters, each at most 12 bytes
# when JSON-escaped as a surrogate pair) and perhaps a few more fields.
MIN_RECORD_CHARS = 1024 * 1024
_CHUNK = 64 * 1024
_SHOWN_IDS = 5


class PredictionsError(ValueError):
    """A predictions file that cannot be scored. The message says why in one sentence;
    ``problems`` lists every problem found (at most ``MAX_PROBLEMS``), each with its line."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


@dataclass(frozen=True)
class PredictionsFile:
    # question id → answer; None: the file says "no answer"; a dict only when read with
    # ``objects=True``
    answers: dict[str, Any]
    claimed_gold: dict[str, str] = field(default_factory=dict)  # the file's own `gt`


@dataclass(frozen=True)
class _Problem:
    kind: str  # "unknown", "duplicate" or "record"
    text: str
    question_id: str = ""


class _Fatal(Exception):
    """The file cannot be read on from here (a broken gzip, bad UTF-8, a broken array)."""


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else counted(n, "byte")


class _Text:
    """The file's text, a chunk at a time: gunzipped if it is gzip (every member, as gunzip
    does), never more than ``max_bytes`` once unzipped, and checked to be UTF-8."""

    def __init__(self, stream: IO[bytes], *, max_bytes: int) -> None:
        start = stream.tell()
        size = stream.seek(0, io.SEEK_END) - start
        stream.seek(start)
        if size > max_bytes:
            raise _Fatal(f"The file is {_size(size)}, over the {_size(max_bytes)} limit")
        self.gzipped = stream.read(2) == b"\x1f\x8b"
        stream.seek(start)
        self.stream: IO[bytes] = (
            gzip.GzipFile(fileobj=stream, mode="rb") if self.gzipped else stream
        )
        self.max_bytes = max_bytes
        self.offset = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.first = True
        self.eof = False

    def read(self) -> str:
        """The next chunk of text; "" at the end."""
        if self.eof:
            return ""
        try:
            chunk = self.stream.read(_CHUNK)
        except EOFError:
            raise _Fatal("The gzip file is truncated") from None
        except gzip.BadGzipFile as exc:
            if str(exc).startswith("Not a gzipped file"):
                raise _Fatal("The bytes after the end of the gzip data are not gzip") from None
            raise _Fatal(f"The file looks gzipped but cannot be decompressed ({exc})") from None
        except (zlib.error, OSError) as exc:
            raise _Fatal(f"The file looks gzipped but cannot be decompressed ({exc})") from None
        if self.first:
            self.first = False
            if chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]
                self.offset = 3
        pending = len(self.decoder.getstate()[0])
        self.offset += len(chunk)
        if self.offset > self.max_bytes:
            raise _Fatal(
                f"The file is larger than the {_size(self.max_bytes)} limit once unzipped"
                if self.gzipped
                else f"The file is over the {_size(self.max_bytes)} limit"
            )
        self.eof = not chunk
        try:
            return self.decoder.decode(chunk, final=self.eof)
        except UnicodeDecodeError as exc:
            where = self.offset - len(chunk) - pending + exc.start
            raise _Fatal(
                f"The file is not UTF-8 text: undecodable byte 0x{exc.object[exc.start]:02x} "
                f"at offset {where:,}"
            ) from None


@dataclass
class _Oversized:
    """A record too long to hold: its first and last characters, to name its question."""

    head: str
    tail: str
    chars: int


_ID_IN_TEXT = re.compile('"(?:' + "|".join(ID_KEYS) + r')"\s*:\s*"([^"\\]{1,200})"')


def _oversized_problem(where: str, record: _Oversized, max_record_chars: int) -> str:
    found = _ID_IN_TEXT.search(record.head) or _ID_IN_TEXT.search(record.tail)
    named = f" (question {found.group(1)})" if found else ""
    return (
        f"{where}{named}: the record is {counted(record.chars, 'character')} long, over the "
        f"{max_record_chars:,} a record may take; is its answer far too long?"
    )


def _lines(text: _Text, first: str, max_chars: int) -> Iterator[tuple[int, str | _Oversized]]:
    """JSON Lines: numbered lines, split on \\n only (str.splitlines() would also split inside
    an answer holding U+2028, U+0085 or a form feed, which JSON strings may carry raw)."""
    buffer = first
    start = 0  # where the next line begins: the buffer is cut only when a chunk is added
    number = 0
    oversized: _Oversized | None = None
    while True:
        cut = buffer.find("\n", start)
        if cut == -1:
            chunk = text.read()
            if chunk:
                buffer = buffer[start:] + chunk
                start = 0
                if "\n" not in chunk and (oversized is not None or len(buffer) > max_chars):
                    # A record too long to hold: keep its start and its end, to name it.
                    if oversized is None:
                        oversized = _Oversized(head=buffer[:4096], tail="", chars=0)
                    oversized.chars += len(buffer) - 4096
                    buffer = buffer[-4096:]
                continue
            if start >= len(buffer):
                return
            cut = len(buffer)
        number += 1
        line = buffer[start:cut]
        start = cut + 1
        if oversized is not None:
            oversized.chars += len(line)
            oversized.tail = line
            yield number, oversized
            oversized = None
        else:
            yield number, line
        if start >= len(buffer) and text.eof:
            return


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _array(text: _Text, first: str, max_chars: int) -> Iterator[tuple[int, object]]:
    """A JSON array's records one at a time, each decoded when all of it has arrived. A
    broken array cannot be read on, so its first syntax error ends the file."""
    decoder = json.JSONDecoder()
    buffer = first
    lines_before = 0  # newlines in the text already dropped from the buffer
    pos = buffer.index("[") + 1
    number = 0

    def line_at(index: int) -> int:
        return lines_before + buffer.count("\n", 0, index) + 1

    def more() -> bool:
        nonlocal buffer
        chunk = text.read()
        buffer += chunk
        return bool(chunk)

    def skip_space() -> None:
        nonlocal pos
        while True:
            pos = _WHITESPACE.match(buffer, pos).end()  # type: ignore[union-attr]
            if pos < len(buffer) or not more():
                return

    skip_space()
    if buffer[pos : pos + 1] == "]":
        pos += 1
    else:
        while True:
            number += 1
            start = pos
            while True:
                try:
                    record, end = decoder.raw_decode(buffer, pos)
                except json.JSONDecodeError as exc:
                    if len(buffer) - start <= max_chars and more():
                        continue  # the record has not all arrived yet
                    if len(buffer) - start > max_chars:
                        record = _Oversized(
                            head=buffer[start : start + 4096], tail="", chars=len(buffer) - start
                        )
                        raise _Fatal(
                            _oversized_problem(f"Record {number}", record, max_chars)
                        ) from None
                    raise _Fatal(f"Line {line_at(exc.pos)}: not valid JSON ({exc.msg})") from None
                except RecursionError:
                    raise _Fatal(
                        f"Record {number} (line {line_at(start)}): the JSON is nested too "
                        "deeply (arrays or objects inside one another); a prediction is one "
                        "flat object"
                    ) from None
                # A number at the very end of the buffer may go on in the next chunk.
                if end == len(buffer) and more():
                    continue
                break
            yield number, record
            pos = end
            skip_space()
            separator = buffer[pos : pos + 1]
            if separator == "]":
                pos += 1
                break
            if separator != ",":
                message = "Expecting ',' delimiter" if separator else "the array is not closed"
                raise _Fatal(f"Line {line_at(pos)}: not valid JSON ({message})")
            pos += 1
            skip_space()
            if pos > _CHUNK:  # drop what has been read, keeping the line count
                lines_before += buffer.count("\n", 0, pos)
                buffer, pos = buffer[pos:], 0
    skip_space()
    if pos < len(buffer):
        raise _Fatal(f"Line {line_at(pos)}: not valid JSON (Extra data after the array)")


_RAW_DECODE = json.JSONDecoder().raw_decode


def _decode_line(line: str) -> object:
    """``json.loads(line)``, without its whitespace handling when the line is one JSON value
    and nothing else (a line from a program): a tenth of a file's reading time. Any other
    line, valid or not, goes to ``json.loads``, which says what is wrong."""
    try:
        value, end = _RAW_DECODE(line)
    except json.JSONDecodeError:
        return json.loads(line)
    return value if end == len(line) else json.loads(line)


def _record_value(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, object]:
    for key in keys:
        if key in record:
            return key, record[key]
    return None, None


class _Collector:
    """Checks each record and keeps the answers, or the problems (up to MAX_PROBLEMS)."""

    def __init__(
        self,
        *,
        max_answer_chars: int | None,
        known_ids: Collection[str] | None,
        objects: bool = False,
    ):
        self.max_answer_chars = max_answer_chars
        self.known_ids = known_ids
        self.objects = objects
        self.answers: dict[str, Any] = {}
        self.claimed_gold: dict[str, str] = {}
        self.problems: list[_Problem] = []

    @property
    def full(self) -> bool:
        return len(self.problems) >= MAX_PROBLEMS

    def problem(self, kind: str, text: str, question_id: str = "") -> None:
        self.problems.append(_Problem(kind, text, question_id))

    def add(self, where: str, record: object) -> None:
        if not isinstance(record, dict):
            return self.problem("record", f"{where}: each prediction must be a JSON object")
        id_key, question_id = _record_value(record, ID_KEYS)
        if id_key is None:
            return self.problem(
                "record", f"{where}: no question id (expected one of {', '.join(ID_KEYS)})"
            )
        if not isinstance(question_id, str) or not question_id.strip():
            return self.problem("record", f"{where}: {id_key} must be a non-empty string")
        answer_key, answer = _record_value(record, ANSWER_KEYS)
        if answer_key is None:
            return self.problem(
                "record", f"{where}: no answer (expected one of {', '.join(ANSWER_KEYS)})"
            )
        object_answer = self.objects and isinstance(answer, dict)
        if answer is not None and not isinstance(answer, str) and not object_answer:
            kinds = "a string, an object or null" if self.objects else "a string or null"
            return self.problem(
                "record", f"{where}: {answer_key} must be {kinds}, not {type(answer).__name__}"
            )
        limit = self.max_answer_chars
        if limit is not None and isinstance(answer, str) and len(answer) > limit:
            return self.problem(
                "record",
                f"{where}: the answer to {question_id} is "
                f"{counted(len(answer), 'character')} long, "
                f"over the limit of {limit:,}",
            )
        claimed = record.get(GOLD_KEY)
        if claimed is not None and not isinstance(claimed, str):
            return self.problem(
                "record", f"{where}: {GOLD_KEY} must be a string, not {type(claimed).__name__}"
            )
        if claimed is not None and limit is not None and len(claimed) > limit:
            return self.problem(
                "record",
                f"{where}: the {GOLD_KEY} of {question_id} is "
                f"{counted(len(claimed), 'character')} long, over the limit of {limit:,}",
            )
        if self.known_ids is not None and question_id not in self.known_ids:
            return self.problem(
                "unknown", f"{where}: unknown question id {question_id}", question_id
            )
        if question_id in self.answers:
            return self.problem(
                "duplicate", f"{where}: a second answer to {question_id}", question_id
            )
        self.answers[question_id] = answer
        if claimed is not None:
            self.claimed_gold[question_id] = claimed


def _counted(n: int, what: str, *, at_least: bool) -> str:
    """``3 unknown question ids``, ``1 unknown question id``, ``At least 100 problems``."""
    return f"At least {counted(n, what)}" if at_least else counted(n, what)


def _summary(problems: list[_Problem], stopped_at: str) -> str:
    kinds = {p.kind for p in problems}
    stopped = f" (reading stopped at {stopped_at})" if stopped_at else ""
    at_least = bool(stopped_at)
    if kinds == {"unknown"} or kinds == {"duplicate"}:
        # Distinct ids: an unknown id given twice is one unknown id (each line is listed).
        ids = sorted({p.question_id for p in problems})
        what = "unknown question id" if kinds == {"unknown"} else "duplicate question id"
        shown = ", ".join(ids[:_SHOWN_IDS])
        return f"{_counted(len(ids), what, at_least=at_least)}{stopped}, e.g. {shown}"
    if len(problems) == 1:
        return problems[0].text
    many = _counted(len(problems), "problem", at_least=at_least)
    return f"{many}{stopped}; the first: {problems[0].text}"


def read_predictions(
    source: bytes | IO[bytes],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_answer_chars: int | None = None,
    known_ids: Collection[str] | None = None,
    objects: bool = False,
) -> PredictionsFile:
    """Read and check a predictions file (bytes, or a seekable binary file).

    ``max_answer_chars``: longer answers are refused (None: no limit). ``known_ids``: ids
    outside it are refused as unknown, counted as they stream past (None: not checked).
    ``objects``: a JSON object is an answer too (the extraction track's cells), kept as the
    dict; its size is bounded by the record's. Raises ``PredictionsError`` listing the
    problems when anything is wrong.
    """
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    max_record_chars = (
        max(MIN_RECORD_CHARS, 16 * max_answer_chars) if max_answer_chars else max_bytes
    )
    collector = _Collector(max_answer_chars=max_answer_chars, known_ids=known_ids, objects=objects)
    stopped_at = ""
    records = 0
    try:
        text = _Text(stream, max_bytes=max_bytes)
        first = ""
        while not first.strip():
            chunk = text.read()
            if not chunk:
                break
            first += chunk
        if not first.strip():
            raise PredictionsError("The file is empty")
        if first.lstrip().startswith("["):
            for number, record in _array(text, first, max_record_chars):
                records += 1
                collector.add(f"Record {number}", record)
                if collector.full:
                    stopped_at = f"record {number}"
                    break
        else:
            for number, line in _lines(text, first, max_record_chars):
                if isinstance(line, _Oversized):
                    records += 1
                    where = f"Line {number}"
                    collector.problem("record", _oversized_problem(where, line, max_record_chars))
                elif line.strip():
                    records += 1
                    try:
                        record = _decode_line(line)
                    except json.JSONDecodeError as exc:
                        collector.problem("record", f"Line {number}: not valid JSON ({exc.msg})")
                    except RecursionError:
                        collector.problem(
                            "record",
                            f"Line {number}: the JSON is nested too deeply (arrays or objects "
                            "inside one another); a prediction is one flat object",
                        )
                    else:
                        collector.add(f"Line {number}", record)
                if collector.full:
                    stopped_at = f"line {number}"
                    break
    except _Fatal as exc:
        collector.problem("fatal", str(exc))
    problems = collector.problems
    if problems:
        raise PredictionsError(_summary(problems, stopped_at), [p.text for p in problems])
    if not records:
        raise PredictionsError("The file holds no predictions")
    return PredictionsFile(answers=collector.answers, claimed_gold=collector.claimed_gold)


def parse_predictions(
    source: bytes | IO[bytes],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_answer_chars: int | None = None,
    known_ids: Collection[str] | None = None,
) -> dict[str, str | None]:
    """Question id → answer text (None where the file gives JSON null). Raises
    ``PredictionsError`` for anything malformed; see ``read_predictions``."""
    return read_predictions(
        source, max_bytes=max_bytes, max_answer_chars=max_answer_chars, known_ids=known_ids
    ).answers


def check_known(predictions: Mapping[str, object], known_ids: Collection[str]) -> None:
    """Refuse predictions for questions that are not in the dataset."""
    unknown = [q for q in predictions if q not in known_ids]
    if unknown:
        shown = ", ".join(sorted(unknown)[:_SHOWN_IDS])
        raise PredictionsError(f"{counted(len(unknown), 'unknown question id')}, e.g. {shown}")
