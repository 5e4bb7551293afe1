"""Review of issue 32: the disclosure rule counted every test answer as unknown to a reader,
but some are known. An inference run leaves each prompt over the model's context length
empty (issue 31); the row shows how many and the context length, and which prompts those
are follows from the public prompts and the model's tokenizer. An empty answer scores 0, so
a reader subtracts those answers from every figure, and what is left may rest on one
question.

The replay: gemma's answers to the 992 official test questions, its 287 longest prompts left
empty (the share a 2,048-token server refused, docs/vllm.md). The figures the platform keeps
are rebuilt here as the reader sees them (each figure's questions, counted under its rules
version, less the empty answers; each version's score of a question its own unknown), and
each set of questions that one pattern of figures counts (an atom) is tried: an atom of 1 to
DISCLOSURE_MARGIN questions whose removal lowers the rank is determined by the figures.
Before the fix one was: census--8--2520--M0, under each version."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from hctqa.core.disclosure import DISCLOSURE_MARGIN
from hctqa.core.scoring import evaluate_all, source_of
from leaderboard.services.scoring import compute_breakdowns, disclose
from tests.leaderboard.test_disclosure_real import official  # noqa: F401 (a fixture)

# Prompts over a 2,048-token context in the real vLLM run (docs/vllm.md): 287 of 992.
OVER_THE_CONTEXT = 287


@pytest.fixture(scope="module")
def left_empty(official, data_dir: Path):  # noqa: F811
    """gemma's answers with the longest prompts' left empty, as a 2,048-token run leaves them,
    and the questions whose answers are empty."""
    gold, facts, gemma, _ = official
    length: dict[str, int] = {}
    with gzip.open(data_dir / "hctqa-real" / "prompts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["qa_id"] in gold:
                length[row["qa_id"]] = sum(len(m["content"]) for m in row["prompt"])
    longest = sorted(gold, key=lambda q: (-length[q], q))[:OVER_THE_CONTEXT]
    return gold, facts, {**gemma, **dict.fromkeys(longest, "")}, set(longest)


def readers_figures(gold, facts, answers, empty) -> list[set[tuple[str, str]]]:
    """Every figure the platform keeps, as the unknowns a reader who knows the empty answers
    is left with: (question, rules version)."""
    evaluations = evaluate_all(gold, answers, "text", model_name="gemma-2-9b-it")
    hidden = set(gold)
    withheld = disclose(evaluations, facts, hidden)
    breakdowns = compute_breakdowns(evaluations, facts, hidden=hidden, disclosures=withheld)
    figures = []
    for rules, evaluation in evaluations.items():
        counted = set(evaluation.scores) - empty
        shown = []
        if not withheld[rules].overall:
            shown.append(set(gold))
        shown += [
            {q for q in gold if source_of(q) == source}
            for source, hides in withheld[rules].sources.items()
            if not hides
        ]
        # The breakdowns as stored (what pages, API and exports show), groups by membership.
        groups = {(kind, key) for (kind, key), hides in withheld[rules].groups.items() if not hides}
        for kind, rows in breakdowns[rules].items():
            if kind == "margin":
                continue
            for row in rows:
                assert row["withheld"] is ((kind, row["key"]) not in groups)
        for kind, key in sorted(groups):
            shown.append(members_of(facts, kind, key))
        figures += [{(q, rules) for q in members & counted} for members in shown]
    return figures


def members_of(facts, kind: str, key: str) -> set[str]:
    field = {"table_properties": "table_properties", "query_properties": "query_properties"}
    if kind == "templates":
        return {q for q, f in facts.items() if str(f.template_number) == key}
    return {
        q
        for q, f in facts.items()
        if (getattr(f, field[kind]) or {}).get(key) is True
        and (kind == "table_properties" or f.origin == "human")
    }


def determined_atoms(figures: list[set[tuple[str, str]]], margin: int) -> list[list]:
    unknowns = sorted({u for f in figures for u in f})
    column = {u: i for i, u in enumerate(unknowns)}
    matrix = np.zeros((len(figures), len(unknowns)))
    for i, figure in enumerate(figures):
        matrix[i, [column[u] for u in figure]] = 1
    rank = np.linalg.matrix_rank(matrix)
    atoms: dict[bytes, list] = {}
    for u in unknowns:
        atoms.setdefault(matrix[:, column[u]].tobytes(), []).append(u)
    found = []
    for members in atoms.values():
        if len({q for q, _ in members}) > margin:
            continue
        rest = [column[u] for u in unknowns if u not in set(members)]
        if np.linalg.matrix_rank(matrix[:, rest]) < rank:
            found.append(sorted(members))
    return found


def test_answers_a_reader_knows_are_empty_give_no_question_away(left_empty) -> None:
    gold, facts, answers, empty = left_empty
    figures = readers_figures(gold, facts, answers, empty)
    assert len(figures) > 40  # most figures are still shown
    assert determined_atoms(figures, DISCLOSURE_MARGIN) == []
