"""The generator's three parameter files, read and checked.

Every problem is a ``ParamsError`` naming the file and the key, e.g.
``PARAM_tableTemplates.json: tables[2].rowCodes[1]: unknown code 'Foo'``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

SEMANTICS_FILE = "PARAM_semantics.json"
TABLES_FILE = "PARAM_tableTemplates.json"
QUESTIONS_FILE = "PARAM_NLquestionTemplates.json"
PARAM_FILES = (SEMANTICS_FILE, TABLES_FILE, QUESTIONS_FILE)

AGG_FUNCTIONS = ("sum", "avg", "min", "max")
QUESTION_TEMPLATES = tuple(range(1, 15))  # template_1 .. template_14; 15 is derived
MAX_FILE_BYTES = 5 * 1024 * 1024
_MAX_REPLICA = 100


class ParamsError(ValueError):
    def __init__(self, file: str, key: str, message: str) -> None:
        super().__init__(f"{file}: {key}: {message}" if key else f"{file}: {message}")
        self.file = file
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Code:
    """A semantic attribute code: one level (flat) or several (hierarchical)."""

    code: str
    names: tuple[str, ...]
    # Flat: one value per entry. Hierarchical: one path (a value per level) per leaf, in
    # depth-first JSON order.
    paths: tuple[tuple[str, ...], ...]

    @property
    def hierarchical(self) -> bool:
        return len(self.names) > 1


@dataclass(frozen=True)
class ValueRange:
    low: float
    high: float
    integer: bool


@dataclass(frozen=True)
class Family:
    """One entry of ``tables`` in PARAM_tableTemplates.json: a semantic family."""

    value_name: str
    values: ValueRange
    row_codes: tuple[str, ...]
    row_samples: tuple[tuple[int, ...], ...]
    col_codes: tuple[str, ...]
    col_samples: tuple[tuple[int, ...], ...]
    agg_name: str
    agg_fun: str

    @property
    def prefix(self) -> str:
        return self.value_name.replace(" ", "_")


@dataclass(frozen=True)
class QuestionTemplates:
    table_name: str
    value_meaning: str
    simplify_nested: tuple[tuple[str, ...], ...]
    report: str
    patterns: Mapping[int, tuple[str, ...]]


@dataclass(frozen=True)
class Params:
    codes: Mapping[str, Code]
    replica: int
    shuffle: tuple[str, ...]
    col_row_levels: tuple[str, ...]
    col_row_name_pos: tuple[str, ...]
    col_row_agg_pos: tuple[str, ...]
    row_format: tuple[str, ...]
    families: tuple[Family, ...]
    questions: Mapping[str, QuestionTemplates]

    def family(self, name: str) -> Family:
        for family in self.families:
            if name in (family.value_name, family.prefix):
                return family
        known = ", ".join(f.prefix for f in self.families)
        raise ParamsError(TABLES_FILE, "tables", f"no family named {name!r} (known: {known})")


@lru_cache(maxsize=4096)
def sql_name(name: str) -> str:
    """The attribute's SQL column name: ``.``, space, ``-`` and ``/`` become ``_``."""
    return re.sub(r"[. \-/]", "_", name)


# --- reading -------------------------------------------------------------------------------


def _load(folder: Path, name: str) -> Any:
    path = folder / name
    if not path.is_file():
        raise ParamsError(name, "", f"missing (looked in {folder})")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ParamsError(name, "", f"larger than {MAX_FILE_BYTES // 1024 // 1024} MiB")
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ParamsError(name, "", f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ParamsError(
            name, "", f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def _get(obj: Any, key: str, kind: type | tuple[type, ...], file: str, where: str) -> Any:
    label = f"{where}.{key}" if where else key
    if not isinstance(obj, dict) or key not in obj:
        raise ParamsError(file, label, "missing")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ParamsError(file, label, f"should be {names}, not {type(value).__name__}")
    return value


def _strings(value: Any, file: str, label: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParamsError(file, label, "should be a list of strings")
    if not value and not allow_empty:
        raise ParamsError(file, label, "should not be empty")
    return tuple(value)


def _check_label(text: str, file: str, label: str) -> None:
    # Paths are joined with '.', and values are written into CSV, SQL and HTML unquoted.
    bad = [c for c in ".,'\"<>&\r\n" if c in text]
    if not text.strip() or bad:
        raise ParamsError(
            file, label, f"{text!r} should be non-empty text without {''.join(bad) or 'blanks'}"
        )


def _flatten(node: Any, depth: int, file: str, label: str) -> list[tuple[str, ...]]:
    """Leaves of a hierarchical value tree as paths, depth-first in JSON order."""
    if depth == 1:
        if isinstance(node, str):
            _check_label(node, file, label)
            return [(node,)]
        if isinstance(node, list) and node and all(isinstance(v, str) for v in node):
            for v in node:
                _check_label(v, file, label)
            return [(v,) for v in node]
        raise ParamsError(file, label, "should be a value or a list of values at the last level")
    items = node if isinstance(node, list) else [node]
    paths: list[tuple[str, ...]] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or len(item) != 1:
            raise ParamsError(file, f"{label}[{i}]", "should be an object with a single key")
        ((key, children),) = item.items()
        _check_label(key, file, f"{label}[{i}]")
        paths.extend((key, *p) for p in _flatten(children, depth - 1, file, f"{label}[{i}].{key}"))
    return paths


def _read_semantics(raw: Any) -> tuple[dict[str, Code], dict[str, ValueRange]]:
    f = SEMANTICS_FILE
    data = _get(raw, "data", list, f, "")
    codes: dict[str, Code] = {}
    for i, entry in enumerate(data):
        where = f"data[{i}]"
        code = _get(entry, "code", str, f, where)
        if code in codes:
            raise ParamsError(f, f"{where}.code", f"{code!r} appears twice")
        names = _strings(_get(entry, "names", list, f, where), f, f"{where}.names")
        for name in names:
            _check_label(name, f, f"{where}.names")
        values = _get(entry, "values", list, f, where)
        if not values:
            raise ParamsError(f, f"{where}.values", "should not be empty")
        if len(names) == 1:
            flat = _strings(values, f, f"{where}.values")
            for v in flat:
                _check_label(v, f, f"{where}.values")
            paths = tuple((v,) for v in flat)
        else:
            paths = tuple(_flatten(values, len(names), f, f"{where}.values"))
        codes[code] = Code(code=code, names=names, paths=paths)
    shortcuts: dict[str, ValueRange] = {}
    raw_values = raw.get("values", {}) if isinstance(raw, dict) else {}
    if not isinstance(raw_values, dict):
        raise ParamsError(f, "values", "should be an object of named [min, max] ranges")
    for name, pair in raw_values.items():
        shortcuts[name] = _range(pair, f, f"values.{name}")
    return codes, shortcuts


def _range(pair: Any, file: str, label: str) -> ValueRange:
    if (
        not isinstance(pair, list)
        or len(pair) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in pair)
    ):
        raise ParamsError(file, label, "should be [min, max]")
    low, high = pair
    if low > high:
        raise ParamsError(file, label, f"min {low} is above max {high}")
    # A JSON literal with a decimal point means real values (R's jsonlite reads it as double).
    integer = isinstance(low, int) and isinstance(high, int)
    return ValueRange(float(low), float(high), integer)


def _samples(value: Any, count: int, file: str, label: str) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list) or len(value) != count:
        raise ParamsError(file, label, f"should be a list of {count} entries, one per code")
    out = []
    for i, entry in enumerate(value):
        item = entry if isinstance(entry, list) else [entry]
        ok = all(isinstance(v, int) and not isinstance(v, bool) for v in item)
        if not ok or len(item) not in (1, 2) or (len(item) == 2 and min(item) < 0):
            raise ParamsError(file, f"{label}[{i}]", "should be 0, [0] or [n, m]")
        out.append(tuple(item) if len(item) == 2 else (0,))
    return tuple(out)


def _read_tables(raw: Any, codes: Mapping[str, Code], shortcuts: Mapping[str, ValueRange]):
    f = TABLES_FILE
    replica = _get(raw, "replica", int, f, "")
    if not 1 <= replica <= _MAX_REPLICA:
        raise ParamsError(f, "replica", f"should be between 1 and {_MAX_REPLICA}")
    lists = {}
    allowed = {
        "shuffle": {"none", "rowscols"},
        "row_format": {"new", "indent"},
    }
    for key in ("shuffle", "col_row_levels", "col_row_name_pos", "col_row_agg_pos", "row_format"):
        items = _strings(_get(raw, key, list, f, ""), f, key)
        for i, item in enumerate(items):
            label = f"{key}[{i}]"
            if key in allowed and item not in allowed[key]:
                raise ParamsError(f, label, f"{item!r} should be one of {sorted(allowed[key])}")
            if key == "col_row_levels" and not re.fullmatch(r"[1-9]_[1-9]", item):
                raise ParamsError(f, label, f"{item!r} should look like 2_1 (columns_rows)")
            if key == "col_row_agg_pos":
                col, _, row = item.partition("_")
                if col not in ("none", "right") or row not in ("none", "top", "bottom"):
                    raise ParamsError(f, label, f"{item!r} should be none|right _ none|top|bottom")
            if key == "col_row_name_pos" and "_" not in item:
                raise ParamsError(f, label, f"{item!r} should look like left_top")
        lists[key] = items
    families = []
    seen: set[str] = set()
    for i, entry in enumerate(_get(raw, "tables", list, f, "")):
        where = f"tables[{i}]"
        value_name = _get(entry, "valueName", str, f, where)
        _check_label(value_name, f, f"{where}.valueName")
        if "_set" in value_name.replace(" ", "_") or "/" in value_name or "\\" in value_name:
            raise ParamsError(f, f"{where}.valueName", "should not contain '_set' or slashes")
        if value_name in seen:
            raise ParamsError(f, f"{where}.valueName", f"{value_name!r} appears twice")
        seen.add(value_name)
        raw_values = _get(entry, "values", (str, list), f, where)
        if isinstance(raw_values, str):
            if raw_values not in shortcuts:
                raise ParamsError(
                    f, f"{where}.values", f"unknown shortcut {raw_values!r} (see {SEMANTICS_FILE})"
                )
            values = shortcuts[raw_values]
        else:
            values = _range(raw_values, f, f"{where}.values")
        sides = {}
        for side in ("row", "col"):
            side_codes = _strings(
                _get(entry, f"{side}Codes", list, f, where), f, f"{where}.{side}Codes"
            )
            for j, code in enumerate(side_codes):
                if code not in codes:
                    raise ParamsError(
                        f,
                        f"{where}.{side}Codes[{j}]",
                        f"unknown code {code!r} (not in {SEMANTICS_FILE})",
                    )
            samples = _samples(
                _get(entry, f"{side}Samples", list, f, where),
                len(side_codes),
                f,
                f"{where}.{side}Samples",
            )
            sides[side] = (side_codes, samples)
        all_codes = sides["row"][0] + sides["col"][0]
        names = [n for c in all_codes for n in codes[c].names]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate is not None:
            raise ParamsError(
                f, where, f"the attribute name {duplicate!r} is used by two of the family's codes"
            )
        if len({sql_name(n) for n in names}) != len(names) or "Value" in names:
            raise ParamsError(f, where, "two attribute names share an SQL name (or one is Value)")
        agg_fun = _get(entry, "agg_fun1", str, f, where)
        if agg_fun not in AGG_FUNCTIONS:
            raise ParamsError(
                f, f"{where}.agg_fun1", f"{agg_fun!r} should be one of {AGG_FUNCTIONS}"
            )
        agg_name = _get(entry, "agg_name1", str, f, where)
        _check_label(agg_name, f, f"{where}.agg_name1")
        families.append(
            Family(
                value_name=value_name,
                values=values,
                row_codes=sides["row"][0],
                row_samples=sides["row"][1],
                col_codes=sides["col"][0],
                col_samples=sides["col"][1],
                agg_name=agg_name,
                agg_fun=agg_fun,
            )
        )
    if not families:
        raise ParamsError(f, "tables", "should list at least one family")
    return replica, lists, tuple(families)


def _read_questions(raw: Any) -> dict[str, QuestionTemplates]:
    f = QUESTIONS_FILE
    if not isinstance(raw, list):
        raise ParamsError(f, "", "should be a JSON list, one object per family")
    out: dict[str, QuestionTemplates] = {}
    for i, entry in enumerate(raw):
        where = f"[{i}]"
        name = _get(entry, "tableName", str, f, where)
        where = f"[{i}] ({name})"
        meaning = _strings(_get(entry, "valueMeaning", list, f, where), f, f"{where}.valueMeaning")
        nested_raw = _get(entry, "simplifyNested", list, f, where)
        nested = tuple(
            _strings(g, f, f"{where}.simplifyNested[{j}]") for j, g in enumerate(nested_raw)
        )
        report = _strings(
            _get(entry, "template_report", list, f, where), f, f"{where}.template_report"
        )
        if "$REPORTATTR" not in report[0]:
            raise ParamsError(f, f"{where}.template_report", "should contain $REPORTATTR")
        patterns: dict[int, tuple[str, ...]] = {}
        for n in QUESTION_TEMPLATES:
            key = f"template_{n}"
            variants = _strings(_get(entry, key, list, f, where), f, f"{where}.{key}")
            for variant in variants:
                words = variant.split()
                if not words or words[-1] != "?":
                    raise ParamsError(f, f"{where}.{key}", "a pattern should end with ' ?'")
                if words[0].startswith("$"):
                    raise ParamsError(f, f"{where}.{key}", "a pattern should not start with $")
            patterns[n] = variants
        out[name] = QuestionTemplates(
            table_name=name,
            value_meaning=meaning[0],
            simplify_nested=nested,
            report=report[0],
            patterns=patterns,
        )
    return out


def read_params(folder: str | Path) -> Params:
    """Read and check the three parameter files in ``folder``."""
    folder = Path(folder)
    raw = {name: _load(folder, name) for name in PARAM_FILES}
    codes, shortcuts = _read_semantics(raw[SEMANTICS_FILE])
    replica, lists, families = _read_tables(raw[TABLES_FILE], codes, shortcuts)
    questions = _read_questions(raw[QUESTIONS_FILE])
    return Params(
        codes=codes,
        replica=replica,
        shuffle=lists["shuffle"],
        col_row_levels=lists["col_row_levels"],
        col_row_name_pos=lists["col_row_name_pos"],
        col_row_agg_pos=lists["col_row_agg_pos"],
        row_format=lists["row_format"],
        families=families,
        questions=questions,
    )


def check_family_templates(params: Params, family: Family) -> QuestionTemplates:
    """The question templates of ``family``; an error names what is missing or unknown."""
    templates = params.questions.get(family.value_name)
    if templates is None:
        raise ParamsError(
            QUESTIONS_FILE,
            "tableName",
            f"no question templates for the family {family.value_name!r}",
        )
    known = {
        sql_name(n) for c in family.row_codes + family.col_codes for n in params.codes[c].names
    }
    keywords = {"EXPR", "GROUPBY", "TOPK", "ORDERBYDESC", "OPATTR", "OPANDVAL", "REPORTATTR"}
    for n, variants in templates.patterns.items():
        for variant in variants:
            for token in re.findall(r"\$([A-Za-z0-9_]+)", variant):
                # `$Name_word` attaches words with '_': the name is the longest known prefix.
                if token in keywords or any(
                    token == k or token.startswith(k + "_") for k in known | keywords
                ):
                    continue
                raise ParamsError(
                    QUESTIONS_FILE,
                    f"{family.value_name}.template_{n}",
                    f"${token} is not an attribute of the family"
                    f" (known: {', '.join(sorted(known))})",
                )
    for group in templates.simplify_nested:
        for name in group:
            if sql_name(name) not in known:
                raise ParamsError(
                    QUESTIONS_FILE,
                    f"{family.value_name}.simplifyNested",
                    f"{name!r} is not an attribute of the family",
                )
    return templates
