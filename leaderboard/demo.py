"""Demo submissions on the demo tables, so a fresh platform shows a working leaderboard."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from dataset.models import Question
from leaderboard.models import DataScope, EvalSplit, Modality, Submission, TableFormat, Weights
from leaderboard.services import SubmissionInput, submission_create, submission_score


def _oracle(question: Question) -> str:
    return question.gold_answer.replace("{", "").replace("}", "").replace(" | ", " || ")


def _sloppy(question: Question) -> str:
    # Right on lookups and yes/no, wrong on anything computed: a plausible weak model.
    if question.template_number in (1, 6):
        return _oracle(question)
    return "No Answer"


def _vision(question: Question) -> str:
    return (
        f"I think the answer is {_oracle(question)}" if question.template_number != 3 else "unsure"
    )


DEMO_MODELS: list[tuple[SubmissionInput, Callable[[Question], str]]] = [
    (
        SubmissionInput(
            model_name="demo-oracle",
            organisation="HCT-QA demo",
            parameters_billions=None,
            weights=Weights.CLOSED,
            modality=Modality.TEXT,
            table_format=TableFormat.HTML,
            split=EvalSplit.ALL,
            data_scope=DataScope.DEMO,
            description="Answers with the gold answers: the ceiling.",
        ),
        _oracle,
    ),
    (
        SubmissionInput(
            model_name="demo-lookup-only",
            organisation="HCT-QA demo",
            parameters_billions=7,
            weights=Weights.OPEN,
            modality=Modality.TEXT,
            table_format=TableFormat.PAPER,
            split=EvalSplit.ALL,
            data_scope=DataScope.DEMO,
            description="Gets lookups and yes/no questions right, nothing computed.",
        ),
        _sloppy,
    ),
    (
        SubmissionInput(
            model_name="demo-vision",
            organisation="HCT-QA demo",
            parameters_billions=4,
            weights=Weights.OPEN,
            modality=Modality.VISION,
            table_format=TableFormat.IMAGE,
            split=EvalSplit.ALL,
            data_scope=DataScope.DEMO,
            description="A chatty vision model: its answers contain the values.",
        ),
        _vision,
    ),
]


def demo_submissions_ensure(*, owner: User) -> list[Submission]:
    """Create and score the demo submissions once (scored here, no worker needed)."""
    questions = list(Question.objects.filter(table__synthetic__family="demo"))
    made = []
    for data, answer in DEMO_MODELS:
        existing = Submission.objects.filter(owner=owner, model_name=data.model_name).first()
        if existing:
            made.append(existing)
            continue
        lines = "\n".join(
            json.dumps({"question_id": q.id, "response": answer(q)}) for q in questions
        )
        upload = SimpleUploadedFile("predictions.jsonl", lines.encode(), "application/jsonl")
        # The platform's rows, not the researcher's use of the test split.
        submission = submission_create(
            owner=owner, data=data, predictions=upload, daily_limit=False
        )
        submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
        made.append(submission)
    return made
