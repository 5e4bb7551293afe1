"""The benchmark's own scripts run on a cut release with only the Hub name changed (to the
folder's path).

The data steps of the two scripts in qcri/HCTQA-Benchmark that read the Hugging Face
dataset are written again below, as functions of our own that do the same operations on the
same column names and values:

- ``scripts/inference_experiments/llm_inference/llm_inf.py``: ``inference_frame`` (each split
  as a DataFrame, "all" their concatenation, then the ``dataset_type`` filter) and
  ``inference_batches`` (runs of ``batch_size`` rows: ``question_id``, ``eval`` of ``prompt``
  and of ``prompt_without_system``, and ``answer``);
- ``scripts/finetuning/datatset_prep_for_llama_factory/create_hctqa_in_alpacaJson.py``:
  ``alpaca_frames`` (train and test, all of them or the ``realWorldHCTs`` rows) and
  ``alpaca_rows`` (``eval`` of ``prompt``, its two messages and the answer's conversion).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.core.management import call_command

from dataset.models import Question

# No network at test time: the library reads the folder alone.
os.environ["HF_DATASETS_OFFLINE"] = "1"

pytestmark = pytest.mark.django_db

SYNTHETIC = "synthetic"


def load_as_the_scripts_do(folder: Path, cache: Path) -> Any:
    """Both scripts start with ``load_dataset("qcri-ai/HCTQA")``: here, the folder."""
    import datasets

    return datasets.load_dataset(str(folder), cache_dir=str(cache))


def inference_frame(dataset: Any, split_name: str, data_source_type: str) -> pd.DataFrame:
    """llm_inf.py: the chosen split as a DataFrame ("all": train, validation and test one
    after another, renumbered), then only the rows of the chosen kind of table."""
    frames = {s: pd.DataFrame(dataset[s]) for s in ("train", "validation", "test")}
    if split_name == "all":
        frame = pd.concat(list(frames.values()), axis=0).reset_index(drop=True)
    else:
        frame = frames[split_name]
    kinds = {"real": "realWorldHCTs", "synthetic": "syntheticHCTs"}
    if data_source_type in kinds:
        frame = frame[frame["dataset_type"] == kinds[data_source_type]]
    return frame


def inference_batches(frame: pd.DataFrame, batch_size: int) -> list[dict[str, list]]:
    """llm_inf.py: consecutive runs of ``batch_size`` rows (by position), each holding its
    rows' ids, prompts and prompts without the system message (each ``eval``-ed into chat
    messages) and gold answers."""
    batches = []
    for start in range(0, frame.shape[0], batch_size):
        batch: dict[str, list] = {"ids": [], "prompts": [], "prompts_without_system": [], "gts": []}
        for position in range(start, min(start + batch_size, len(frame))):
            row = frame.iloc[position]
            batch["ids"].append(row["question_id"])
            batch["prompts"].append(eval(row["prompt"]))  # noqa: S307 - as the script does
            batch["prompts_without_system"].append(eval(row["prompt_without_system"]))  # noqa: S307
            batch["gts"].append(row["answer"])
        batches.append(batch)
    return batches


def alpaca_frames(dataset: Any) -> dict[tuple[str, str], pd.DataFrame]:
    """create_hctqa_in_alpacaJson.py: train and test as DataFrames; "real_only" keeps the
    ``realWorldHCTs`` rows, "real_and_synthetic" every row."""
    out = {}
    for split in ("train", "test"):
        frame = pd.DataFrame(dataset[split])
        out[("real_only", split)] = frame[frame["dataset_type"] == "realWorldHCTs"]
        out[("real_and_synthetic", split)] = frame
    return out


def alpaca_rows(frame: pd.DataFrame) -> list[dict[str, str]]:
    """create_hctqa_in_alpacaJson.py: per row, the ``eval``-ed prompt's first message is the
    system text and its second the instruction; the answer loses its braces, its "||" become
    "|" and then every "|" becomes "||", and it is trimmed."""
    rows = []
    for _, row in frame.iterrows():
        messages = eval(row["prompt"])  # noqa: S307 - as the script does
        answer = row["answer"]
        for old, new in (("{", ""), ("}", ""), ("||", "|"), ("|", "||")):
            answer = answer.replace(old, new)
        rows.append(
            {
                "instruction": messages[1]["content"],
                "system": messages[0]["content"],
                "output": answer.strip(),
            }
        )
    return rows


def exported_prompts(tmp_path: Path, scope: str, *extra: str) -> dict[str, list]:
    out = tmp_path / f"{scope}{'-'.join(extra)}.jsonl"
    call_command(
        "export_prompts",
        "--format",
        "paper",
        "--scope",
        scope,
        "--out",
        str(out),
        *extra,
        stdout=io.StringIO(),
    )
    return {r["qa_id"]: r["prompt"] for r in map(json.loads, out.read_text().splitlines())}


@pytest.mark.parametrize("edition", ["public", "full"])
def test_the_inference_scripts_data_steps_run_on_a_cut_release(
    dataset: dict, cut, releases_root: Path, tmp_path: Path, edition: str
) -> None:
    release, _ = cut("2026.11")
    loaded = load_as_the_scripts_do(releases_root / "2026.11" / edition / "hf", tmp_path / "c")
    prompts, folded = {}, {}
    for scope in ("real", SYNTHETIC):
        prompts |= exported_prompts(tmp_path, scope)
        folded |= exported_prompts(tmp_path, scope, "--no-system-role")
    gold = dict(Question.objects.filter(status="verified").values_list("id", "gold_answer"))
    split_of = dict(Question.objects.values_list("id", "table__split"))

    expected = {"real": 0, SYNTHETIC: 0}
    for source, n in release.counts["questions_by_source"].items():
        expected[SYNTHETIC if source == SYNTHETIC else "real"] += n
    for data_source_type in ("real", SYNTHETIC, "all"):
        frame = inference_frame(loaded, "all", data_source_type)
        batches = inference_batches(frame, batch_size=8)
        ids = [i for b in batches for i in b["ids"]]
        assert ids == list(frame["question_id"]) and len(set(ids)) == len(ids)
        assert len(ids) == expected.get(data_source_type, release.counts["questions"])
        assert all(len(b["ids"]) == 8 for b in batches[:-1]) and 0 < len(batches[-1]["ids"]) <= 8
        for batch in batches:
            for qid, prompt, without, gt in zip(*batch.values(), strict=True):
                # The platform's own paper prompt, with and without the system message.
                assert prompt == prompts[qid] and without == folded[qid], qid
                assert [m["role"] for m in prompt] == ["system", "user"]
                withheld = edition == "public" and split_of[qid] == "test"
                assert gt == ("" if withheld else gold[qid]), qid
    by_source = release.counts["questions_by_source_and_split"]
    assert len(inference_frame(loaded, "test", "real")) == sum(
        n.get("test", 0) for source, n in by_source.items() if source != SYNTHETIC
    )


@pytest.mark.parametrize("edition", ["public", "full"])
def test_the_alpaca_scripts_rows_are_the_platforms_alpaca_files(
    dataset: dict, cut, releases_root: Path, tmp_path: Path, edition: str
) -> None:
    cut("2026.11")
    folder = releases_root / "2026.11" / edition
    loaded = load_as_the_scripts_do(folder / "hf", tmp_path / "c")
    for (variation, split), frame in alpaca_frames(loaded).items():
        rows = alpaca_rows(frame)
        ours = json.loads((folder / f"alpaca/hctqa_{variation}_{split}.json").read_text())
        assert rows == ours and rows, (variation, split)
        if edition == "public" and split == "test":
            assert all(r["output"] == "" for r in rows)


_QUESTION = re.compile(r"Question: \n`(.*)`\n# OUTPUT: \n`Answer:\Z", re.S)


def test_the_prompt_column_is_the_released_prompt_byte_for_byte(
    dataset: dict, cut, releases_root: Path, tmp_path: Path, data_dir: Path
) -> None:
    """Where our question text is the released one, the ``prompt`` column is the released
    prompt (prompts.jsonl.gz), byte for byte once both are written as JSON."""
    cut("2026.11")
    loaded = load_as_the_scripts_do(releases_root / "2026.11/public/hf", tmp_path / "c")
    frame = inference_frame(loaded, "all", "real")
    ours = dict(zip(frame["question_id"], frame["prompt"], strict=True))
    compared = 0
    with gzip.open(data_dir / "hctqa-real" / "prompts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record["qa_id"] not in ours:
                continue
            released = record["prompt"]
            question = _QUESTION.search(released[1]["content"]).group(1)
            if question != Question.objects.get(pk=record["qa_id"]).text:
                continue  # a question whose text the release wrote differently
            prompt = eval(ours[record["qa_id"]])  # noqa: S307 - as the scripts do
            assert json.dumps(prompt) == json.dumps(released), record["qa_id"]
            compared += 1
    assert compared >= 30
