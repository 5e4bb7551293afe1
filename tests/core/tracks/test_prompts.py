"""The tracks' baseline prompts and the strict readers of replies."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from hctqa.core.tracks import prompts
from hctqa.core.tracks.prompts import (
    ReplyError,
    crop_png,
    extraction_messages,
    prompt_fingerprint,
    read_csv_reply,
    read_html_reply,
    read_sql_reply,
    sql_messages,
    transformation_messages,
)


def test_the_fingerprint_changes_with_any_template(monkeypatch: pytest.MonkeyPatch) -> None:
    before = prompt_fingerprint()
    assert before == prompt_fingerprint()
    monkeypatch.setattr(prompts, "SQL_USER", prompts.SQL_USER + " ")
    assert prompt_fingerprint() != before


def test_the_messages_carry_the_inputs() -> None:
    png = io.BytesIO()
    Image.new("L", (40, 30), 255).save(png, "PNG")
    vision = extraction_messages(crop_png(png.getvalue(), (5, 5, 20, 20)))
    assert vision[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    text = transformation_messages("a,b\n1,2\n", "csv")
    assert "a,b\n1,2" in text[1]["content"]
    schema = {
        "table": "DBdata",
        "columns": [
            {"name": "Year", "type": "TEXT", "values": ["2019"]},
            {"name": "Value", "type": "REAL"},
        ],
    }
    sql = sql_messages("What is the value in 2019?", schema)
    assert '- Year (TEXT) values: ["2019"]' in sql[1]["content"]
    assert "What is the value in 2019?" in sql[1]["content"]


@pytest.mark.parametrize(
    ("reply", "sql"),
    [
        ("SELECT 1;", "SELECT 1"),
        ("```sql\nSELECT Value FROM DBdata\n```\nThis selects...", "SELECT Value FROM DBdata"),
        (
            "Sure:\n```\nWITH t AS (SELECT 1) SELECT * FROM t;\n```",
            "WITH t AS (SELECT 1) SELECT * FROM t",
        ),
        ("-- the answer\nSELECT 2", "-- the answer\nSELECT 2"),
    ],
)
def test_the_sql_of_a_reply(reply: str, sql: str) -> None:
    assert read_sql_reply(reply) == sql


@pytest.mark.parametrize(
    "reply", ["", "   ", "The answer is 5.", "DROP TABLE DBdata", "```python\nprint(1)\n```", None]
)
def test_a_reply_without_a_query_is_refused(reply) -> None:
    with pytest.raises(ReplyError):
        read_sql_reply(reply)


def test_the_table_of_a_reply() -> None:
    reply = "Here it is:\n<TABLE><tr><td>a</td></tr></TABLE>\n<table><tr><td>b</td></tr></table>"
    assert read_html_reply(reply) == {"html": "<TABLE><tr><td>a</td></tr></TABLE>"}
    with pytest.raises(ReplyError):
        read_html_reply("<table><tr><td>cut short")
    with pytest.raises(ReplyError):
        read_html_reply("x" * 200_001)


def test_the_csv_of_a_reply() -> None:
    assert read_csv_reply("```csv\nA,Value\nx,1\n```") == "A,Value\nx,1\n"
    assert read_csv_reply("A,Value\nx,1") == "A,Value\nx,1\n"
    for bad in ("just words", "A,Value\n", 'A,"Value\nx,1'):
        with pytest.raises(ReplyError):
            read_csv_reply(bad)
