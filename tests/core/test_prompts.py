from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from hctqa.core.images import render_table_png
from hctqa.core.prompts import (
    INSTRUCTION,
    PROMPT_STYLES,
    SYSTEM_PROMPT,
    SYSTEM_SEPARATOR,
    TABLE_FORMATS,
    PromptError,
    PromptTable,
    WorkedExample,
    denonsense,
    nonsense_for,
    nonsense_mapping,
    prompt_messages,
    prompt_sha256,
    table_text,
)
from hctqa.core.render import to_latex
from hctqa.core.tables import canonical_from_html, parse_table

NESTED = (
    "Sector,Job,2019,__,Total\n"
    "__,__,Male,Female,__\n"
    "Public,Clerk,1,2,3\n"
    "__,Manager,4,5,9\n"
    "Private,Clerk,6,7,13\n"
)
GROUPED = "District,Male,Female\nNorth,__,__\nAl Khor,1,2\nSouth,__,__\nAl Wakra,3,4\n"
QUESTION = "How many Female clerks are in the Public sector in 2019?"
TABLE = PromptTable(canonical_csv=NESTED)

# --- The release ---------------------------------------------------------------------------

_RELEASED_QUESTION = re.compile(r"Question: \n`(.*)`\n# OUTPUT: \n`Answer:\Z", re.S)

# Where qaps.json's question text and prompts.jsonl's differ by more than whitespace: the
# prompt file has the better text in each case. Found by comparing the two files.
RELEASE_TEXT_DEFECTS = {
    "psa--2--888--A0": "qaps.json has U+FFFD where the prompt has the degree sign",
    "psa--11--984--A3": "qaps.json has U+FFFD where the prompt has the micro sign",
    "psa--4--975--A3": "qaps.json holds '{49.4' instead of the question",
    "census--3--399--M0": "qaps.json ends the question with '?', the prompt does not",
}
# Differences of whitespace inside the question, not only at its end.
INNER_WHITESPACE = {"psa--2--93--M0", "arxiv--15--7056--M1", "census--1--2551--M0"}


def released_prompts(data_dir: Path) -> Iterator[dict]:
    with gzip.open(data_dir / "hctqa-real" / "prompts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def released_question(record: dict) -> str:
    match = _RELEASED_QUESTION.search(record["prompt"][1]["content"])
    assert match, record["qa_id"]
    return match.group(1)


def trailing_normalized(text: str) -> str:
    """The question with its line endings made LF and its trailing whitespace dropped."""
    return text.replace("\r\n", "\n").rstrip()


def whitespace_normalized(text: str) -> str:
    return " ".join(text.split())


def compare_with_release(prompt: list[dict], ours: str, record: dict) -> str:
    """How a prompt built from our question text matches the released one.

    "exact": byte for byte. "trailing" or "whitespace": the released question and ours differ
    only in trailing whitespace and line endings, or in whitespace anywhere; the prompts are
    then equal once both questions are so normalized. "defect": the texts differ in more than
    whitespace. Any other difference fails the assertion here.
    """
    if prompt == record["prompt"]:
        return "exact"
    theirs = released_question(record)
    # Whatever the question, everything around it must be the released bytes.
    assert record["prompt"][1]["content"].replace(theirs, "\x00") == prompt[-1]["content"].replace(
        ours, "\x00"
    ), record["qa_id"]
    for kind, normalize in (
        ("trailing", trailing_normalized),
        ("whitespace", whitespace_normalized),
    ):
        if normalize(ours) == normalize(theirs):
            return kind
    return "defect"


# --- The paper format ----------------------------------------------------------------------


def test_paper_prompts_are_the_released_prompts_byte_for_byte(
    data_dir: Path, release_by_id: dict
) -> None:
    """Given the released question text, every one of the 9,835 prompts is reproduced."""
    count = 0
    for record in released_prompts(data_dir):
        table = release_by_id[record["table_id"]]
        messages = prompt_messages(
            question=released_question(record),
            table=PromptTable(table.canonical_csv, source=table.source),
            table_format="paper",
        )
        assert messages == record["prompt"], record["qa_id"]
        assert json.dumps(messages) == json.dumps(record["prompt"]), record["qa_id"]
        count += 1
    assert count == 9835


def test_paper_prompts_from_the_release_questions_differ_only_in_559_question_texts(
    data_dir: Path, release_by_id: dict
) -> None:
    questions = {q.id: q for t in release_by_id.values() for q in t.questions}
    kinds: dict[str, list[str]] = {"exact": [], "trailing": [], "whitespace": [], "defect": []}
    for record in released_prompts(data_dir):
        table = release_by_id[record["table_id"]]
        ours = questions[record["qa_id"]].text
        prompt = prompt_messages(
            question=ours,
            table=PromptTable(table.canonical_csv, source=table.source),
            table_format="paper",
        )
        kinds[compare_with_release(prompt, ours, record)].append(record["qa_id"])
    assert len(kinds["exact"]) == 9835 - 559
    assert len(kinds["trailing"]) + len(kinds["whitespace"]) + len(kinds["defect"]) == 559
    assert len(kinds["trailing"]) == 552
    assert set(kinds["whitespace"]) == INNER_WHITESPACE
    assert set(kinds["defect"]) == set(RELEASE_TEXT_DEFECTS)


def test_the_released_census_prompts_start_with_a_heading_mark() -> None:
    census = PromptTable(NESTED, source="census")
    paper = prompt_messages(question=QUESTION, table=census, table_format="paper")
    assert paper[1]["content"].startswith("# " + INSTRUCTION + "\n # INPUTS: \nTable: \n`")
    psa = prompt_messages(question=QUESTION, table=TABLE, table_format="paper")
    assert psa[1]["content"].startswith(INSTRUCTION + "\n # INPUTS: ")
    # The quirk belongs to the release; other formats never copy it.
    csv_prompt = prompt_messages(question=QUESTION, table=census, table_format="csv")
    assert csv_prompt[1]["content"].startswith(INSTRUCTION)


def test_the_paper_prompt_has_the_released_shape() -> None:
    messages = prompt_messages(question=QUESTION, table=TABLE, table_format="paper")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM_PROMPT
    assert messages[1]["content"].endswith(f"Question: \n`{QUESTION}`\n# OUTPUT: \n`Answer:")
    assert "0   Sector      Job  2019      __  Total\n" in messages[1]["content"]


# --- System role ---------------------------------------------------------------------------


@pytest.mark.parametrize("table_format", TABLE_FORMATS)
def test_without_a_system_role_the_system_text_starts_the_user_message(
    table_format: str,
) -> None:
    with_role = prompt_messages(question=QUESTION, table=TABLE, table_format=table_format)
    folded = prompt_messages(
        question=QUESTION, table=TABLE, table_format=table_format, system_role=False
    )
    assert [m["role"] for m in folded] == ["user"]
    user = with_role[1]["content"]
    if table_format == "image":
        assert folded[0]["content"][0]["text"] == SYSTEM_PROMPT + "\n\n" + user[0]["text"]
        assert folded[0]["content"][1] == user[1]
    else:
        assert folded[0]["content"] == SYSTEM_PROMPT + SYSTEM_SEPARATOR + user
    assert SYSTEM_SEPARATOR == "\n\n"


# --- Formats -------------------------------------------------------------------------------


def _table_of(messages: list[dict]) -> str:
    match = re.search(r"Table: \n`(.*)` \n\nQuestion:", messages[-1]["content"], re.S)
    assert match
    return match.group(1)


def test_csv_blanks_the_merge_markers_and_is_valid_csv() -> None:
    text = _table_of(prompt_messages(question=QUESTION, table=TABLE, table_format="csv"))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Sector", "Job", "2019", "", "Total"]
    assert rows[3] == ["", "Manager", "4", "5", "9"]
    assert {len(r) for r in rows} == {5}


def test_html_keeps_the_merged_cells_and_reads_back_to_the_same_table() -> None:
    text = _table_of(prompt_messages(question=QUESTION, table=TABLE, table_format="html"))
    assert '<th scope="colgroup" colspan="2">2019</th>' in text
    assert '<th scope="rowgroup" rowspan="2">Public</th>' in text
    # Prompts carry no page markup.
    assert "data-row" not in text and "class=" not in text
    assert canonical_from_html(text) == NESTED


def test_markdown_is_a_pipe_table_with_one_cell_count() -> None:
    text = _table_of(prompt_messages(question=QUESTION, table=TABLE, table_format="markdown"))
    lines = text.strip().splitlines()
    assert lines[0] == "| Sector | Job | 2019 - Male | 2019 - Female | Total |"
    assert lines[1] == "|---|---|---|---|---|"
    assert {line.count("|") for line in lines} == {6}


def test_json_is_one_record_per_body_row() -> None:
    text = _table_of(prompt_messages(question=QUESTION, table=TABLE, table_format="json"))
    records = json.loads(text)
    assert len(records) == 3
    assert records[1] == {
        "Sector": "Public",
        "Job": "Manager",
        "2019 - Male": "4",
        "2019 - Female": "5",
        "Total": "9",
    }


def latex_rows(latex: str) -> tuple[int, list[list[str]]]:
    """The column count of the tabular and its rows split into entries; fails on anything
    that would not compile: unbalanced braces, or a missing begin or end."""
    lines = latex.strip().splitlines()
    spec = re.fullmatch(r"\\begin\{tabular\}\{((?:\|?l)+)\|\}", lines[0])
    assert spec, lines[0]
    assert lines[-1] == r"\end{tabular}"
    depth = 0
    for ch in re.sub(r"\\[{}]", "", latex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    rows = []
    for line in lines[1:-1]:
        if line == r"\hline" or line.startswith(r"\cline"):
            continue
        assert line.endswith(r" \\"), line
        rows.append(re.split(r"(?<!\\) & ", line[: -len(r" \\")]))
    return spec.group(1).count("l"), rows


def _width(entries: list[str]) -> int:
    spans = [re.match(r"\\multicolumn\{(\d+)\}", e) for e in entries]
    return sum(int(s.group(1)) if s else 1 for s in spans)


def test_latex_uses_multicolumn_and_multirow_for_merged_cells() -> None:
    text = _table_of(prompt_messages(question=QUESTION, table=TABLE, table_format="latex"))
    n_cols, rows = latex_rows(text)
    assert n_cols == 5
    assert all(_width(r) == 5 for r in rows)
    assert rows[0] == [
        r"\multirow{2}{*}{Sector}",
        r"\multirow{2}{*}{Job}",
        r"\multicolumn{2}{c|}{2019}",
        r"\multirow{2}{*}{Total}",
    ]
    # Rules stop at the merged cells: under 2019 only, then beside the Public row label.
    assert r"\cline{3-4}" in text and r"\cline{2-5}" in text


def test_latex_escapes_specials_and_spans_row_group_labels() -> None:
    table = parse_table('Item,Share\nR&D #1,50%\n"a_b {c} ~x^2 $5 \\\\",1\nGroup,__\nX,2\n')
    text = to_latex(table)
    assert r"R\&D \#1 & 50\% \\" in text
    assert r"a\_b \{c\} \textasciitilde{}x\textasciicircum{}2 \$5 \textbackslash{}" in text
    assert r"\multicolumn{2}{|l|}{\textbf{Group}} \\" in text
    latex_rows(text)


def test_latex_is_well_formed_for_release_tables(release_tables: list) -> None:
    for t in release_tables[::3]:
        table = parse_table(t.canonical_csv)
        n_cols, rows = latex_rows(to_latex(table))
        assert n_cols == table.n_columns, t.id
        assert len(rows) == table.n_rows, t.id
        assert all(_width(r) == n_cols for r in rows), t.id


# --- Nonsense ------------------------------------------------------------------------------

# Tokens come from SHA-256 of the lower-cased word, so they are fixed for good.
EXPECTED_TOKENS = {
    "sector": "BPxzg",
    "job": "QKxcg",
    "male": "NKmaq",
    "female": "DWdfm",
    "public": "FFjnh",
    "clerk": "ONrrc",
    "manager": "GUibx",
    "private": "JPsvi",
}


def test_nonsense_replaces_every_table_word_with_a_fixed_token() -> None:
    question, table, _reverse = nonsense_for(QUESTION, NESTED)
    assert nonsense_mapping([NESTED]) == EXPECTED_TOKENS
    assert table.splitlines() == [
        "BPxzg,QKxcg,2019,__,Total",
        "__,__,NKmaq,DWdfm,__",
        "FFjnh,ONrrc,1,2,3",
        "__,GUibx,4,5,9",
        "JPsvi,ONrrc,6,7,13",
    ]
    # The question's words of the table get the same tokens; its own words and numbers stay.
    assert question == "How many DWdfm clerks are in the FFjnh BPxzg in 2019?"


def test_nonsense_prompt_uses_the_nonsense_table_and_question() -> None:
    messages = prompt_messages(question=QUESTION, table=TABLE, table_format="nonsensical_csv")
    text = messages[1]["content"]
    assert "BPxzg,QKxcg,2019,,Total" in text
    assert "Question: \n`How many DWdfm clerks are in the FFjnh BPxzg in 2019?`" in text
    assert not {"Sector", "Male", "Public", "Manager"} & set(re.findall(r"\w+", text))


def test_nonsense_tokens_are_the_same_in_another_process() -> None:
    code = (
        "from hctqa.core.prompts import nonsense_mapping\n"
        "import json, sys\n"
        "print(json.dumps(nonsense_mapping([sys.argv[1]]), sort_keys=True))\n"
    )
    outputs = set()
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code, NESTED],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        )
        outputs.add(out.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == EXPECTED_TOKENS


def test_denonsense_maps_an_answer_back_to_the_table_words() -> None:
    _question, _table, reverse = nonsense_for(QUESTION, NESTED)
    assert denonsense("{FFjnh | ONrrc | 2} || {fFJNH | gUiBx | 5}", reverse) == (
        "{Public | Clerk | 2} || {Public | Manager | 5}"
    )
    assert denonsense("No Answer", reverse) == "No Answer"


def test_nonsense_round_trips_on_release_tables(release_tables: list) -> None:
    for t in release_tables[::5]:
        question = t.questions[0].text
        n_question, n_table, reverse = nonsense_for(question, t.canonical_csv)
        assert denonsense(n_table, reverse).lower() == t.canonical_csv.lower(), t.id
        assert denonsense(n_question, reverse).lower() == question.lower(), t.id
        # Numbers stay, and the table keeps its shape.
        assert re.findall(r"\d+", n_table) == re.findall(r"\d+", t.canonical_csv), t.id
        ours, theirs = parse_table(n_table), parse_table(t.canonical_csv)
        assert [(c.row, c.col, c.rowspan, c.colspan, c.role) for c in ours.cells] == [
            (c.row, c.col, c.rowspan, c.colspan, c.role) for c in theirs.cells
        ], t.id


def test_nonsense_keeps_aggregate_names_and_tokens_stay_distinct() -> None:
    mapping = nonsense_mapping(["Total Average Sum male Male MALE"])
    assert mapping == {"male": nonsense_mapping(["male"])["male"]}
    words = [f"w{'x' * i}" for i in range(3000)]
    tokens = nonsense_mapping([" ".join(words)]).values()
    assert len(set(tokens)) == len(words)
    assert all(re.fullmatch(r"[A-Z]{2}[a-z]{3}", t) for t in tokens)


# --- Images --------------------------------------------------------------------------------


def _data_url_png(messages: list[dict]) -> bytes:
    parts = messages[-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    return base64.b64decode(url.split(",", 1)[1])


def test_image_prompts_draw_the_table_when_it_has_no_image() -> None:
    messages = prompt_messages(question=QUESTION, table=TABLE, table_format="image")
    png = _data_url_png(messages)
    assert png == render_table_png(NESTED)
    assert Image.open(io.BytesIO(png)).format == "PNG"
    text = messages[1]["content"][0]["text"]
    assert text.startswith(INSTRUCTION) and "Table: the image below." in text
    assert f"Question: \n`{QUESTION}`" in text and NESTED not in text


def test_image_prompts_use_the_tables_own_image() -> None:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(out, format="PNG")
    table = PromptTable(NESTED, image_png=out.getvalue())
    messages = prompt_messages(question=QUESTION, table=table, table_format="image")
    assert _data_url_png(messages) == out.getvalue()


# --- One shot ------------------------------------------------------------------------------

EXAMPLE = WorkedExample(
    question="How many people live in Al Khor?", answer="{1 | 2}", table=PromptTable(GROUPED)
)


def test_one_shot_puts_the_example_first_as_its_own_exchange() -> None:
    messages = prompt_messages(
        question=QUESTION,
        table=TABLE,
        table_format="markdown",
        prompt_style="one_shot",
        example=EXAMPLE,
    )
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "**North**" in messages[1]["content"]
    assert "Question: \n`How many people live in Al Khor?`" in messages[1]["content"]
    assert messages[2]["content"] == "{1 | 2}"
    zero = prompt_messages(question=QUESTION, table=TABLE, table_format="markdown")
    assert messages[3] == zero[1]


def test_one_shot_without_a_system_role_folds_it_into_the_example() -> None:
    messages = prompt_messages(
        question=QUESTION,
        table=TABLE,
        table_format="csv",
        prompt_style="one_shot",
        example=EXAMPLE,
        system_role=False,
    )
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"].startswith(SYSTEM_PROMPT + SYSTEM_SEPARATOR + INSTRUCTION)
    assert messages[2]["content"].startswith(INSTRUCTION)


def test_one_shot_nonsense_answers_in_the_examples_tokens() -> None:
    example = WorkedExample("Which district has 3 males?", "{Al Wakra}", PromptTable(GROUPED))
    messages = prompt_messages(
        question=QUESTION,
        table=TABLE,
        table_format="nonsensical_csv",
        prompt_style="one_shot",
        example=example,
    )
    _q, _t, reverse = nonsense_for(example.question, GROUPED)
    assert "Wakra" not in messages[2]["content"]
    assert denonsense(messages[2]["content"], reverse) == "{Al Wakra}"


# --- Errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table_format": "yaml"}, "Unknown table format 'yaml'; choose one of paper, csv"),
        ({"prompt_style": "few_shot"}, "Unknown prompt style 'few_shot'; choose one of"),
        ({"prompt_style": "one_shot"}, "A one_shot prompt needs a worked example"),
        ({"example": EXAMPLE}, "A zero_shot prompt takes no example"),
        ({"question": "  \n"}, "The question is empty"),
        ({"table": PromptTable("")}, "The table cannot be read: The CSV has no rows"),
        (
            {"table": PromptTable(NESTED, image_png=b"GIF89a"), "table_format": "image"},
            "The table's image is not a PNG",
        ),
    ],
)
def test_bad_input_is_refused_with_the_reason(kwargs: dict, message: str) -> None:
    arguments = {"question": QUESTION, "table": TABLE, "table_format": "csv", **kwargs}
    with pytest.raises(PromptError, match=re.escape(message)):
        prompt_messages(**arguments)
    assert issubclass(PromptError, ValueError)


def test_the_constants_match_the_leaderboard_choices() -> None:
    assert TABLE_FORMATS == (
        "paper",
        "csv",
        "html",
        "markdown",
        "json",
        "latex",
        "nonsensical_csv",
        "image",
    )
    assert PROMPT_STYLES == ("zero_shot", "one_shot")


# --- Hash ----------------------------------------------------------------------------------


def test_prompt_hash_is_stable_and_follows_the_content() -> None:
    messages = [{"role": "user", "content": "héllo"}]
    # SHA-256 of the canonical JSON [{"content":"héllo","role":"user"}] in UTF-8.
    assert prompt_sha256(messages) == (
        "532a996701783aab92ae56865c1737f109a3b9942e98c1838a3bea2501b9074c"
    )
    reordered = [{"content": "héllo", "role": "user"}]
    assert prompt_sha256(reordered) == prompt_sha256(messages)
    assert prompt_sha256([{"role": "user", "content": "hello"}]) != prompt_sha256(messages)


def test_every_text_format_renders_every_release_table(release_tables: list) -> None:
    for t in release_tables[::11]:
        for fmt in ("csv", "html", "markdown", "json", "latex"):
            assert table_text(t.canonical_csv, fmt), (t.id, fmt)
