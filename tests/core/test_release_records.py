from __future__ import annotations

import gzip
import io
import json
import tarfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hctqa.core.prompts import (
    SYSTEM_PROMPT,
    PromptTable,
    prompt_messages,
    table_prompt_records,
)
from hctqa.core.release_records import (
    PROMPT_FORMATS,
    TAR_END,
    QuestionRow,
    RecordError,
    TableRow,
    chat_text,
    render_chunk,
)

TEST_TABLE = TableRow(
    id="synthetic--students--1",
    source="synthetic",
    split="test",
    canonical_csv="Region,Male,Female\nNorth,10,12\nSouth,20,22\n",
    table_properties={"multi_level_column": False},
    collection="Number_of_students",
    relational_csv="Region,Gender,N\nregion,gender,n\nNorth,Male,SECRETROWS\n",
    stem="synthetic--students--1",
)
TRAIN_TABLE = TableRow(
    id="psa--1--2",
    source="psa",
    split="train",
    canonical_csv="Year,2019,__\n__,Male,Female\nDoha,1,2\n",
    table_properties={"multi_level_column": True},
    stem="psa--1--2",
)
HIDDEN = QuestionRow(
    "synthetic--students--1--q1",
    "How many in the North?",
    "{SECRET-10}",
    "synthetic",
    3,
    "SELECT SECRETSQL",
    {},
)
OPEN = QuestionRow(
    "psa--1--2--M1", "How many men in Doha?", "{1} || {2}", "human", None, "", {"row_filter": True}
)


@pytest.fixture(scope="module")
def chunk() -> dict:
    return render_chunk([(TEST_TABLE, [HIDDEN]), (TRAIN_TABLE, [OPEN])], archive_mtime=0)


def lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines()]


def test_the_public_edition_withholds_test_gold_sql_and_relational_tables(chunk: dict) -> None:
    public = b"".join(v for (edition, _), v in chunk.items() if edition == "public")
    for member in (v for (e, p), v in chunk.items() if e == "public" and p.endswith(".gz")):
        public += gzip.decompress(member)
    for secret in (b"SECRET-10", b"SECRETSQL", b"SECRETROWS"):
        assert secret not in public
    (record,) = lines(chunk[("public", "hf/data/test.jsonl")])
    assert record["question"] == "How many in the North?" and record["answer"] == ""
    (full,) = lines(chunk[("full", "hf/data/test.jsonl")])
    assert full["answer"] == "{SECRET-10}" and full["sql"] == "SELECT SECRETSQL"
    assert ("public", "hf/data/train.jsonl") not in chunk  # shared with the full edition


def test_prompt_lines_are_those_export_prompts_writes(chunk: dict) -> None:
    for table_format in PROMPT_FORMATS:
        got = gzip.decompress(chunk[("full", f"prompts/{table_format}.jsonl.gz")]).decode()
        expected = "".join(
            json.dumps(r.as_json()) + "\n"
            for t, q in ((TEST_TABLE, HIDDEN), (TRAIN_TABLE, OPEN))
            for r in table_prompt_records(
                table_id=t.id,
                table=PromptTable(t.canonical_csv, source=t.source),
                questions=[(q.id, q.text)],
                table_format=table_format,
            )
        )
        assert got == expected, table_format


def test_alpaca_records_are_real_only_or_both_and_public_test_has_no_output(chunk: dict) -> None:
    train = json.loads(
        "[" + chunk[("full", "alpaca/hctqa_real_only_train.json")].decode()[2:] + "]"
    )
    assert [r["output"] for r in train] == ["1 || 2"]
    assert train[0]["instruction"].endswith(
        "Question: \n`How many men in Doha?`\n# OUTPUT: \n`Answer:"
    )
    assert ("full", "alpaca/hctqa_real_only_test.json") not in chunk  # synthetic: not real
    public = json.loads(
        "[" + chunk[("public", "alpaca/hctqa_real_and_synthetic_test.json")].decode()[2:] + "]"
    )
    assert [r["output"] for r in public] == [""]


def test_the_archive_holds_csv_html_and_relational_tables(chunk: dict) -> None:
    def names(edition: str) -> list[str]:
        data = gzip.decompress(chunk[(edition, "tables.tar.gz")]) + TAR_END
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            return archive.getnames()

    assert "tables/relational/synthetic--students--1.csv" in names("full")
    assert "tables/relational/synthetic--students--1.csv" not in names("public")
    assert "tables/html/psa--1--2.html" in names("public")
    assert "tables/csv/psa--1--2.csv" in names("public")


def test_a_table_that_cannot_be_read_is_named() -> None:
    broken = TableRow("psa--9--9", "psa", "train", "a,b\x00\n", {})
    with pytest.raises(RecordError, match="psa--9--9"):
        render_chunk([(broken, [OPEN])], archive_mtime=0)


def test_question_records_carry_the_columns_the_benchmarks_scripts_read(chunk: dict) -> None:
    """``dataset_type`` to filter on; ``prompt`` and ``prompt_without_system`` that ``eval``
    turns into the paper prompt's messages (with and without the system message)."""
    for edition in ("full", "public"):
        (hidden,) = lines(chunk[(edition, "hf/data/test.jsonl")])
        assert hidden["dataset_type"] == "syntheticHCTs"
    (open_record,) = lines(chunk[("full", "hf/data/train.jsonl")])
    assert open_record["dataset_type"] == "realWorldHCTs" and open_record["answer"] == "{1} || {2}"
    paper = prompt_messages(
        question=OPEN.text, table=PromptTable(TRAIN_TABLE.canonical_csv), table_format="paper"
    )
    assert eval(open_record["prompt"]) == paper  # noqa: S307 - what the benchmark's scripts do
    assert json.loads(open_record["prompt"]) == paper
    (folded,) = eval(open_record["prompt_without_system"])  # noqa: S307
    assert folded == {"role": "user", "content": SYSTEM_PROMPT + "\n\n" + paper[1]["content"]}
    # The public test record keeps its prompt; only the answer is withheld.
    (public,) = lines(chunk[("public", "hf/data/test.jsonl")])
    (full,) = lines(chunk[("full", "hf/data/test.jsonl")])
    assert public["prompt"] == full["prompt"] and public["answer"] == ""


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@given(st.lists(st.tuples(st.sampled_from(["system", "user"]), _TEXT), min_size=1, max_size=3))
def test_chat_text_reads_back_the_same_with_eval_and_json(turns: list) -> None:
    """Quotes, backslashes, control characters, line separators and characters beyond the
    BMP all come back as they were, whichever way the column is read."""
    messages = [{"role": role, "content": content} for role, content in turns]
    text = chat_text(messages)
    assert eval(text) == messages  # noqa: S307 - the benchmark's scripts read it so
    assert json.loads(text) == messages


def test_demo_tables_are_never_released() -> None:
    demo = TableRow("synthetic--demo-students", "demo", "train", "a,b\n1,2\n", {})
    with pytest.raises(RecordError, match="demo tables are never released"):
        render_chunk([(TRAIN_TABLE, [OPEN]), (demo, [])], archive_mtime=0)


def test_a_tables_title_and_notes_are_in_its_records_and_never_in_a_prompt(chunk: dict) -> None:
    from dataclasses import replace

    titled = replace(
        TRAIN_TABLE,
        title="Table 3. Population by sex: 2020 In thousands",
        notes="Source: Planning Council.",
    )
    got = render_chunk([(TEST_TABLE, [HIDDEN]), (titled, [OPEN])], archive_mtime=0)
    (question,) = lines(got[("full", "hf/data/train.jsonl")])
    (table,) = lines(got[("full", "hf/tables/train.jsonl")])
    for record in (question, table):
        assert record["table_title"] == "Table 3. Population by sex: 2020 In thousands"
        assert record["table_notes"] == "Source: Planning Council."
    (untitled,) = lines(chunk[("full", "hf/data/train.jsonl")])
    assert (untitled["table_title"], untitled["table_notes"]) == ("", "")
    # The prompts stay the paper's byte for byte: every prompt and alpaca file is unchanged.
    assert question["prompt"] == untitled["prompt"]
    for key in chunk:
        if key[1].startswith(("prompts/", "alpaca/")):
            assert got[key] == chunk[key], key
