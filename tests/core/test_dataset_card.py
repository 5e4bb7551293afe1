from __future__ import annotations

import yaml

from hctqa.core import taxonomy
from hctqa.core.dataset_card import (
    QUESTION_FEATURES,
    TABLE_FEATURES,
    CardFacts,
    SplitFile,
    dataset_card,
    properties_record,
)
from hctqa.core.release_records import QuestionRow, TableRow, question_record, table_record

COUNTS = {
    "tables": 3,
    "questions": 5,
    "tables_by_source": {"psa": 3},
    "tables_by_split": {"test": 1, "train": 2},
    "questions_by_source": {"psa": 5},
    "questions_by_split": {"test": 1, "train": 4},
    "questions_by_origin": {"human": 5},
    "questions_by_source_and_split": {"psa": {"test": 1, "train": 4}},
}


def facts(edition: str = "public", notes: str = "") -> CardFacts:
    return CardFacts(
        version="2026.11",
        title="November: first cut",
        notes=notes,
        edition=edition,
        created="2026-11-23",
        commit="abc123",
        counts=COUNTS,
        question_files=(
            SplitFile("train", "data/train.jsonl", 4, 400),
            SplitFile("test", "data/test.jsonl", 1, 100),
        ),
        table_files=(
            SplitFile("train", "tables/train.jsonl", 2, 200),
            SplitFile("test", "tables/test.jsonl", 1, 100),
        ),
        changes=None,
        previous=None,
    )


def header(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card[4 : card.index("\n---\n", 4)])


def test_the_header_names_configs_splits_features_and_licence() -> None:
    meta = header(dataset_card(facts()))
    assert meta["license"] == "mit"
    default, tables = meta["configs"]
    assert default["config_name"] == "default" and default["default"] is True
    assert default["data_files"] == [
        {"split": "train", "path": "data/train.jsonl"},
        {"split": "test", "path": "data/test.jsonl"},
    ]
    assert tables["config_name"] == "tables"
    info = {c["config_name"]: c for c in meta["dataset_info"]}
    assert [f["name"] for f in info["default"]["features"]] == [f.name for f in QUESTION_FEATURES]
    assert info["default"]["splits"][0] == {"name": "train", "num_bytes": 400, "num_examples": 4}
    query = next(f for f in info["default"]["features"] if f["name"] == "query_properties")
    assert [f["name"] for f in query["struct"]] == list(taxonomy.QUERY_PROPERTIES.empty())


def test_the_description_says_which_edition_and_gives_the_counts() -> None:
    public = dataset_card(facts("public", notes="Adds the QNPC 2024 tables."))
    assert "public edition" in public and "empty" in public
    assert "5 questions on 3 tables" in public and "Adds the QNPC 2024 tables." in public
    assert "full edition" in dataset_card(facts("full"))
    # The tables are raw data: readers are told that a cell may look like a formula.
    assert "may start with `=`, `+`, `-` or `@`" in public


def test_a_title_cannot_break_the_header() -> None:
    card = dataset_card(facts())
    tricky = CardFacts(**{**facts().__dict__, "title": 'x"\n---\nlicense: none'})
    assert header(dataset_card(tricky))["license"] == "mit"
    assert header(card)["pretty_name"] == "HCT-QA 2026.11 (public edition)"


def test_the_title_and_notes_are_text_with_html_escaped() -> None:
    # Issue 32, item 3: the admin's title and notes went into README.md as raw HTML, which
    # the Hub and any Markdown viewer would render.
    notes = 'See <a href="javascript:alert(1)">here</a>.\n\n<script>alert(2)</script> & more'
    tricky = CardFacts(
        **{**facts(notes=notes).__dict__, "title": "Nov <img src=x onerror=alert(3)>\n# Hi"}
    )
    card = dataset_card(tricky).split("---\n", 2)[2]
    assert "<script" not in card and "<img" not in card and "<a " not in card
    assert "&lt;script&gt;alert(2)&lt;/script&gt; &amp; more" in card
    assert 'See &lt;a href="javascript:alert(1)"&gt;here&lt;/a&gt;.' in card
    # The title stays one heading line: its line break cannot start a heading of its own.
    assert "# HCT-QA 2026.11: Nov &lt;img src=x onerror=alert(3)&gt; # Hi\n" in card


def test_records_have_exactly_the_declared_fields() -> None:
    t = TableRow("psa--1--1", "psa", "train", "a,b\n1,2\n", {})
    q = QuestionRow("psa--1--1--M1", "Q?", "{1}", "human", None, "", {})
    props = properties_record(taxonomy.TABLE_PROPERTIES, {})
    prompt = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    record = question_record(q, t, props, prompt, withheld=False)
    assert list(record) == [f.name for f in QUESTION_FEATURES]
    assert list(table_record(t, props, 1, withheld=False)) == [f.name for f in TABLE_FEATURES]


def test_properties_are_typed_and_unlabelled_ones_are_null() -> None:
    record = properties_record(
        taxonomy.QUERY_PROPERTIES,
        {"row_filter": True, "row_filter_max_depth": 2, "rank_top": True, "unknown": 1},
    )
    assert list(record) == list(taxonomy.QUERY_PROPERTIES.empty())
    assert record["row_filter"] is True and record["row_filter_max_depth"] == 2
    assert record["rank_top"] is None  # a count given as a flag is not a count
    assert record["yes_no"] is None
