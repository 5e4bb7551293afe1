"""The questions a submission is scored on (split, data scope) and the daily test limit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from dataset.models import Question, QuestionStatus, Split
from dataset.selectors import scope_filter as dataset_scope_filter
from hctqa.core.snapshots import scope_of
from leaderboard.models import DailyLimitEntry, EvalSplit

User = AbstractBaseUser | AnonymousUser


def scope_filter(data_scope: str) -> Q:
    """Real tables are every collection's, ingested ones included; see
    ``dataset.selectors.scope_filter``."""
    return dataset_scope_filter(data_scope)


def test_split_submissions_today(*, user: Any) -> int:
    """Submissions and inference runs scored against test gold answers this user made since
    00:00 UTC: what counts against SUBMISSION_DAILY_TEST_LIMIT (failed and deleted ones too)."""
    start = timezone.now().astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return DailyLimitEntry.objects.filter(user=user, created_at__gte=start).count()


def test_split_submissions_left(*, user: Any) -> tuple[int, int]:
    """(left today, the daily limit), for the submit page."""
    limit = settings.SUBMISSION_DAILY_TEST_LIMIT
    return max(0, limit - test_split_submissions_today(user=user)), limit


def scored_questions() -> QuerySet[Question]:
    """Every question a submission may be scored on: verified, and not in the private gold
    pool, which is not part of the benchmark (its questions are never scored, nor shown)."""
    return Question.objects.filter(status=QuestionStatus.VERIFIED, in_gold_pool=False)


def benchmark_questions(*, split: str, data_scope: str) -> QuerySet[Question]:
    """The questions a submission for this split and scope is scored on."""
    questions = scored_questions().filter(scope_filter(data_scope))
    if split != EvalSplit.ALL:
        questions = questions.filter(table__split=split)
    return questions


def test_questions_scored(*, split: str, data_scope: str) -> set[str]:
    """The test-split questions a submission for this split and scope is scored on: those
    whose gold answers are hidden (none for train and validation)."""
    if not includes_test_questions(split):
        return set()
    questions = benchmark_questions(split=split, data_scope=data_scope)
    return set(questions.filter(table__split=Split.TEST).values_list("id", flat=True))


def gold_answers(*, split: str, data_scope: str) -> dict[str, str]:
    return dict(
        benchmark_questions(split=split, data_scope=data_scope).values_list("id", "gold_answer")
    )


def known_question_ids(*, include_gold_pool: bool = False) -> set[str]:
    """The ids a predictions file may name. An upload naming a gold-pool question is refused
    as naming an unknown one, so uploads cannot probe the pool; scoring a stored file again
    (``include_gold_pool``) ignores answers to questions that joined the pool since."""
    questions = Question.objects.all()
    if not include_gold_pool:
        questions = questions.filter(in_gold_pool=False)
    return set(questions.values_list("id", flat=True))


def test_question_ids() -> set[str]:
    return set(Question.objects.filter(table__split=Split.TEST).values_list("id", flat=True))


def question_places(*, question_ids: Collection[str]) -> dict[tuple[str, str, bool], int]:
    """How many of these questions sit in each (split, data scope, verified) place: to tell
    a researcher where the ids of a file that matches nothing belong."""
    places: Counter[tuple[str, str, bool]] = Counter()
    ids = list(question_ids)
    for start in range(0, len(ids), 5000):  # within every database's parameter limit
        rows = (
            Question.objects.filter(id__in=ids[start : start + 5000])
            .values_list("table__split", "table__source", "status")
            .annotate(n=Count("pk"))
            .order_by()
        )
        for split, source, status, n in rows:
            places[(split, scope_of(source), status == QuestionStatus.VERIFIED)] += n
    return dict(places)


@dataclass(frozen=True)
class QuestionFacts:
    table_id: str
    origin: str
    template_number: int | None
    query_properties: dict[str, Any]
    table_properties: dict[str, Any]


def question_facts(*, question_ids: list[str]) -> dict[str, QuestionFacts]:
    """What the breakdowns group by, for each question: one query."""
    rows = Question.objects.filter(id__in=question_ids).values_list(
        "id", "table_id", "origin", "template_number", "query_properties", "table__table_properties"
    )
    return {row[0]: QuestionFacts(*row[1:]) for row in rows}


def includes_test_questions(split: str) -> bool:
    return split in (EvalSplit.TEST, EvalSplit.ALL)
