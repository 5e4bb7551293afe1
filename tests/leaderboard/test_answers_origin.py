"""The model page says where each row's answers came from and under which rules, and why two
rows of one model differ: the gemma-2-9b-it sample (recall 0.395 under 2025-05) beside the
paper's Table 1 row (0.351) is the same questions, gold answers and rules, other answers."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path

import pytest
from django.test import Client

from hctqa.core.reported import PAPER_REAL_QUESTIONS
from hctqa.core.scoring import evaluate
from tests.factories import InferenceRunFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db


def text_of(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</(p|dd)>', html, re.S)
    assert found, element_id
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def test_what_the_data_says_about_the_two_gemma_rows(data_dir: Path) -> None:
    # The sample answers the paper's 9,835 real questions, its gt is the release's gold
    # answer on every one, and the 2025-05 rules (the paper's) give recall 0.395 where the
    # paper prints 0.351: the answers are another run's.
    with gzip.open(data_dir / "sample-submissions" / "gemma-2-9b-it--text--real.jsonl.gz") as f:
        rows = [json.loads(line) for line in f]
    with gzip.open(data_dir / "hctqa-real" / "qaps.json.gz") as f:
        release = {q["question_id"]: q["gt"] for t in json.load(f) for q in t["questions"]}
    assert len(rows) == len(release) == PAPER_REAL_QUESTIONS
    assert all(release[r["qap_id"]] == r["gt"] for r in rows)
    scored = evaluate(release, {r["qap_id"]: r["response"] for r in rows}, "text")
    with (data_dir / "paper-table1.csv").open() as f:
        paper = next(r for r in csv.DictReader(f) if r["model"] == "gemma-2-9b-it")
    assert (round(scored.overall.recall, 3), float(paper["all_recall"])) == (0.395, 0.351)


@pytest.fixture
def gemma() -> dict:
    """A board holding the paper's gemma row and a researcher's upload of the sample's
    answers, scored here, with rows between them."""
    paper = SubmissionFactory(
        kind="reported", owner=None, model_name="gemma-2-9b-it", recall=0.351, rules=("2025-05",)
    )
    upload = SubmissionFactory(
        model_name="gemma-2-9b-it", recall=0.395, n_questions=PAPER_REAL_QUESTIONS
    )
    for recall in (0.5, 0.38, 0.36):
        SubmissionFactory(recall=recall)
    return {"paper": paper, "upload": upload}


def test_a_computed_row_says_its_answers_came_from_an_upload_and_why_it_differs_from_the_paper(
    client: Client, gemma: dict
) -> None:
    page = client.get(gemma["upload"].get_absolute_url()).text
    owner = gemma["upload"].owner.username
    assert text_of(page, "answers-from").startswith(f"A predictions file {owner} uploaded on")
    assert "2025-05, the paper's, and 2025-10" in text_of(page, "scored-by")
    assert "9,835 questions" in text_of(page, "scored-by")
    # Both rows, ranked on this board (0.5, then 0.395, 0.38, 0.36, then the paper's 0.351).
    rows = re.findall(
        r"<tr(?: class=\"own-row\")?>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*"
        r"<td class=\"num\">(.*?)</td><td class=\"num\">(.*?)</td>",
        page,
        re.S,
    )
    assert [(re.sub(r"<[^>]+>", "", r[0]), r[1], r[2], r[3]) for r in rows] == [
        ("This row", "an uploaded predictions file", "0.395", "2"),
        ("gemma-2-9b-it", "the paper's own run (Table 1)", "0.351", "5"),
    ]
    why = text_of(page, "why-they-differ")
    assert why.startswith("The paper's row reports recall 0.351 (rank 5): its own run")
    assert "never published" in why
    assert "same questions, same rules, so the figures differ because the answers do" in why


def test_the_papers_row_says_it_is_the_papers_own_run(client: Client, gemma: dict) -> None:
    page = client.get(gemma["paper"].get_absolute_url()).text
    answers = text_of(page, "answers-from")
    assert answers.startswith("The HCT-QA paper's own run of the model (zero-shot, temperature 0")
    assert "cannot be scored again here" in answers
    assert "copied from its Table 1" in text_of(page, "scored-by")
    assert "a difference in the figures is a difference in the answers" in text_of(
        page, "why-they-differ"
    )


def test_a_row_from_an_inference_run_says_so(client: Client) -> None:
    owner = UserFactory(role="researcher")
    entry = SubmissionFactory(owner=owner, model_name="lab-7b")
    InferenceRunFactory(created_by=owner, model_name="lab-7b", status="done", submission=entry)
    page = client.get(entry.get_absolute_url()).text
    assert text_of(page, "answers-from") == (
        "An inference run on this platform: lab-7b through the researcher's own endpoint."
    )
    assert "why-they-differ" not in page  # no other row of this model
