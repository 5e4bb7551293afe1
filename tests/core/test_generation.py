"""The question-generation prompt and the strict reading of the model's reply."""

from __future__ import annotations

import json

import pytest

from hctqa.core.generation import GenerationOutputError, generation_messages, parse_generation

KINDS = ["lookup", "filter", "aggregation", "ranking", "yes_no", "lookup", "filter", "ranking"]


def reply(**changes: object) -> str:
    items = [
        {"question": f"Question {i}?", "answer": "{ 12 |x}" if i == 0 else "Yes", "type": KINDS[i]}
        for i in range(8)
    ]
    data: dict = {"questions": items}
    data.update(changes)
    return json.dumps(data)


def test_a_valid_reply_is_read_with_canonical_answers() -> None:
    pairs = parse_generation(reply())
    assert len(pairs) == 8
    assert pairs[0].answer == "{12 | x}" and pairs[0].kind == "lookup"


def test_one_code_fence_is_tolerated() -> None:
    assert len(parse_generation("```json\n" + reply() + "\n```")) == 8


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("Here you go: " + reply(), "Not JSON"),
        (reply()[:120], "cut short"),
        (json.dumps([1, 2]), 'exactly one key, "questions"'),
        (reply(extra=1), 'exactly one key, "questions"'),
        (json.dumps({"questions": {}}), "should be a list"),
        (json.dumps({"questions": [{"question": "Q?", "answer": "Yes"}] * 8}), "Question 1"),
    ],
)
def test_malformed_replies_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(GenerationOutputError, match=message):
        parse_generation(text)


def test_too_few_kinds_is_refused() -> None:
    items = [{"question": f"Q{i}?", "answer": "Yes", "type": "yes_no"} for i in range(8)]
    with pytest.raises(GenerationOutputError, match="at least 3 kinds"):
        parse_generation(json.dumps({"questions": items}))


def test_the_prompt_carries_table_example_and_rules() -> None:
    messages = generation_messages(
        table_html="<table class='hct'></table>", example=("Which is largest?", "{Doha}")
    )
    user = messages[1]["content"]
    assert messages[0]["role"] == "system"
    assert "<table class='hct'></table>" in user and "Which is largest?" in user
    assert "Write 8 different questions" in user and "yes/no" in user


def test_vision_prompts_send_the_image_instead_of_html() -> None:
    messages = generation_messages(table_html="<table>", image_data_url="data:image/png;base64,AA")
    parts = messages[1]["content"]
    assert parts[1]["image_url"]["url"] == "data:image/png;base64,AA"
    assert "<table>" not in parts[0]["text"]
