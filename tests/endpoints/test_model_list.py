"""What an endpoint's model list and its refusals are read as (issue 31): the names it serves,
each one's context length, and a prompt over the context told apart from other refusals.
The real server's replies are in tests/leaderboard/test_inference_vllm.py; these are the
replies other servers give, and hostile ones."""

from __future__ import annotations

import json

import pytest

from endpoints.client import MAX_SERVED_MODELS, ServedModel, over_context, parse_model_list


def listing(*entries: object) -> bytes:
    return json.dumps({"object": "list", "data": list(entries)}).encode()


def test_each_servers_context_length_field_is_read() -> None:
    models = parse_model_list(
        listing(
            {"id": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 16000},  # vLLM
            {"id": "gpt-4o", "owned_by": "openai"},  # OpenAI says nothing of it
            {"id": "router/model", "context_length": 131072},
            {"id": "other", "context_window": 8192},
        )
    )
    assert models == [
        ServedModel("meta-llama/Llama-3.1-8B-Instruct", 16000),
        ServedModel("gpt-4o", None),
        ServedModel("router/model", 131072),
        ServedModel("other", 8192),
    ]


@pytest.mark.parametrize("value", [0, -5, True, "4096", 4096.5, 2**40, None, [4096], {"n": 4096}])
def test_a_context_length_that_is_no_token_count_is_unknown(value: object) -> None:
    assert parse_model_list(listing({"id": "m", "max_model_len": value})) == [
        ServedModel("m", None)
    ]


@pytest.mark.parametrize(
    "payload",
    [
        b"<html>not json</html>",
        b"[]",
        b'{"data": {"id": "m"}}',
        b'{"data": [{"name": "m"}]}',
        b'{"data": [{"id": ""}]}',
        b'{"data": [{"id": 5}]}',
        b'{"data": ["m"]}',
        b"[" * 100_000 + b"]" * 100_000,  # nested deep enough to crash a parser
        listing(*({"id": f"m{i}"} for i in range(MAX_SERVED_MODELS + 1))),
    ],
)
def test_anything_but_a_model_list_is_refused(payload: bytes) -> None:
    with pytest.raises(ValueError, match="not a model list"):
        parse_model_list(payload)


def test_a_model_name_is_kept_as_one_short_line_of_visible_text() -> None:
    (model,) = parse_model_list(listing({"id": "evil\u202e\nname" + "x" * 500}))
    assert model.name.startswith("evil name") and len(model.name) == 200


@pytest.mark.parametrize(
    ("body", "over"),
    [
        # vLLM 0.32
        (
            {
                "message": "This model's maximum context length is 1024 tokens. However, your "
                "prompt contains at least 1025 input tokens",
                "param": "input_tokens",
                "code": 400,
            },
            True,
        ),
        # OpenAI
        ({"message": "Too long.", "code": "context_length_exceeded"}, True),
        # llama.cpp
        ({"message": "the request exceeds the available context size", "code": 400}, True),
        ({"message": "Input is longer than the context window"}, True),
        ("This model's maximum context length is 2048 tokens", True),  # a bare message
        # Other refusals are not prompts over the context.
        ({"message": "max_tokens=2000 cannot be greater than max_model_len=1024"}, False),
        ({"message": "This model does not accept images"}, False),
        ({"message": ["context length"]}, False),
    ],
)
def test_a_refusal_says_whether_the_prompt_is_over_the_context(body: object, over: bool) -> None:
    assert over_context(json.dumps({"error": body}).encode()) is over


@pytest.mark.parametrize(
    "payload", [b"", b"context length", b'"context length"', b'{"detail": "context length"}']
)
def test_a_refusal_that_is_no_openai_error_is_not_over_the_context(payload: bytes) -> None:
    assert over_context(payload) is False
