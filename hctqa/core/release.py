"""Reading the HCT-QA release files into plain records.

Everything is read and checked before anything is written: a malformed record raises a
``ReleaseError`` naming the record, so the importer can refuse the whole file.
"""

from __future__ import annotations

import gzip
import json
import re
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hctqa.core import taxonomy
from hctqa.core.splits import SPLITS, Split
from hctqa.core.tables import (
    HCT,
    HtmlCell,
    TableFormatError,
    canonical_from_embedded_csv,
    canonical_from_html,
    canonical_from_release_csv,
    html_table_cells,
    parse_table,
)

REAL_SOURCES = ("psa", "pak", "census", "arxiv")
Origin = Literal["human", "model", "synthetic"]

_TABLE_ID = re.compile(r"^(psa|pak|census|arxiv)--\d+--\d+$")
_QUESTION_SUFFIX = re.compile(r"^([MA])(\d+)$")


class ReleaseError(ValueError):
    """A release record that cannot be imported. ``record`` names it."""

    def __init__(self, record: str, message: str) -> None:
        super().__init__(f"{record}: {message}")
        self.record = record
        self.message = message


@dataclass(frozen=True)
class ReleaseQuestion:
    id: str
    text: str
    gold_answer: str
    origin: Origin
    query_properties: dict[str, bool | int | None]
    template_number: int | None = None
    sql: str = ""


@dataclass(frozen=True)
class ReleaseTable:
    id: str
    source: str
    canonical_csv: str
    table_properties: dict[str, bool | int | None]
    questions: tuple[ReleaseQuestion, ...]
    image_url: str = ""
    split: Split | None = None
    synthetic: SyntheticFiles | None = None


@dataclass(frozen=True)
class SyntheticFiles:
    family: str
    hct_csv: str
    hct_html: str
    relational_csv: str
    questions_sql: dict[str, str] = field(default_factory=dict)


def read_bytes(path: str | Path) -> bytes:
    """File contents, un-gzipped when the file is gzip (by its magic bytes, not its name)."""
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ReleaseError(str(path), f"not a readable gzip file ({exc})") from None
    return data


def _decode_json(data: bytes, name: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReleaseError(name, f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReleaseError(
            name, f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def _field(record: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in record:
        raise ReleaseError(where, f"missing {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        raise ReleaseError(where, f"{key!r} should be {kind.__name__}, not {type(value).__name__}")
    return value


def read_csvs_tar(path: str | Path) -> dict[str, str]:
    """``csvs/<source>_<n>_<m>.csv`` members of the release tarball, keyed by table id."""
    out: dict[str, str] = {}
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive.getmembers():
                name = member.name.rsplit("/", 1)[-1]
                handle = archive.extractfile(member) if member.isfile() else None
                if handle is None or not name.endswith(".csv"):
                    continue
                table_id = name[: -len(".csv")].replace("_", "--", 2)
                try:
                    out[table_id] = handle.read().decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ReleaseError(member.name, f"not UTF-8 text (byte {exc.start})") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ReleaseError(str(path), f"not a readable tar archive ({exc})") from None
    if not out:
        raise ReleaseError(str(path), "no CSV files in the archive")
    return out


def parse_qaps(data: bytes, *, raw_csvs: Mapping[str, str] | None = None) -> list[ReleaseTable]:
    """Parse ``qaps.json``. With ``raw_csvs`` (from ``csvs.tar.gz``) each table's canonical CSV
    is taken from there, byte for byte, instead of pandas' re-written copy in the JSON."""
    records = _decode_json(data, "qaps")
    if not isinstance(records, list):
        raise ReleaseError("qaps", "the file should hold a JSON list of tables")
    if not records:
        raise ReleaseError("qaps", "the file holds no tables")
    tables: list[ReleaseTable] = []
    seen_tables: set[str] = set()
    seen_questions: set[str] = set()
    for position, record in enumerate(records):
        where = f"table #{position + 1}"
        if not isinstance(record, dict):
            raise ReleaseError(where, "should be a JSON object")
        table_id = _field(record, "table_id", str, where)
        if not _TABLE_ID.match(table_id):
            raise ReleaseError(
                table_id, "table_id should look like <source>--<n>--<m> with a real source"
            )
        if table_id in seen_tables:
            raise ReleaseError(table_id, "appears twice")
        seen_tables.add(table_id)
        table = _parse_table_record(record, table_id, raw_csvs)
        for question in table.questions:
            if question.id in seen_questions:
                raise ReleaseError(question.id, "appears twice")
            seen_questions.add(question.id)
        tables.append(table)
    return tables


def _parse_table_record(
    record: Mapping[str, Any], table_id: str, raw_csvs: Mapping[str, str] | None
) -> ReleaseTable:
    info = _field(record, "table_info", dict, table_id)
    try:
        props = taxonomy.from_release(
            taxonomy.TABLE_PROPERTIES, _field(info, "table_properties", dict, table_id)
        )
    except taxonomy.PropertyError as exc:
        raise ReleaseError(table_id, f"table_properties: {exc}") from None
    try:
        if raw_csvs is not None:
            if table_id not in raw_csvs:
                raise ReleaseError(table_id, "no CSV for this table in the CSV archive")
            canonical = canonical_from_release_csv(raw_csvs[table_id])
        else:
            formats = _field(info, "table_formats", dict, table_id)
            canonical = canonical_from_embedded_csv(_field(formats, "csv", str, table_id))
        parse_table(canonical)
    except TableFormatError as exc:
        raise ReleaseError(table_id, f"canonical CSV: {exc}") from None
    split = record.get("split")
    if split is not None and split not in SPLITS:
        raise ReleaseError(table_id, f"split should be one of {', '.join(SPLITS)}, not {split!r}")
    image_url = info.get("table_image_url") or ""
    if not isinstance(image_url, str):
        raise ReleaseError(table_id, "table_image_url should be a string")
    # It becomes an <img src>: only web addresses, never javascript: or data: URLs.
    if image_url and not image_url.lower().startswith(("http://", "https://")):
        raise ReleaseError(
            table_id, f"table_image_url should start with http:// or https://, not {image_url!r}"
        )
    questions = tuple(
        _parse_question(q, table_id, i)
        for i, q in enumerate(_field(record, "questions", list, table_id))
    )
    return ReleaseTable(
        id=table_id,
        source=table_id.split("--", 1)[0],
        canonical_csv=canonical,
        table_properties=props,
        questions=questions,
        image_url=image_url,
        split=split,
    )


def _parse_question(record: Any, table_id: str, position: int) -> ReleaseQuestion:
    where = f"{table_id} question #{position + 1}"
    if not isinstance(record, dict):
        raise ReleaseError(where, "should be a JSON object")
    question_id = _field(record, "question_id", str, where)
    prefix, _, suffix = question_id.rpartition("--")
    match = _QUESTION_SUFFIX.match(suffix)
    if prefix != table_id or not match:
        raise ReleaseError(
            question_id, f"question_id should be {table_id}--M<k> (human) or --A<k> (model)"
        )
    text = _field(record, "question", str, question_id)
    if not text.strip():
        raise ReleaseError(question_id, "the question text is empty")
    gold = _field(record, "gt", str, question_id)
    try:
        props = taxonomy.from_release(
            taxonomy.QUERY_PROPERTIES, _field(record, "question_properties", dict, question_id)
        )
    except taxonomy.PropertyError as exc:
        raise ReleaseError(question_id, f"question_properties: {exc}") from None
    return ReleaseQuestion(
        id=question_id,
        text=text,
        gold_answer=gold,
        origin="human" if match.group(1) == "M" else "model",
        query_properties=props,
    )


# --- Synthetic families --------------------------------------------------------------------

_SYNTHETIC_SET = re.compile(r"^(?P<stem>(?P<family>.+)_set\d+_\d+)_HCT\.html$")
_TEMPLATE = re.compile(r"^template (\d+)$")
_AGGREGATE_CLASSES = {"Total", "OutlineCell"}


def synthetic_table_id(stem: str) -> str:
    return f"synthetic--{stem}"


def read_synthetic_zip(path: str | Path) -> list[ReleaseTable]:
    """One table per ``<family>_set<i>_<j>_`` in a synthetic family's zip (the semantic
    variant; the ``_NONSEM`` files are left out)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ReleaseError(str(path), f"not a readable zip archive ({exc})") from None
    with archive:
        members = {n: n for n in archive.namelist() if not n.endswith("/")}
        return read_synthetic_files(members, archive.read, str(path))


def read_synthetic_folder(path: str | Path) -> list[ReleaseTable]:
    """The same as ``read_synthetic_zip`` for a folder of generated files (not recursive)."""
    folder = Path(path)
    files = {p.name: p for p in folder.iterdir() if p.is_file()}
    return read_synthetic_files(files, lambda p: Path(p).read_bytes(), str(path))


def read_synthetic(path: str | Path) -> list[ReleaseTable]:
    """A synthetic family from a zip file or a folder of generated files."""
    return read_synthetic_folder(path) if Path(path).is_dir() else read_synthetic_zip(path)


def read_synthetic_files(
    members: Mapping[str, Any], read_member: Callable[[Any], bytes], where: str = "files"
) -> list[ReleaseTable]:
    """Tables from generated files: ``members`` maps each path to what ``read_member`` reads."""
    names = set(members)
    stems = sorted(
        (m.group("stem"), m.group("family"))
        for n in names
        if (m := _SYNTHETIC_SET.match(n.rsplit("/", 1)[-1]))
    )
    if not stems:
        raise ReleaseError(where, "no <family>_set<i>_<j>_HCT.html files")
    prefix = {n.rsplit("/", 1)[-1]: n for n in names}

    def read(stem: str, suffix: str) -> str:
        name = prefix.get(f"{stem}_{suffix}")
        if name is None:
            raise ReleaseError(synthetic_table_id(stem), f"missing {stem}_{suffix}")
        try:
            return read_member(members[name]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ReleaseError(name, f"not UTF-8 text (byte {exc.start})") from None

    return [_synthetic_table(stem, family, read) for stem, family in stems]


def synthetic_properties_from_html(
    hct_html: str, where: str = "HCT.html"
) -> dict[str, bool | int | None]:
    """Table properties of a generated HCT, read off its HTML (import and generator share it)."""
    try:
        parsed = parse_table(canonical_from_html(hct_html))
        cells = html_table_cells(hct_html)
    except TableFormatError as exc:
        raise ReleaseError(where, f"HCT.html: {exc}") from None
    return synthetic_table_properties(parsed, cells)


def _synthetic_table(stem: str, family: str, read: Callable[[str, str], str]) -> ReleaseTable:
    table_id = synthetic_table_id(stem)
    hct_html = read(stem, "HCT.html")
    hct_csv = read(stem, "HCT.csv")
    relational_csv = read(stem, "DB.csv")
    try:
        canonical = canonical_from_html(hct_html)
        parsed = parse_table(canonical)
        cells = html_table_cells(hct_html)
    except TableFormatError as exc:
        raise ReleaseError(table_id, f"HCT.html: {exc}") from None
    qanda = _decode_json(read(stem, "QandA.json").encode("utf-8"), f"{stem}_QandA.json")
    if not isinstance(qanda, dict) or not isinstance(qanda.get("questions"), list):
        raise ReleaseError(f"{stem}_QandA.json", "should be an object with a 'questions' list")
    questions: list[ReleaseQuestion] = []
    for i, q in enumerate(qanda["questions"]):
        where = f"{stem}_QandA.json question #{i + 1}"
        if not isinstance(q, dict):
            raise ReleaseError(where, "should be a JSON object")
        name = _field(q, "name", str, where)
        match = _TEMPLATE.match(name)
        if not match:
            raise ReleaseError(where, f"name should be 'template N', not {name!r}")
        number = int(match.group(1))
        text = _field(q, "nlq", str, where)
        if not text.strip():
            raise ReleaseError(where, "the question text (nlq) is empty")
        questions.append(
            ReleaseQuestion(
                id=f"{table_id}--T{number}",
                text=text,
                gold_answer=_field(q, "sqlResult", str, where),
                origin="synthetic",
                query_properties=taxonomy.QUERY_PROPERTIES.empty(),
                template_number=number,
                sql=_field(q, "sql", str, where),
            )
        )
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ReleaseError(table_id, "two questions share a template number")
    return ReleaseTable(
        id=table_id,
        source="synthetic",
        canonical_csv=canonical,
        table_properties=synthetic_table_properties(parsed, cells),
        questions=tuple(questions),
        synthetic=SyntheticFiles(
            family=family, hct_csv=hct_csv, hct_html=hct_html, relational_csv=relational_csv
        ),
    )


def synthetic_table_properties(
    parsed: HCT, cells: list[list[HtmlCell | None]]
) -> dict[str, bool | int | None]:
    """Table properties of a generated HCT, read off its structure.

    The generator pivots full cross products, so its nestings are balanced and symmetric (the
    paper's Table 5 reports the same), and it names every aggregate (Total, Average, ...), so
    aggregation terms are explicit. Aggregate cells carry the CSS class ``Total``; an outline
    row (group label with the group's totals) is a local row-group aggregation.
    """
    props = taxonomy.TABLE_PROPERTIES.empty()
    hr, hc = parsed.header_rows, parsed.header_columns
    body = cells[hr:]

    def is_aggregate(cell: HtmlCell | None) -> bool:
        return cell is not None and cell.css_class in _AGGREGATE_CLASSES

    if hr > 1:
        props.update(
            multi_level_column=True,
            balanced_multi_level_column=True,
            symmetric_multi_level_column=True,
        )
    if hc > 1 and any(c.rowspan > 1 for c in parsed.cells if c.role == "row_header"):
        props.update(row_nesting=True, balanced_row_nesting=True, symmetric_row_nesting=True)

    # Aggregate rows: every value cell an aggregate. Global when labelled in the first column.
    for row in body:
        values = [c for c in row[hc:] if c is not None]
        if values and all(is_aggregate(c) for c in values):
            outline = any(c.css_class == "OutlineCell" for c in values)
            label_col = next((i for i, c in enumerate(row[:hc]) if c is not None and c.text), 0)
            props["row_aggregation"] = True
            props["explicit_row_aggregation_terms"] = True
            global_ = label_col == 0 and not outline
            key = "global_row_aggregation" if global_ else "local_row_group_aggregation"
            props[key] = True

    # Aggregate columns: every body cell an aggregate. Global when its top header says so.
    paths = parsed.column_paths()
    aggregate_rows = {
        r for r, row in enumerate(body) if all(is_aggregate(c) for c in row[hc:] if c)
    }
    for col in range(hc, parsed.n_columns):
        column = [body[r][col] for r in range(len(body)) if r not in aggregate_rows]
        column = [c for c in column if c is not None]
        if column and all(is_aggregate(c) for c in column):
            props["column_aggregation"] = True
            props["explicit_column_aggregation_terms"] = True
            global_ = len(paths[col]) <= 1
            key = "global_column_aggregation" if global_ else "local_column_group_aggregation"
            props[key] = True

    if not any(v for v in props.values()):
        props["standard_relational_table"] = True
    return props


def question_counts(tables: Iterable[ReleaseTable]) -> dict[str, int]:
    counts = {"tables": 0, "questions": 0, "human": 0, "model": 0, "synthetic": 0}
    for table in tables:
        counts["tables"] += 1
        for q in table.questions:
            counts["questions"] += 1
            counts[q.origin] += 1
    return counts
