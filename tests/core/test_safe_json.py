from __future__ import annotations

import pytest

from endpoints.client import parse_completion
from hctqa.core import safe_json
from hctqa.core.generation import GenerationOutputError, parse_generation


def test_ordinary_json_is_read_as_json_loads_reads_it() -> None:
    assert safe_json.loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}


@pytest.mark.parametrize("depth", [65, 900, 100_000])
def test_deep_nesting_is_a_value_error_that_says_so(depth: int) -> None:
    with pytest.raises(ValueError, match="The JSON is nested too deeply"):
        safe_json.loads("[" * depth + "]" * depth)
    safe_json.loads("[" * 64 + "]" * 64)


def test_a_model_reply_nested_deeply_is_a_reported_error_not_a_crash() -> None:
    # Replies come from endpoints a researcher controls, and from the model itself.
    with pytest.raises(ValueError, match="not a chat completion"):
        parse_completion(b"[" * 100_000)
    with pytest.raises(GenerationOutputError, match="nested too deeply"):
        parse_generation("[" * 100_000, n=8)
