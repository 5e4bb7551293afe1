"""The private gold pool: the questions gold control serves to verifiers.

A gold item is only a test if a verifier cannot look it up. So pool questions are shown to
admins only (``selectors.questions_visible``), and they are not part of the benchmark:
never scored, exported, used as worked examples or released. A question can join the pool
only if no copy of it is public elsewhere and it makes a fair test: verified, outside the
test split (gold shows its answer), written or verified on this platform (the published
release can be searched by anyone), not templated, and with a gold answer that parses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation import permissions as rules
from dataset.models import Question, QuestionOrigin, QuestionStatus, Split
from dataset.signals import announce_question_set_change
from hctqa.core.answers import AnswerFormatError, canonical_answer
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError

MAX_PER_CHANGE = 1000


@dataclass(frozen=True)
class PoolChange:
    changed: list[str]  # ids whose membership changed
    unchanged: list[str]  # already as asked


def _why_not_gold(question: Question, written_here: bool) -> str | None:
    if question.status != QuestionStatus.VERIFIED:
        return "it is not verified"
    if question.table.split == Split.TEST:
        return "it is on a test-split table, and gold shows its answer to annotators"
    if question.origin == QuestionOrigin.SYNTHETIC:
        return "template questions read unlike model-generated ones, so verifiers would spot it"
    if question.origin == QuestionOrigin.HUMAN and not written_here:
        return "it comes from the published HCT-QA release, where anyone can look it up"
    try:
        canonical_answer(question.gold_answer)
    except AnswerFormatError as exc:
        return f"its gold answer does not parse ({exc})"
    return None


def _wanted(question_ids: Sequence[str]) -> list[str]:
    wanted = list(dict.fromkeys(q.strip() for q in question_ids if q.strip()))
    if not wanted:
        raise ApplicationError("Name at least one question", field="question_ids")
    if len(wanted) > MAX_PER_CHANGE:
        raise ApplicationError(
            f"At most {MAX_PER_CHANGE} questions at once, not {len(wanted)}", field="question_ids"
        )
    return wanted


def _refuse(problems: list[str]) -> None:
    shown = "; ".join(problems[:5]) + (
        f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
    )
    raise ApplicationError(f"Nothing changed: {shown}", field="question_ids")


def _announce(changed: list[str], *, joined: bool) -> None:
    # Scores computed with (or without) these questions are out of date: the leaderboard
    # listens, in this transaction, and queues the affected submissions to be scored again.
    if changed:
        where = "joined" if joined else "left"
        questions = counted(len(changed), "question")
        announce_question_set_change(
            sender=Question,
            reason=f"{questions} {where} the gold pool",
            question_ids=list(changed),
        )


@transaction.atomic
def gold_pool_add(*, admin: Any, question_ids: Sequence[str]) -> PoolChange:
    """Put questions in the gold pool: all of them, or none (with every reason) when one is
    not fit to be gold. Adding a question that is already in is harmless."""
    rules.GOLD_POOL_CHANGE.check(admin)
    wanted = _wanted(question_ids)
    found = {
        q.pk: q
        for q in Question.objects.select_for_update(of=("self",))
        .select_related("table")
        .defer("table__canonical_csv")
        .filter(pk__in=wanted)
    }
    written_here = set(
        Question.objects.filter(pk__in=wanted, authoring__isnull=False).values_list("pk", flat=True)
    )
    problems = []
    for question_id in wanted:
        question = found.get(question_id)
        reason = (
            "no such question"
            if question is None
            else _why_not_gold(question, question_id in written_here)
        )
        if reason:
            problems.append(f"{question_id}: {reason}")
    if problems:
        _refuse(problems)
    changed = [q for q in wanted if not found[q].in_gold_pool]
    Question.objects.filter(pk__in=changed).update(in_gold_pool=True)
    _announce(changed, joined=True)
    return PoolChange(changed, [q for q in wanted if q not in changed])


@transaction.atomic
def gold_pool_remove(*, admin: Any, question_ids: Sequence[str]) -> PoolChange:
    """Take questions out of the gold pool: they become ordinary, public benchmark questions
    again. Gold verdicts already given on them stay on record."""
    rules.GOLD_POOL_CHANGE.check(admin)
    wanted = _wanted(question_ids)
    members = dict(Question.objects.filter(pk__in=wanted).values_list("pk", "in_gold_pool"))
    missing = [q for q in wanted if q not in members]
    if missing:
        _refuse([f"{q}: no such question" for q in missing])
    changed = [q for q in wanted if members[q]]
    Question.objects.filter(pk__in=changed).update(in_gold_pool=False)
    _announce(changed, joined=False)
    return PoolChange(changed, [q for q in wanted if q not in changed])
