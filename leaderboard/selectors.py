"""Reads for the leaderboard. Test-split gold answers never leave through here: per-question
views either drop test questions or withhold their scores."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import UTC
from statistics import median
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db.models import Count, F, Max, Q, QuerySet, TextField, Value
from django.db.models.functions import Coalesce, Length, Lower, Substr, Trim
from django.http import Http404
from django.utils import timezone

from dataset.models import Question, QuestionStatus, Split
from dataset.selectors import gold_answer_visible
from dataset.selectors import scope_filter as dataset_scope_filter
from hctqa.core.render import to_html
from hctqa.core.snapshots import scope_of
from hctqa.core.stats import PairedComparison, paired_bootstrap
from hctqa.core.tables import TableFormatError, parse_table
from leaderboard.models import (
    BOARD_SPLITS,
    DEFAULT_RULES,
    QA_TRACK,
    RESULT_FIGURES,
    DailyLimitEntry,
    DataScope,
    EvalSplit,
    InferenceResponse,
    InferenceRun,
    ItemResult,
    Kind,
    Modality,
    PropertyRegression,
    QuestionResult,
    Rescore,
    ResponseStatus,
    Rules,
    Score,
    Status,
    Submission,
    TrackScore,
    Visibility,
)
from tracks.registry import TrackInfo
from tracks.registry import track as track_info

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


# --- The board -----------------------------------------------------------------------------


# Sort keys and the Score columns (or its submission's) they sort on.
SORTABLE = {
    "model": "submission__model_name",
    "organisation": "submission__organisation",
    "parameters": "submission__parameters_billions",
    "precision": "precision",
    "recall": "recall",
    "f1": "f1",
    "cc": "cc",
    "psa": "recall_psa",
    "pak": "recall_pak",
    "census": "recall_census",
    "arxiv": "recall_arxiv",
    "submitted": "submission__created_at",
}


@dataclass(frozen=True)
class BoardFilters:
    modality: str = "text"
    # all (the paper's Table 1 protocol) or test: a board ranks one question set only.
    split: str = EvalSplit.ALL
    rules: str = DEFAULT_RULES
    size_class: str = ""
    weights: str = ""
    data_scope: str = "real"
    table_format: str = ""
    search: str = ""
    sort: str = "-recall"


def _board_submissions(filters: BoardFilters, prefix: str = "") -> Q:
    """The submissions a board with these filters holds, as a condition on ``prefix``."""
    if filters.split not in BOARD_SPLITS:
        raise ValueError("Train and validation scores are not ranked publicly")
    p = prefix
    condition = Q(
        **{f"{p}track": QA_TRACK, f"{p}modality": filters.modality, f"{p}split": filters.split}
    )
    for field in ("size_class", "weights", "data_scope", "table_format"):
        value = getattr(filters, field)
        if value:
            condition &= Q(**{f"{p}{field}": value})
    if filters.search:
        text = filters.search
        condition &= (
            Q(**{f"{p}model_name__icontains": text})
            | Q(**{f"{p}organisation__icontains": text})
            | Q(**{f"{p}description__icontains": text})
        )
    return condition


def _board_rows(filters: BoardFilters) -> QuerySet[Score]:
    return Score.objects.filter(
        Q(submission__kind=Kind.REPORTED)
        | Q(
            submission__status=Status.SCORED,
            submission__visibility=Visibility.PUBLIC,
            submission__stale=False,
        ),
        _board_submissions(filters, "submission__"),
        rules=filters.rules,
    )


def board(*, filters: BoardFilters) -> QuerySet[Score]:
    """The ranked rows of a public board: the scores, under the chosen rules, of public
    submissions scored on the chosen question set (all questions, or the test split) whose
    scores are current, and the paper's reported rows (2025-05 figures on all questions, so
    only on that board). Filtered and sorted; missing figures sort last whichever the
    direction. One query per page, with the submission joined."""
    rows = _board_rows(filters)
    descending = filters.sort.startswith("-")
    column = SORTABLE[filters.sort.lstrip("-")]
    order = F(column).desc(nulls_last=True) if descending else F(column).asc(nulls_last=True)
    return (
        rows.select_related("submission")
        # The release a row was scored on, by version only (the row says where it came from).
        .annotate(release_version=F("submission__release__version"))
        .defer(
            "breakdowns",
            "by_source",
            "submission__description",
            "submission__gold_claims",
            "submission__predictions",
        )
        .order_by(order, "submission__model_name", "submission_id")
    )


def board_other_scopes(*, filters: BoardFilters) -> list[tuple[str, str, int]]:
    """For an empty board: the boards of the other data scopes with the same filters that
    have rows, as (scope, label, rows), in the scopes' order. One query."""
    counts = dict(
        _board_rows(replace(filters, data_scope=""))
        .exclude(submission__data_scope=filters.data_scope)
        .order_by()
        .values_list("submission__data_scope")
        .annotate(n=Count("id"))
    )
    return [(s.value, s.label, counts[s.value]) for s in DataScope if counts.get(s.value)]


# How many submissions being scored again a board lists (beside its ranked rows).
BEING_RESCORED_SHOWN = 50


def board_being_rescored(*, filters: BoardFilters) -> list[Submission]:
    """Public submissions of this board whose questions or gold answers changed since they
    were scored, waiting to be scored again: listed apart, never ranked. One query."""
    return list(
        Submission.objects.filter(
            _board_submissions(filters),
            kind=Kind.SUBMISSION,
            visibility=Visibility.PUBLIC,
            stale=True,
            status__in=[Status.QUEUED, Status.SCORING],
        )
        .only("id", "model_name", "organisation", "status", "progress", "split", "modality")
        .order_by("model_name", "id")[:BEING_RESCORED_SHOWN]
    )


# --- One submission ------------------------------------------------------------------------


def can_manage(*, user: User, submission: Submission) -> bool:
    if not user.is_authenticated or submission.kind == Kind.REPORTED:
        return False
    return submission.owner_id == user.pk or user.has_perm("leaderboard.change_submission")


def is_public(submission: Submission) -> bool:
    """Shown to everyone: the paper's rows, and public submissions on all questions or the
    test split. Train and validation submissions are their owners' only."""
    if submission.kind == Kind.REPORTED:
        return True
    return submission.visibility == Visibility.PUBLIC and not submission.owner_only


def submission_for_viewer(*, submission_id: int, user: User) -> Submission:
    """Public submissions and reported rows for everyone; private ones, and train and
    validation ones, for owner and admins. Anything else is a 404, so those do not reveal
    that they exist."""
    try:
        submission = Submission.objects.select_related("owner", "release", "rescore").get(
            pk=submission_id
        )
    except Submission.DoesNotExist:
        raise Http404("No such submission") from None
    if not is_public(submission) and not can_manage(user=user, submission=submission):
        raise Http404("No such submission")
    return submission


def scores_of(*, submission: Submission) -> dict[str, Score]:
    """Its scores, by rules version (from the prefetched ones, when they are)."""
    return {s.rules: s for s in submission.scores.all()}


def breakdowns_for_viewer(*, score: Score) -> dict[str, Any]:
    """The breakdowns anyone may see, the owner included: without the groups withheld (they
    keep no figure: they would give single hidden answers' scores), with how many are."""
    breakdowns = score.breakdowns or {}
    out: dict[str, Any] = {"margin": breakdowns.get("margin", 0), "withheld": 0}
    for kind in ("table_properties", "query_properties", "templates"):
        rows = breakdowns.get(kind, [])
        shown = [r for r in rows if not r.get("withheld")]
        out["withheld"] += len(rows) - len(shown)
        out[kind] = shown
    return out


def submissions_of(*, user: User) -> QuerySet[Submission]:
    """The user's submissions, newest first, each with its scores prefetched."""
    return (
        Submission.objects.filter(owner=user)
        .select_related("release", "rescore", "track_score")
        .prefetch_related("scores")
        .order_by("-created_at")
    )


# The breakdowns a model page sets beside its board's median.
MEDIAN_KINDS = ("table_properties", "query_properties")
# Medians are kept this long in the cache, under a key that changes with the board's rows.
MEDIANS_CACHE_SECONDS = 600


def board_medians(*, submission: Submission, rules: str) -> dict[str, dict[str, tuple]] | None:
    """The median recall of each table-property and query-property group over the public
    board ``submission`` belongs on: same modality, question set (split and data scope) and
    rules; the paper's rows have no groups. Each row's groups withheld from the public are
    left out, so a median gives away nothing the board does not. By kind, then group key:
    (median, rows). None when it belongs on no public board (train, validation).

    One query for the board's fingerprint (its rows, their last scoring and change); the
    breakdowns are read only when the cached medians are out of date."""
    if submission.owner_only or submission.is_reported:
        return None
    board = Score.objects.filter(
        rules=rules,
        submission__kind=Kind.SUBMISSION,
        submission__status=Status.SCORED,
        submission__visibility=Visibility.PUBLIC,
        submission__stale=False,
        submission__modality=submission.modality,
        submission__split=submission.split,
        submission__data_scope=submission.data_scope,
    )
    # Visibility changes set updated_at: one row hidden and another shown keep the count.
    mark = board.aggregate(
        n=Count("pk"),
        top=Max("pk"),
        last=Max("submission__scored_at"),
        changed=Max("submission__updated_at"),
    )
    board_id = (submission.modality, submission.split, submission.data_scope, rules)
    fingerprint = ":".join(str(v) for v in (*board_id, *mark.values()))
    # Hashed: a cache key holds no spaces (the timestamp has one) on every backend.
    key = "board-medians:" + hashlib.sha256(fingerprint.encode()).hexdigest()
    cached = cache.get(key)
    if cached is not None:
        return cached
    values: dict[str, dict[str, list[float]]] = {kind: defaultdict(list) for kind in MEDIAN_KINDS}
    for breakdowns in board.values_list("breakdowns", flat=True).iterator(chunk_size=200):
        for kind in MEDIAN_KINDS:
            for row in (breakdowns or {}).get(kind, []):
                if row.get("key") and not row.get("withheld") and row.get("recall") is not None:
                    values[kind][row["key"]].append(row["recall"])
    medians = {
        kind: {group: (median(v), len(v)) for group, v in groups.items()}
        for kind, groups in values.items()
    }
    cache.set(key, medians, MEDIANS_CACHE_SECONDS)
    return medians


def beside_medians(
    rows: list[dict[str, Any]], medians: dict[str, tuple] | None
) -> list[dict[str, Any]]:
    """Breakdown rows with the board's median of each group (``median``, ``median_rows``;
    None where the board has none)."""
    out = []
    for row in rows:
        found = (medians or {}).get(row.get("key"))
        out.append(
            {
                **row,
                "median": found[0] if found else None,
                "median_rows": found[1] if found else 0,
            }
        )
    return out


# Pages show at most this much of an answer; the per-question download has all of it.
PREDICTION_SHOWN_CHARS = 500


@dataclass(frozen=True)
class WrongAnswer:
    question_id: str
    table_id: str
    text: str
    prediction: str | None  # at most PREDICTION_SHOWN_CHARS; None: the file said null
    gold_answer: str | None
    recall: float
    f1: float | None
    table_html: str = ""  # the table rendered, merged header cells and all (escaped)
    prediction_length: int = 0  # the whole answer's length

    @property
    def prediction_cut(self) -> int:
        """Characters of the answer not shown."""
        return max(0, self.prediction_length - PREDICTION_SHOWN_CHARS)


# Per-question figures of each rules version: (precision, recall, F1, CC) columns, and the
# condition for an answer to count under it.
FIGURES_UNDER_RULES: dict[str, tuple[tuple[str, str, str, str], Q]] = {
    Rules.V2025_05: (("precision", "recall", "f1", "cc"), Q()),
    Rules.V2025_10: (
        ("precision_2025_10", "recall_2025_10", "f1_2025_10", "cc_2025_10"),
        Q(counted_2025_10=True),
    ),
}


def hardest_questions(
    *, submission: Submission, rules: str = DEFAULT_RULES, limit: int = 20
) -> list[WrongAnswer]:
    """The questions this submission got least right under these rules: lowest recall, then
    lowest F1 (answers the rules leave out are not listed).

    Test-split questions are left out: their per-question scores would tell a reader which
    answers match the hidden gold. So are gold-pool questions (scored before they joined it).
    """
    (_, recall, f1, cc), counted = FIGURES_UNDER_RULES[rules]
    results = (
        QuestionResult.objects.filter(counted, submission=submission, **{cc: False})
        .exclude(question__table__split=Split.TEST)
        .exclude(question__in_gold_pool=True)
        .select_related("question__table")
        .annotate(
            # Only the start of each answer leaves the database: one can be megabytes long.
            prediction_head=Substr("prediction", 1, PREDICTION_SHOWN_CHARS),
            prediction_length=Length("prediction"),
            shown_recall=F(recall),
            shown_f1=F(f1),
        )
        .only(
            "question__id",
            "question__text",
            "question__gold_answer",
            "question__table_id",
            "question__table__canonical_csv",
        )
        .order_by("shown_recall", F("shown_f1").asc(nulls_first=True), "question_id")[:limit]
    )
    rendered: dict[str, str] = {}
    out = []
    for r in results:
        table = r.question.table
        if table.pk not in rendered:
            try:
                rendered[table.pk] = to_html(parse_table(table.canonical_csv))
            except TableFormatError:
                rendered[table.pk] = ""
        out.append(
            WrongAnswer(
                question_id=r.question.id,
                table_id=table.pk,
                text=r.question.text,
                prediction=r.prediction_head,
                gold_answer=r.question.gold_answer,
                recall=r.shown_recall,
                f1=r.shown_f1,
                table_html=rendered[table.pk],
                prediction_length=r.prediction_length or 0,
            )
        )
    return out


# The per-question figures as the downloads name them: every one with its rules version.
RESULT_EXPORT_FIGURES = tuple(
    f if f.endswith("2025_10") else f"{f}_2025_05" for f in RESULT_FIGURES
)


def results_export(*, submission: Submission, user: User) -> list[dict[str, Any]]:
    """Per-question results for the owner, under both rules versions side by side
    (``*_2025_05``, and ``*_2025_10`` with ``counted_2025_10``: null for vision, false for an
    answer the 2025-10 rules leave out). Predictions always; scores and gold answers only
    where the gold may be shown to this user (never for test-split questions, admins
    aside). Gold-pool questions are left out for everyone: a submission scored before a
    question joined the pool still holds its row."""
    rows = (
        QuestionResult.objects.filter(submission=submission)
        .exclude(question__in_gold_pool=True)
        .values_list(
            "question_id",
            "question__table__split",
            "question__gold_answer",
            "prediction",
            "answered",
            *RESULT_FIGURES,
        )
    )
    out = []
    for qid, split, gold, prediction, answered, *scores in rows.order_by("question_id"):
        visible = gold_answer_visible(user=user, split=split)
        out.append(
            {
                "question_id": qid,
                "split": split,
                "prediction": prediction,
                "answered": answered,
                "gold_answer": gold if visible else None,
                **{
                    k: (v if visible else None)
                    for k, v in zip(RESULT_EXPORT_FIGURES, scores, strict=True)
                },
            }
        )
    return out


# --- Comparisons and the regression --------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    a: Submission
    b: Submission
    rules: str
    metrics: dict[str, PairedComparison]


# The bootstrap takes about half a second of CPU for two full submissions, and the page is
# open to anonymous visitors: the same comparison asked again is read from the cache. It is
# the same answer (fixed seed) until either submission is scored again.
COMPARISON_CACHE_SECONDS = 600


def _comparison_key(a: Submission, b: Submission, rules: str) -> str:
    """The two submissions, each as last scored and edited, under these rules: a rescore or
    an edit of either asks for the bootstrap again."""
    for s in (a, b):
        if s.is_reported:
            raise ValueError(
                f"The row {s.model_name} is reported in the paper: the paper gives its "
                "figures, not its answer to each question, so the paired test cannot use it"
            )
    if rules != Rules.V2025_05 and Modality.VISION in (a.modality, b.modality):
        raise ValueError("Vision answers have only the 2025-05 rules")
    pair = ":".join(
        f"{s.pk}@{s.scored_at and s.scored_at.timestamp()}@{s.updated_at.timestamp()}"
        for s in (a, b)
    )
    return f"compare:{pair}:{rules}"


def comparison_cached(
    *, a: Submission, b: Submission, rules: str = DEFAULT_RULES
) -> Comparison | None:
    """The comparison if it was computed lately (see ``compare``), else None; ValueError
    when the two cannot be compared."""
    metrics = cache.get(_comparison_key(a, b, rules))
    return None if metrics is None else Comparison(a=a, b=b, rules=rules, metrics=metrics)


def compare(*, a: Submission, b: Submission, rules: str = DEFAULT_RULES) -> Comparison:
    """Paired bootstrap, under these rules, on the questions both submissions answered for the
    same gold and that both had counted (the 2025-10 rules leave some answers out)."""
    key = _comparison_key(a, b, rules)
    metrics = cache.get(key)
    if metrics is None:
        metrics = _compared(a, b, rules)
        cache.set(key, metrics, timeout=COMPARISON_CACHE_SECONDS)
    return Comparison(a=a, b=b, rules=rules, metrics=metrics)


def _compared(a: Submission, b: Submission, rules: str) -> dict[str, PairedComparison]:
    metrics = ["recall", "cc"]
    if a.modality == b.modality == "text":
        metrics = ["precision", "recall", "f1", "cc"]
    columns, counted = FIGURES_UNDER_RULES[rules]
    named = dict(zip(("precision", "recall", "f1", "cc"), columns, strict=True))
    scores: dict[int, dict[str, tuple[float, ...]]] = {}
    hidden: set[str] = set()
    for submission in (a, b):
        rows = (
            QuestionResult.objects.filter(counted, submission=submission)
            .exclude(question__in_gold_pool=True)
            .values_list("question_id", "question__table__split", *(named[m] for m in metrics))
        )
        scores[submission.pk] = {}
        for qid, split, *figures in rows:
            scores[submission.pk][qid] = tuple(float(v) for v in figures)
            if split == Split.TEST:
                hidden.add(qid)
    shared = sorted(set(scores[a.pk]) & set(scores[b.pk]))
    if not shared:
        raise ValueError("These two submissions share no scored questions")
    _check_comparison_discloses_nothing(shared, hidden, (a, b), scores, rules)
    results = {}
    for position, metric in enumerate(metrics):
        results[metric] = paired_bootstrap(
            [scores[a.pk][q][position] for q in shared],
            [scores[b.pk][q][position] for q in shared],
        )
    return results


def _check_comparison_discloses_nothing(
    shared: Collection[str],
    hidden: Collection[str],
    submissions: tuple[Submission, Submission],
    counted: dict[int, dict[str, Any]],
    rules: str,
) -> None:
    """Refuse a comparison on test-split answers unless its figures follow from figures
    already shown: each submission's overall figure under these rules, shown, on exactly the
    test-split answers compared. Then the mean differences are those of the overall figures;
    a comparison on any other set of test answers would be a new figure that, with the
    submissions' own ones, could rest on a few hidden questions (hctqa.core.disclosure)."""
    on_hidden = {q for q in shared if q in hidden}
    if not on_hidden:
        return
    withheld = dict(
        Score.objects.filter(submission__in=submissions, rules=rules).values_list(
            "submission_id", "withheld"
        )
    )
    for submission in submissions:
        mine = {q for q in counted[submission.pk] if q in hidden}
        hides = withheld.get(submission.pk, True)
        if mine != on_hidden or hides:
            why = " and its overall figure is withheld" if hides else ""
            raise ValueError(
                f"These two submissions share {len(on_hidden):,} counted test-split answers "
                f"under the {rules} rules, but {submission.model_name} has {len(mine):,}{why}: "
                "a comparison on other test answers than both overall figures would be a new "
                "figure, which with theirs could give single hidden answers away. The 2025-05 "
                "rules count every answer: compare under them."
            )


def comparable_submissions(*, demo: bool = False) -> QuerySet[Submission]:
    """The submissions the public boards rank: public, scored on all questions or the test
    split, with current scores. The demo rows (made-up tables) are listed only with
    ``demo``, and then alone, as on their board."""
    demo_rows = Q(data_scope=DataScope.DEMO)
    return (
        Submission.objects.filter(
            demo_rows if demo else ~demo_rows,
            track=QA_TRACK,
            kind=Kind.SUBMISSION,
            status=Status.SCORED,
            visibility=Visibility.PUBLIC,
            stale=False,
            split__in=BOARD_SPLITS,
        )
        .only("id", "model_name", "modality", "split", "data_scope", "table_format")
        .order_by("model_name", "id")
    )


# The public regression reads a row only when it answered nearly every question of its set
# and is no constant answer (a row answering "{1}" everywhere says nothing about tables).
REGRESSION_MIN_COVERAGE = 0.9
REGRESSION_MAX_SAME_ANSWER = 0.5


def regression_rows(submissions: QuerySet[Submission]) -> tuple[list[int], list[dict[str, Any]]]:
    """The ids of the submissions the property regression reads, and those it leaves out,
    each as {id, model_name, why}, in name order. Three queries."""
    coverage = dict(
        Score.objects.filter(submission__in=submissions, rules=Rules.V2025_05).values_list(
            "submission_id", "coverage"
        )
    )
    totals: Counter[int] = Counter()
    top: dict[int, tuple[int, str]] = {}
    given = (
        QuestionResult.objects.filter(submission__in=submissions, answered=True)
        .annotate(answer=Lower(Trim(Coalesce("prediction", Value(""), output_field=TextField()))))
        .values("submission_id", "answer")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in given:
        totals[row["submission_id"]] += row["n"]
        if row["n"] > top.get(row["submission_id"], (0, ""))[0]:
            top[row["submission_id"]] = (row["n"], row["answer"])
    admitted, left_out = [], []
    for submission in submissions.order_by("model_name", "id").only("id", "model_name"):
        share = coverage.get(submission.pk) or 0.0
        same, answer = top.get(submission.pk, (0, ""))
        same_share = same / totals[submission.pk] if totals[submission.pk] else 1.0
        why = ""
        if share < REGRESSION_MIN_COVERAGE:
            why = f"answered {share:.0%} of its questions"
        elif same_share > REGRESSION_MAX_SAME_ANSWER:
            shown = answer if len(answer) <= 30 else answer[:29] + "…"
            why = f"gave one answer, “{shown}”, to {same_share:.0%} of its questions"
        if why:
            left_out.append({"id": submission.pk, "model_name": submission.model_name, "why": why})
        else:
            admitted.append(submission.pk)
    return admitted, left_out


def current_regression() -> PropertyRegression | None:
    return PropertyRegression.objects.order_by("-computed_at").first()


# The normal quantile of a two-sided 95% interval.
Z_95 = 1.96


def coefficient_intervals(regression: PropertyRegression) -> list[dict[str, Any]]:
    """The regression's coefficients, each with its 95% interval (coefficient ± 1.96 standard
    errors)."""
    return [
        {**c, "low": c["coef"] - Z_95 * c["std_error"], "high": c["coef"] + Z_95 * c["std_error"]}
        for c in regression.coefficients
    ]


# --- Re-scoring ----------------------------------------------------------------------------


def rescores_recent(*, limit: int = 20) -> list[Rescore]:
    return list(Rescore.objects.order_by("-created_at", "-id")[:limit])


# --- Inference runs ------------------------------------------------------------------------


def can_manage_run(*, user: User, run: InferenceRun) -> bool:
    if not user.is_authenticated:
        return False
    return run.created_by_id == user.pk or user.has_perm("leaderboard.change_inferencerun")


def inference_runs_for(*, user: User) -> QuerySet[InferenceRun]:
    """The user's own runs; admins see everyone's (they share the GPU host)."""
    runs = InferenceRun.objects.select_related("created_by", "submission", "endpoint").defer(
        "config"
    )
    if not user.has_perm("leaderboard.change_inferencerun"):
        runs = runs.filter(created_by=user)
    return runs.order_by("-created_at", "-id")


def inference_run_for_viewer(*, run_id: int, user: User) -> InferenceRun:
    """A run for its owner and admins; a 404 for anyone else, so runs do not reveal that
    they exist."""
    try:
        run = InferenceRun.objects.select_related("created_by", "submission", "endpoint").get(
            pk=run_id
        )
    except InferenceRun.DoesNotExist:
        raise Http404("No such inference run") from None
    if not can_manage_run(user=user, run=run):
        raise Http404("No such inference run")
    return run


def inference_run_problems(*, run: InferenceRun, limit: int = 5) -> list[InferenceResponse]:
    """The latest questions that got no answer, with the reason (never a gold answer)."""
    return list(
        InferenceResponse.objects.filter(run=run)
        .exclude(status=ResponseStatus.ANSWERED)
        .exclude(question__in_gold_pool=True)
        .select_related("item")
        .only("question_id", "item__item_id", "status", "error", "attempts", "created_at")
        .order_by("-created_at", "-id")[:limit]
    )


# What the public may read about how a submission's answers were produced: everything
# but where the endpoint lives and what it is called.
_PRIVATE_CONFIG_KEYS = frozenset({"base_url", "api_key_env", "registered_endpoint", "concurrency"})


def answers_run(*, submission: Submission) -> InferenceRun | None:
    """The inference run on this platform that produced the submission's answers, if one
    did (an upload has none)."""
    return InferenceRun.objects.filter(submission=submission).first()


def inference_recipe(*, run: InferenceRun | None) -> dict[str, Any] | None:
    """The configuration of the run that produced a submission, without where it ran."""
    if run is None:
        return None
    return {k: v for k, v in run.config.items() if k not in _PRIVATE_CONFIG_KEYS}


# --- The same model, several rows --------------------------------------------------------------


@dataclass(frozen=True)
class NamedAlike:
    """One row of a board under a model's name: its 2025-05 score (the rules the paper's rows
    have) and its rank there (ties share one)."""

    submission: Submission
    score: Score
    rank: int
    from_run: bool  # its answers came from an inference run on this platform


def same_model_rows(*, submission: Submission) -> list[NamedAlike]:
    """The rows of the submission's public board under the same model name (any case), itself
    included, highest recall first: empty unless it is on that board beside another. The
    paper's Table 1 row and a computed row of one model differ; the model page says why."""
    if submission.split not in BOARD_SPLITS:
        return []
    filters = BoardFilters(
        modality=submission.modality,
        split=submission.split,
        rules=DEFAULT_RULES,
        data_scope=submission.data_scope,
    )
    rows = list(
        _board_rows(filters)
        .filter(submission__model_name__iexact=submission.model_name)
        .select_related("submission__owner", "submission__release")
        .order_by(F("recall").desc(nulls_last=True), "submission_id")
    )
    if len(rows) < 2 or all(r.submission_id != submission.pk for r in rows):
        return []
    board = _board_rows(filters)
    runs = set(
        InferenceRun.objects.filter(submission__in=[r.submission_id for r in rows]).values_list(
            "submission_id", flat=True
        )
    )
    return [
        NamedAlike(
            row.submission,
            row,
            board.filter(recall__gt=row.recall).count() + 1 if row.recall is not None else 0,
            row.submission_id in runs,
        )
        for row in rows
    ]


# --- The tracks beside QA ------------------------------------------------------------------

# A track's board ranks the test split: the items whose gold is hidden.
TRACK_BOARD_SPLIT = EvalSplit.TEST
GROUP_SOURCE = "source:"
GROUP_PROPERTY = "property:"


@dataclass(frozen=True)
class TrackBoardFilters:
    """One track's board: its mode (extraction), the figures shown (``group``: all items,
    ``source:<code>`` or ``property:<code>``), search, weights, and the sort (a figure's
    name, ``model`` or ``submitted``; ``-`` first for descending)."""

    track: str
    mode: str = ""
    group: str = ""
    weights: str = ""
    search: str = ""
    sort: str = ""


@dataclass
class TrackBoardRow:
    submission: Submission
    score: TrackScore
    n: int  # the items the figures shown rest on
    figures: dict[str, float | None]
    intervals: dict[str, list[float]]  # overall only
    by_source: dict[str, float | None]  # the primary figure per item source
    withheld: bool
    rank: int = 0


def _group_figures(score: TrackScore, group: str) -> tuple[int, dict[str, Any], bool] | None:
    """(n, figures, withheld) of one group of a score, or None when it has none."""
    if not group:
        return score.n, score.figures, score.withheld
    kind, _, key = group.partition(":")
    rows = score.by_source if kind == "source" else score.breakdowns.get("table_properties", [])
    for row in rows:
        if row.get("key") == key:
            return row["n"], row["figures"], row["withheld"]
    return None


def _track_board_scores(filters: TrackBoardFilters) -> QuerySet[TrackScore]:
    scores = TrackScore.objects.filter(
        submission__track=filters.track,
        submission__mode=filters.mode,
        submission__split=TRACK_BOARD_SPLIT,
        submission__kind__in=[Kind.SUBMISSION, Kind.BASELINE],
        submission__status=Status.SCORED,
        submission__visibility=Visibility.PUBLIC,
        submission__stale=False,
    )
    if filters.weights:
        scores = scores.filter(submission__weights=filters.weights)
    if filters.search:
        text = filters.search
        scores = scores.filter(
            Q(submission__model_name__icontains=text)
            | Q(submission__organisation__icontains=text)
            | Q(submission__description__icontains=text)
        )
    return scores.select_related("submission").defer(
        "submission__description", "submission__gold_claims", "submission__predictions"
    )


def track_board(*, filters: TrackBoardFilters) -> list[TrackBoardRow]:
    """The ranked rows of a track's public board: the public submissions and the platform's
    baselines scored on the test split's items of the track and mode, with current scores,
    showing the figures of all items or of one group. Sorted in Python (a board holds
    hundreds of rows at most, and its figures are in JSON): missing figures last whichever
    the direction. One query."""
    info = track_info(filters.track)
    primary = info.primary
    rows = []
    for score in _track_board_scores(filters):
        found = _group_figures(score, filters.group)
        if found is None:
            continue
        n, figures, withheld = found
        rows.append(
            TrackBoardRow(
                submission=score.submission,
                score=score,
                n=n,
                figures=figures,
                intervals={} if filters.group else score.intervals,
                by_source={s["key"]: s["figures"].get(primary) for s in score.by_source},
                withheld=withheld,
            )
        )
    sort = filters.sort or f"-{primary}"
    descending, column = sort.startswith("-"), sort.lstrip("-")

    def value(row: TrackBoardRow) -> Any:
        if column == "model":
            return row.submission.model_name.lower()
        if column == "submitted":
            return row.submission.created_at
        return row.figures.get(column)

    present = [r for r in rows if value(r) is not None]
    present.sort(key=lambda r: (value(r), -r.submission.pk), reverse=descending)
    missing = sorted(
        (r for r in rows if value(r) is None),
        key=lambda r: (r.submission.model_name.lower(), r.submission.pk),
    )
    ranked = present + missing
    for rank, row in enumerate(ranked, start=1):
        row.rank = rank
    return ranked


def track_board_sorts(info: TrackInfo, mode: str) -> list[str]:
    columns = [f.name for f in info.figures(mode)] + ["model", "submitted"]
    return columns + [f"-{c}" for c in columns]


def track_board_sources(rows: list[TrackBoardRow]) -> list[str]:
    """The item sources the board's rows have figures for, in name order."""
    return sorted({key for row in rows for key in row.by_source})


def track_being_rescored(*, filters: TrackBoardFilters) -> list[Submission]:
    """Public submissions of this board waiting to be scored again (their items changed)."""
    return list(
        Submission.objects.filter(
            track=filters.track,
            mode=filters.mode,
            split=TRACK_BOARD_SPLIT,
            kind__in=[Kind.SUBMISSION, Kind.BASELINE],
            visibility=Visibility.PUBLIC,
            stale=True,
            status__in=[Status.QUEUED, Status.SCORING],
        )
        .only("id", "model_name", "organisation", "status", "progress", "split", "track")
        .order_by("model_name", "id")[:BEING_RESCORED_SHOWN]
    )


def track_score_for_viewer(*, submission: Submission) -> TrackScore | None:
    """A track submission's figures (withheld ones are null for everyone already)."""
    return TrackScore.objects.filter(submission=submission).first()


def item_results_export(*, submission: Submission, user: User) -> list[dict[str, Any]]:
    """Per-item results for the owner: each item's split, reason and message (why it scored
    0: no prediction, an unreadable one, a limit its SQL broke); its figures and detail
    (an executed result, relation counts) only where the item's gold is public to this user.
    A test item's figures would say whether a prediction matches the hidden gold, and its
    executed result could hold the hidden table's values."""
    rows = (
        ItemResult.objects.filter(submission=submission)
        .select_related("item")
        .only("figures", "reason", "message", "detail", "item__item_id", "item__split")
        .order_by("item__item_id")
    )
    out = []
    for r in rows:
        visible = gold_answer_visible(user=user, split=r.item.split)
        out.append(
            {
                "id": r.item.item_id,
                "split": r.item.split,
                "reason": r.reason,
                "message": r.message,
                "figures": r.figures if visible else None,
                "detail": r.detail if visible else None,
            }
        )
    return out
