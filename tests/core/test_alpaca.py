from __future__ import annotations

import pytest

from hctqa.core.alpaca import (
    AlpacaError,
    alpaca_output,
    alpaca_record,
    dataset_info,
    entry_name,
    file_name,
)


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        # Hand-checked against the benchmark's own conversion (create_hctqa_in_alpacaJson.py):
        # braces go, "||" becomes "|", then every "|" becomes "||".
        ("{1289}", "1289"),
        ("{Yes}", "Yes"),
        ("Yes", "Yes"),
        ("{Doha | 2019}", "Doha || 2019"),
        ("{Doha} || {Al Rayyan}", "Doha || Al Rayyan"),
        ("{a | b} || {c | d}", "a || b || c || d"),
        ("{12.5 | 13.1} || {7}", "12.5 || 13.1 || 7"),
        (" {x} ", "x"),
        ("", ""),
    ],
)
def test_the_output_is_the_benchmarks_own_conversion(gold: str, expected: str) -> None:
    assert alpaca_output(gold) == expected


def test_a_record_is_instruction_system_and_output() -> None:
    prompt = [{"role": "system", "content": "SYS"}, {"role": "user", "content": "USER"}]
    assert alpaca_record(prompt, "{a | b}") == {
        "instruction": "USER",
        "system": "SYS",
        "output": "a || b",
    }


def test_a_prompt_that_is_not_system_and_user_text_is_refused() -> None:
    with pytest.raises(AlpacaError):
        alpaca_record([{"role": "user", "content": "USER"}], "{a}")
    with pytest.raises(AlpacaError):
        alpaca_record(
            [{"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text"}]}],
            "{a}",
        )


def test_dataset_info_names_the_benchmarks_entries_and_columns() -> None:
    names = {entry_name(v, s): file_name(v, s) for v in ("real_only",) for s in ("train", "test")}
    assert names == {
        "hctqa_real_only": "hctqa_real_only_train.json",
        "hctqa_real_only_test": "hctqa_real_only_test.json",
    }
    info = dataset_info(names)
    assert info["hctqa_real_only"] == {
        "file_name": "hctqa_real_only_train.json",
        "formatting": "alpaca",
        "columns": {"prompt": "instruction", "system": "system", "response": "output"},
    }
