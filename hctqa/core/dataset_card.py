"""The Hugging Face form of a release: record fields, their features, and the dataset card.

A release's Hugging Face folder holds two configurations:

- ``default``: one record per question, ``data/<split>.jsonl`` (and Parquet copies), each
  carrying its table, so a record is all a model needs;
- ``tables``: one record per table, ``tables/<split>.jsonl``, including tables without
  questions.

The card's YAML header (``configs`` and ``dataset_info``) is what ``datasets.load_dataset``
reads: which files make which split, and each field's type. Table and query properties are
structs with one field per taxonomy property: a flag is a bool, a count an int32, and a
property nobody labelled is null.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from hctqa.core import taxonomy
from hctqa.core.wording import counted

LICENCE = "mit"  # the HCT-QA benchmark's licence
DEFAULT_CONFIG = "default"
TABLES_CONFIG = "tables"


@dataclass(frozen=True)
class Feature:
    """A field and its ``datasets`` type: ``dtype`` for a value, ``fields`` for a struct."""

    name: str
    dtype: str = "string"
    fields: tuple[Feature, ...] = ()
    description: str = ""

    def as_yaml(self) -> dict[str, Any]:
        if self.fields:
            return {"name": self.name, "struct": [f.as_yaml() for f in self.fields]}
        return {"name": self.name, "dtype": self.dtype}


def _property_struct(name: str, tax: taxonomy.Taxonomy, description: str) -> Feature:
    fields = tuple(Feature(p.code, "bool" if p.kind == "flag" else "int32") for p in tax.properties)
    return Feature(name, fields=fields, description=description)


_TABLE_FIELDS = (
    Feature("table_id", description="The table's id, e.g. `psa--4--1`."),
    Feature(
        "source",
        description="Where the table comes from: its collection's code (`psa` for QNPC, `pak`, "
        "`census`, `arxiv`, or a collection ingested since) or `synthetic`. Per-source figures "
        "group by it.",
    ),
    Feature(
        "collection",
        description="The synthetic family for synthetic tables (e.g. `Number_of_students`), "
        "otherwise the source.",
    ),
    Feature("split", description="`train`, `validation` or `test`; a table's questions share it."),
)
_TABLE_BODY = (
    Feature(
        "table",
        description="The canonical CSV: `__` marks a cell merged into its left or upper "
        "neighbour; a row-group label is a row with only its first cell filled.",
    ),
    Feature(
        "table_title",
        description="The table's caption and units line, as printed above it; empty when it "
        "has none. Not part of the prompt.",
    ),
    Feature(
        "table_notes",
        description="The footnotes and source lines printed below the table; empty when it "
        "has none. Not part of the prompt.",
    ),
    _property_struct(
        "table_properties",
        taxonomy.TABLE_PROPERTIES,
        "The table-property taxonomy: one field per property.",
    ),
    Feature("image", description="`images/<file>` when the table has a source image, else empty."),
)

QUESTION_FEATURES: tuple[Feature, ...] = (
    Feature(
        "question_id",
        description="The question's id: `--M<k>` human-written, "
        "`--A<k>` model-generated and verified, synthetic ids name their template set.",
    ),
    *_TABLE_FIELDS,
    Feature(
        "dataset_type",
        description="`realWorldHCTs` or `syntheticHCTs`, as the benchmark's scripts filter them.",
    ),
    Feature(
        "origin",
        description="`human`, `model` (generated, then verified by two people) or "
        "`synthetic` (from a generator template).",
    ),
    Feature("template_number", "int32", description="The synthetic template, else null."),
    Feature("question", description="The question."),
    Feature(
        "answer",
        description="The gold answer: values of a row in `{}` separated by ` | `, rows "
        "separated by ` || `, or a bare `Yes`/`No`. Empty where withheld.",
    ),
    Feature(
        "prompt",
        description="The paper's zero-shot chat prompt (the table as pandas' text rendering), "
        'as text: `[{"role": "system", …}, {"role": "user", …}]` in JSON, which `json.loads` '
        "and the benchmark scripts' `eval` both read.",
    ),
    Feature(
        "prompt_without_system",
        description="The same prompt for models without a system role: one user message that "
        "starts with the system text and a blank line.",
    ),
    Feature(
        "sql",
        description="The SQL behind a synthetic question, which computes its answer from the "
        "relational table. Empty otherwise, or where withheld.",
    ),
    _property_struct(
        "query_properties",
        taxonomy.QUERY_PROPERTIES,
        "The query-property taxonomy (labelled on human-written questions; null elsewhere).",
    ),
    *_TABLE_BODY,
)

TABLE_FEATURES: tuple[Feature, ...] = (
    *_TABLE_FIELDS,
    *_TABLE_BODY,
    Feature(
        "relational_table",
        description="For a synthetic table, the generator's relational table (CSV; line 1 "
        "display names, line 2 SQL names). Empty otherwise, or where withheld.",
    ),
    Feature("questions", "int32", description="How many of the release's questions it has."),
)


def properties_record(tax: taxonomy.Taxonomy, values: Mapping[str, Any]) -> dict[str, Any]:
    """Every property of ``tax``, in order: a flag as a bool, a count as an int, and null
    where the stored set does not say."""
    out: dict[str, Any] = {}
    for code, is_flag in _kinds(tax):
        value = values.get(code)
        if value is None:
            out[code] = None
        elif is_flag:
            out[code] = bool(value)
        else:
            out[code] = value if type(value) is int else None
    return out


_KINDS: dict[int, tuple[tuple[str, bool], ...]] = {}


def _kinds(tax: taxonomy.Taxonomy) -> tuple[tuple[str, bool], ...]:
    kinds = _KINDS.get(id(tax))
    if kinds is None:
        kinds = _KINDS[id(tax)] = tuple((p.code, p.kind == "flag") for p in tax.properties)
    return kinds


@dataclass(frozen=True)
class SplitFile:
    split: str
    path: str  # relative to the folder
    examples: int
    size: int


@dataclass(frozen=True)
class CardFacts:
    version: str
    title: str
    notes: str
    edition: str  # "public" or "full"
    created: str  # ISO date
    commit: str
    counts: Mapping[str, Any]
    question_files: tuple[SplitFile, ...]
    table_files: tuple[SplitFile, ...]
    changes: Mapping[str, int] | None  # changelog counts; None for the first release
    previous: str | None


def _config(name: str, files: Iterable[SplitFile], *, default: bool = False) -> dict[str, Any]:
    config: dict[str, Any] = {"config_name": name}
    if default:
        config["default"] = True
    config["data_files"] = [{"split": f.split, "path": f.path} for f in files]
    return config


def _info(name: str, features: Iterable[Feature], files: Iterable[SplitFile]) -> dict[str, Any]:
    return {
        "config_name": name,
        "features": [f.as_yaml() for f in features],
        "splits": [
            {"name": f.split, "num_bytes": f.size, "num_examples": f.examples} for f in files
        ],
    }


def card_header(facts: CardFacts) -> dict[str, Any]:
    """The YAML header as data: licence, names, configurations and features."""
    return {
        "license": LICENCE,
        "language": ["en"],
        "pretty_name": f"HCT-QA {facts.version} ({facts.edition} edition)",
        "task_categories": ["table-question-answering"],
        "tags": ["tables", "human-centric-tables", "benchmark"],
        "configs": [
            _config(DEFAULT_CONFIG, facts.question_files, default=True),
            _config(TABLES_CONFIG, facts.table_files),
        ],
        "dataset_info": [
            _info(DEFAULT_CONFIG, QUESTION_FEATURES, facts.question_files),
            _info(TABLES_CONFIG, TABLE_FEATURES, facts.table_files),
        ],
    }


def _count_line(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key} {value:,}" for key, value in counts.items()) or "none"


def _field_rows(features: Iterable[Feature]) -> str:
    return "".join(f"| `{f.name}` | {f.description} |\n" for f in features)


def markdown_text(text: str, *, one_line: bool = False) -> str:
    """An admin's text as Markdown with HTML escaped: a tag shows as the text it is, on the
    Hub and in any viewer of the card, and runs nowhere. ``one_line`` folds line breaks (a
    heading), so the text cannot start a block of its own."""
    if one_line:
        text = " ".join(text.split())
    return html.escape(text.strip(), quote=False)


def dataset_card(facts: CardFacts) -> str:
    """The README.md of the Hugging Face folder: the YAML header, then a short description."""
    header = yaml.safe_dump(card_header(facts), sort_keys=False, allow_unicode=True, width=1000)
    counts = facts.counts
    if facts.edition == "public":
        edition = (
            "This is the **public edition**: the test split's questions are here with an empty "
            "`answer` (and `sql`), so models can be run on them and scored on the platform's "
            "leaderboard. The full edition, with every gold answer, is for the platform's admins."
        )
    else:
        edition = (
            "This is the **full edition**: every gold answer, the test split's included. Keep it "
            "private; the public edition withholds the test split's answers."
        )
    splits = "".join(f"| {f.split} | {f.examples:,} |\n" for f in facts.question_files)
    if facts.changes is None:
        changes = "This is the first release."
    else:
        changes = (
            f"Since {facts.previous}: "
            + ", ".join(
                f"{value:,} {key.replace('_', ' ')}" for key, value in facts.changes.items()
            )
            + " (ids in `changelog.json` beside this folder)."
        )
    notes = f"\n## Notes\n\n{markdown_text(facts.notes)}\n" if facts.notes.strip() else ""
    return (
        f"---\n{header}---\n\n"
        f"# HCT-QA {facts.version}: {markdown_text(facts.title, one_line=True)}\n\n"
        "Question answering on human-centric tables (HCTs): the dense tables of PDFs and reports, "
        "with nested column headers, nested rows, row-group labels and aggregate rows and "
        "columns.\n\n"
        f"{edition}\n\n"
        f"Cut on {facts.created} from the HCT-QA platform at commit `{facts.commit}`. "
        "A release never changes; `SHA256SUMS` beside this folder lists every file's SHA-256.\n\n"
        f"**{counted(counts['questions'], 'question')} on "
        f"{counted(counts['tables'], 'table')}.**\n\n"
        "| split | questions |\n|---|---:|\n"
        f"{splits}\n"
        f"- Questions by source: {_count_line(counts['questions_by_source'])}\n"
        f"- Questions by origin: {_count_line(counts['questions_by_origin'])}\n"
        f"- Tables by source: {_count_line(counts['tables_by_source'])}\n"
        f"- Tables by split: {_count_line(counts['tables_by_split'])}\n\n"
        f"{changes}\n\n"
        "## Loading\n\n"
        "```python\n"
        "from datasets import load_dataset\n\n"
        'questions = load_dataset("path/to/this/folder")  # train, validation, test\n'
        'real = questions["test"].filter(lambda r: r["dataset_type"] == "realWorldHCTs")\n'
        'tables = load_dataset("path/to/this/folder", "tables")\n'
        "```\n\n"
        "Where this folder was published to the Hugging Face Hub, its repository's name takes "
        'the path\'s place, with the version as the revision: `load_dataset("ORG/NAME", '
        f'revision="{facts.version}")`. The benchmark\'s own scripts (`llm_inf.py` and '
        "`create_hctqa_in_alpacaJson.py` in qcri/HCTQA-Benchmark) read `question_id`, "
        "`dataset_type`, `prompt`, `prompt_without_system` and `answer`, and run on this folder "
        "with `qcri-ai/HCTQA` replaced by its path.\n\n"
        "`data/` also holds each split as Parquet.\n\n"
        "## Question fields\n\n| field | meaning |\n|---|---|\n"
        f"{_field_rows(QUESTION_FEATURES)}\n"
        "## Table fields (`tables`)\n\n| field | meaning |\n|---|---|\n"
        f"{_field_rows(TABLE_FEATURES)}\n"
        "The tables are the benchmark's data as extracted, byte for byte: in the tables' CSV "
        "(here and in `tables.tar.gz`) a cell may start with `=`, `+`, `-` or `@`, which a "
        "spreadsheet would run as a formula. Read them with a CSV library, or import them as "
        "text.\n"
        f"{notes}\n"
        "## Licence\n\nMIT, as the HCT-QA benchmark.\n"
    )
