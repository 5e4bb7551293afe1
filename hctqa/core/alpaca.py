"""LLaMA-Factory's alpaca JSON, as the benchmark's fine-tuning experiments build it.

The benchmark converts each question's chat prompt (the paper's zero-shot prompt: a system
message and a user message) and gold answer into ``{"instruction", "system", "output"}``:
``instruction`` is the user message, ``system`` the system message, and ``output`` the gold
answer with its braces removed and every separator made ``" || "`` (between rows as before,
and between the values of one row, which were ``" | "``).

``dataset_info`` gives the entries LLaMA-Factory's ``data/dataset_info.json`` needs to find
the files; the benchmark's own entries are named ``hctqa_real_only`` and
``hctqa_real_and_synthetic``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The benchmark's two training mixes: real tables only, and real plus synthetic tables.
VARIANTS = ("real_only", "real_and_synthetic")
_COLUMNS = {"prompt": "instruction", "system": "system", "response": "output"}


class AlpacaError(ValueError):
    """A prompt that is not a system and a user message of text."""


def alpaca_output(gold_answer: str) -> str:
    """The benchmark's conversion, step for step: drop ``{`` and ``}``, turn ``||`` into ``|``
    and then every ``|`` into ``||``, and trim. ``{a | b} || {c}`` becomes ``a || b || c``."""
    return (
        gold_answer.replace("{", "").replace("}", "").replace("||", "|").replace("|", "||").strip()
    )


def alpaca_record(messages: Sequence[Mapping[str, Any]], gold_answer: str) -> dict[str, str]:
    """One training example from a zero-shot prompt ``[system, user]`` and its gold answer (an
    empty answer, withheld, stays empty)."""
    if (
        len(messages) != 2
        or messages[0].get("role") != "system"
        or messages[1].get("role") != "user"
        or not isinstance(messages[0].get("content"), str)
        or not isinstance(messages[1].get("content"), str)
    ):
        raise AlpacaError("An alpaca example needs a zero-shot text prompt: [system, user]")
    return {
        "instruction": messages[1]["content"],
        "system": messages[0]["content"],
        "output": alpaca_output(gold_answer),
    }


def entry_name(variant: str, split: str) -> str:
    """``hctqa_real_only`` for the train split (the benchmark's own name), and
    ``hctqa_real_only_<split>`` for the others."""
    base = f"hctqa_{variant}"
    return base if split == "train" else f"{base}_{split}"


def file_name(variant: str, split: str) -> str:
    return f"hctqa_{variant}_{split}.json"


def dataset_info(files: Mapping[str, str]) -> dict[str, Any]:
    """LLaMA-Factory's ``dataset_info.json`` entries: entry name → file name (in the same
    folder), each read as alpaca with a system column."""
    return {
        name: {"file_name": file_name, "formatting": "alpaca", "columns": dict(_COLUMNS)}
        for name, file_name in files.items()
    }
