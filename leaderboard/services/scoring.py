"""Scoring a submission: under every rules version that applies, in one pass, with its
breakdowns (those the public may see marked) and the question set it was scored on.

``ScoringContext`` holds what scoring reads from the dataset. A task that scores one
submission makes one; a re-scoring of a thousand shares one, so the gold answers, the
question facts and the digests are read once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from dataset.models import QuestionOrigin
from hctqa.core import taxonomy
from hctqa.core.disclosure import DISCLOSURE_MARGIN, disclosed
from hctqa.core.predictions import PredictionsError, read_predictions
from hctqa.core.scoring import Evaluation, Summary, answer_key, evaluate_all, source_of
from hctqa.core.snapshots import question_set_sha256
from hctqa.core.stats import group_means
from hctqa.core.tracks.shared import read_submission
from leaderboard import selectors
from leaderboard.jobs import SUBMISSION_SCORING
from leaderboard.models import (
    BOARD_SOURCES,
    RESULT_FIGURES,
    ItemResult,
    QuestionResult,
    Score,
    Status,
    Submission,
    TrackScore,
)
from leaderboard.services.notices import submission_outcome_notify
from leaderboard.services.submissions import (
    check_answers_every_test_question,
    check_matches_split,
    check_most_test_answers_count,
    enqueue_regression,
)
from plumbing import jobs
from plumbing.heartbeat import EVERY_SECONDS
from releases.models import Release
from releases.selectors import release_for_digest
from tracks import selectors as track_selectors
from tracks.models import TrackItem
from tracks.registry import track
from tracks.services.scoring import (
    TrackOutcome,
    check_covers_items,
    check_matches_items,
    score_items,
)

logger = logging.getLogger(__name__)


class ScoringContext:
    """The gold answers, question facts and digests scoring reads, each read once."""

    def __init__(self) -> None:
        self._gold: dict[tuple[str, str], dict[str, str]] = {}
        self._releases: dict[tuple[str, str], Release | None] = {}
        self._digests: dict[tuple[str, str], str] = {}
        self._hidden: dict[tuple[str, str], frozenset[str]] = {}
        self._facts: dict[str, selectors.QuestionFacts] = {}
        self._known: set[str] | None = None
        self._test: frozenset[str] | None = None
        self._track_rows: dict[tuple[str, str, str], list[TrackItem]] = {}
        self._track_ids: dict[str, set[str]] = {}

    def gold(self, split: str, data_scope: str) -> dict[str, str]:
        key = (split, data_scope)
        if key not in self._gold:
            self._gold[key] = selectors.gold_answers(split=split, data_scope=data_scope)
        return self._gold[key]

    def digest(self, split: str, data_scope: str) -> str:
        key = (split, data_scope)
        if key not in self._digests:
            self._digests[key] = question_set_sha256(self.gold(split, data_scope))
        return self._digests[key]

    def release(self, split: str, data_scope: str) -> Release | None:
        key = (split, data_scope)
        if key not in self._releases:
            self._releases[key] = release_for_digest(
                split=split, data_scope=data_scope, digest=self.digest(split, data_scope)
            )
        return self._releases[key]

    def known_ids(self) -> set[str]:
        # Answers to questions that joined the gold pool since the upload are ignored, not
        # refused: the file was checked when it came in.
        if self._known is None:
            self._known = selectors.known_question_ids(include_gold_pool=True)
        return self._known

    def test_ids(self) -> frozenset[str]:
        if self._test is None:
            self._test = frozenset(selectors.test_question_ids())
        return self._test

    def hidden(self, split: str, data_scope: str) -> frozenset[str]:
        """The questions scored for this split whose gold answers are hidden (test split)."""
        key = (split, data_scope)
        if key not in self._hidden:
            gold = self.gold(split, data_scope)
            if selectors.includes_test_questions(split):
                self._hidden[key] = frozenset(q for q in gold if q in self.test_ids())
            else:
                self._hidden[key] = frozenset()
        return self._hidden[key]

    def track_rows(self, track_slug: str, split: str, mode: str) -> list[TrackItem]:
        """A track's items of a split and mode, as scoring reads them."""
        key = (track_slug, split, mode)
        if key not in self._track_rows:
            self._track_rows[key] = track_selectors.scoring_rows(
                track=track_slug, split=split, mode=mode
            )
        return self._track_rows[key]

    def track_ids(self, track_slug: str) -> set[str]:
        if track_slug not in self._track_ids:
            self._track_ids[track_slug] = track_selectors.item_ids(track=track_slug)
        return self._track_ids[track_slug]

    def facts(self, question_ids: Collection[str]) -> dict[str, selectors.QuestionFacts]:
        missing = [q for q in question_ids if q not in self._facts]
        if missing:
            self._facts.update(selectors.question_facts(question_ids=missing))
        return {q: self._facts[q] for q in question_ids if q in self._facts}


# --- One submission ------------------------------------------------------------------------


def _set_progress(submission_id: int, percent: int) -> None:
    Submission.objects.filter(pk=submission_id, status=Status.SCORING).update(progress=percent)


def _fail(
    submission_id: int, reason: str, attempt: int | None = None, *, tell_owner: bool = True
) -> None:
    if attempt is None:
        rows = Submission.objects.filter(pk=submission_id, status=Status.SCORING)
    else:
        rows = jobs.mine(SUBMISSION_SCORING, submission_id, attempt)
    with transaction.atomic():
        failed = rows.update(status=Status.FAILED, error=reason, progress=100)
        if failed and tell_owner:
            submission_outcome_notify(submission_id=submission_id)


# How often scoring writes its heartbeat; SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS is well above.
HEARTBEAT_EVERY_SECONDS = EVERY_SECONDS


def claim(submission_id: int) -> int | None:
    """Move a queued submission to scoring; the attempt number it gets identifies this run
    (a requeued submission's next run gets another), or None if it was not queued."""
    attempt = jobs.claim(SUBMISSION_SCORING, submission_id)
    return None if attempt is None else int(attempt)


def submission_score(*, submission_id: int) -> str:
    """Score a queued submission. Safe to run twice: only the run that moves it from queued to
    scoring does the work, and only that run (its attempt) may save or fail it. Returns what
    happened, for the task log."""
    attempt = claim(submission_id)
    if attempt is None:
        return "not queued"
    return score_claimed(submission_id, attempt, ScoringContext())


def score_claimed(
    submission_id: int, attempt: int, context: ScoringContext, *, in_batch: bool = False
) -> str:
    """Score a submission this caller has claimed (as ``attempt``), and save or fail it.
    ``in_batch``: one of many scored together, whose caller refreshes the regression once
    at the end and shows progress by the batch."""
    submission = Submission.objects.get(pk=submission_id)
    # A re-scoring of many (after the questions changed) is not the owner's doing: it tells
    # no one.
    tell = not in_batch
    score = _score if submission.is_qa else _score_track
    try:
        # A long scoring keeps its claim; a dead worker's submission is requeued within a
        # minute.
        with jobs.heartbeat(
            SUBMISSION_SCORING, submission_id, attempt, every=HEARTBEAT_EVERY_SECONDS
        ):
            score(submission, attempt, context, in_batch=in_batch)
    except PredictionsError as exc:
        _fail(submission_id, str(exc), attempt, tell_owner=tell)
        return "failed: " + str(exc)
    except FileNotFoundError:
        _fail(submission_id, "The predictions file is missing", attempt, tell_owner=tell)
        return "failed: file missing"
    except SoftTimeLimitExceeded:
        limit = settings.SUBMISSION_SCORING_TIME_LIMIT
        _fail(
            submission_id,
            f"Scoring took longer than the {limit:,} s limit and was stopped; an admin can "
            "look into the file and re-score it",
            attempt,
            tell_owner=tell,
        )
        return "failed: time limit"
    except DatabaseError:
        # Transient: put it back in the queue for the task's retry (or the sweeper).
        jobs.mine(SUBMISSION_SCORING, submission_id, attempt).update(
            status=Status.QUEUED, queued_at=timezone.now()
        )
        raise
    except Exception:
        logger.exception("scoring submission %s failed", submission_id)
        _fail(
            submission_id,
            "Scoring failed because of an internal error; an admin can re-score it",
            attempt,
            tell_owner=tell,
        )
        return "failed: internal error"
    return "scored"


def _score(
    submission: Submission, attempt: int, context: ScoringContext, *, in_batch: bool
) -> None:
    submission_id = submission.pk
    split, scope = submission.split, submission.data_scope
    if not submission.predictions:
        raise PredictionsError("The predictions file is missing")
    with submission.predictions.open("rb") as handle:
        # Checked when it was uploaded (the answer limit included); read again as a stream.
        read = read_predictions(
            handle, max_bytes=settings.SUBMISSION_MAX_BYTES, known_ids=context.known_ids()
        )
    gold = context.gold(split, scope)
    if not gold:
        raise PredictionsError(
            f"There are no {submission.get_data_scope_display().lower()} questions in "
            f"the {submission.get_split_display().lower()} split to score against"
        )
    check_matches_split(read.answers, split=split, data_scope=scope, gold_ids=gold)
    hidden = context.hidden(split, scope)
    # Checked at upload; checked again because the test questions may have changed since.
    check_answers_every_test_question(read.answers, hidden, stored=True)
    check_most_test_answers_count(read.answers, hidden, submission.modality, stored=True)
    if not in_batch:
        _set_progress(submission_id, 30)
    # Null answers stay None: the empty answer under 2025-05, left out under 2025-10.
    evaluations = evaluate_all(
        gold, read.answers, submission.modality, model_name=submission.model_name
    )
    if not in_batch:
        _set_progress(submission_id, 60)
    facts = context.facts(gold)
    disclosures = disclose(evaluations, facts, hidden)
    breakdowns = compute_breakdowns(evaluations, facts, hidden=hidden, disclosures=disclosures)
    claims = gold_claims_check(read.claimed_gold, gold, test_ids=context.test_ids())
    _save_scores(
        submission_id,
        attempt,
        evaluations,
        read.answers,
        breakdowns,
        disclosures,
        claims,
        digest=context.digest(split, scope),
        tables=len({f.table_id for f in facts.values()}),
        release=context.release(split, scope),
        refresh_regression=not in_batch,
        tell_owner=not in_batch,
    )


def _score_track(
    submission: Submission, attempt: int, context: ScoringContext, *, in_batch: bool
) -> None:
    """Score a submission to a track beside QA on the track's items (tracks.services.scoring),
    and keep its figures and per-item results."""
    info = track(submission.track)
    split, mode = submission.split, submission.mode
    if not submission.predictions:
        raise PredictionsError("The predictions file is missing")
    rows = context.track_rows(info.slug, split, mode)
    with submission.predictions.open("rb") as handle:
        # Checked when it was uploaded; read again as a stream, with the same limits.
        predictions = read_submission(
            handle,
            track=info.slug,  # type: ignore[arg-type]
            known_ids=context.track_ids(info.slug),
            max_bytes=settings.TRACK_SUBMISSION_MAX_BYTES,
        )
    check_matches_items(
        predictions, info=info, split=split, mode=mode, item_ids={r.item_id for r in rows}
    )
    # Checked at upload; checked again because the test items may have changed since. The
    # platform's own baselines are exempt: nobody probes the gold through them.
    if not submission.is_baseline:
        hidden = {r.item_id for r in rows if r.split == "test"}
        check_covers_items(predictions, hidden, stored=True)
    if not in_batch:
        _set_progress(submission.pk, 30)
    outcome = score_items(
        info=info,
        mode=mode,
        split=split,
        predictions=predictions,
        model_name=submission.model_name,
        rows=rows,
    )
    if not in_batch:
        _set_progress(submission.pk, 80)
    _save_track_scores(
        submission.pk,
        attempt,
        outcome,
        {r.item_id: r.pk for r in rows},
        tables=len({r.table_key for r in rows}),
        refresh_regression=False,
        tell_owner=not in_batch,
    )


def _still_ours(submission_id: int, attempt: int) -> bool:
    """Whether this scoring (``attempt``) still holds the submission, locked until the
    transaction ends: the sweeper, a delete or a later attempt may have moved on meanwhile."""
    return jobs.mine(SUBMISSION_SCORING, submission_id, attempt).select_for_update().exists()


@transaction.atomic
def _save_track_scores(
    submission_id: int,
    attempt: int,
    outcome: TrackOutcome,
    item_pks: Mapping[str, int],
    *,
    tables: int,
    refresh_regression: bool,
    tell_owner: bool,
) -> None:
    if not _still_ours(submission_id, attempt):
        return
    ItemResult.objects.filter(submission_id=submission_id).delete()
    ItemResult.objects.bulk_create(
        [
            ItemResult(
                submission_id=submission_id,
                item_id=item_pks[r.id],
                figures=dict(r.figures),
                reason=r.reason,
                message=r.message[:2000],
                detail=dict(r.detail),
            )
            for r in outcome.results
        ],
        batch_size=1000,
    )
    TrackScore.objects.update_or_create(
        submission_id=submission_id,
        defaults={
            "n": outcome.n,
            "figures": outcome.figures,
            "intervals": outcome.intervals,
            "by_source": outcome.by_source,
            "breakdowns": outcome.breakdowns,
            "reasons": outcome.reasons,
            "withheld": outcome.withheld,
        },
    )
    Submission.objects.filter(pk=submission_id).update(
        status=Status.SCORED,
        progress=100,
        scored_at=timezone.now(),
        question_set_sha256=outcome.digest,
        question_set_tables=tables,
        release=None,
        stale=False,
    )
    if tell_owner:
        submission_outcome_notify(submission_id=submission_id)
    if refresh_regression:
        enqueue_regression()


# How many question ids a gold-claims warning names.
GOLD_CLAIM_EXAMPLES = 5


def gold_claims_check(
    claimed: Mapping[str, str], gold: Mapping[str, str], *, test_ids: Collection[str]
) -> dict[str, Any]:
    """Compare a file's own gold answers (``gt``) with the platform's, on the questions
    scored, spacing aside. Never on a test-split question (``test_ids``): a count of
    mismatches would tell a researcher whether a guessed ``gt`` is the hidden gold answer.
    Empty when the file gives no ``gt`` for a scored question."""
    compared = differ = hidden = 0
    examples: list[str] = []
    for qid in sorted(claimed):
        if qid not in gold:
            continue
        if qid in test_ids:
            hidden += 1
            continue
        compared += 1
        if " ".join(claimed[qid].split()) != " ".join(gold[qid].split()):
            differ += 1
            if len(examples) < GOLD_CLAIM_EXAMPLES:
                examples.append(qid)
    if not compared and not hidden:
        return {}
    return {"compared": compared, "differ": differ, "examples": examples, "not_compared": hidden}


def _score_row(
    submission_id: int,
    evaluation: Evaluation,
    breakdowns: dict[str, Any],
    disclosure: Disclosure,
) -> Score:
    """The figures as kept: those withheld (``disclosure``) are never stored, so no page,
    download or API can show them, to the owner either."""
    overall = evaluation.overall
    ci = overall.ci
    figures = {}
    if not disclosure.overall:
        figures = {
            "precision": overall.precision,
            "precision_low": ci["precision"].low if "precision" in ci else None,
            "precision_high": ci["precision"].high if "precision" in ci else None,
            "recall": overall.recall,
            "recall_low": ci["recall"].low,
            "recall_high": ci["recall"].high,
            "f1": overall.f1,
            "cc": overall.cc,
            "cc_low": ci["cc"].low,
            "cc_high": ci["cc"].high,
        }
    shown = {s: v for s, v in evaluation.by_source.items() if not disclosure.sources.get(s)}
    return Score(
        submission_id=submission_id,
        rules=evaluation.rules,
        n_questions=overall.n,
        excluded=evaluation.excluded,
        coverage=evaluation.coverage,
        **figures,
        **{f"recall_{s}": shown[s].recall if s in shown else None for s in BOARD_SOURCES},
        by_source={
            source: summary.as_dict() if source in shown else _withheld_summary(summary)
            for source, summary in evaluation.by_source.items()
        },
        breakdowns=breakdowns,
        withheld=disclosure.overall,
    )


def _withheld_summary(summary: Summary) -> dict[str, Any]:
    """A source's figures withheld: only how many answers it counted is kept."""
    figures = summary.as_dict()
    return {
        **{k: None for k in figures if k not in ("n", "ci")},
        "n": summary.n,
        "ci": {},
        "withheld": True,
    }


@transaction.atomic
def _save_scores(
    submission_id: int,
    attempt: int,
    evaluations: Mapping[str, Evaluation],
    answers: Mapping[str, str | None],
    breakdowns: Mapping[str, dict[str, Any]],
    disclosures: Mapping[str, Disclosure],
    gold_claims: dict[str, Any],
    *,
    digest: str,
    tables: int,
    release: Release | None,
    refresh_regression: bool = True,
    tell_owner: bool = True,
) -> None:
    if not _still_ours(submission_id, attempt):
        return
    old = evaluations["2025-05"]
    new = evaluations.get("2025-10")
    rows = []
    for qid, s in old.scores.items():
        counted = new.scores.get(qid) if new is not None else None
        rows.append(
            (
                submission_id,
                qid,
                answers.get(qid, ""),
                qid in answers,
                s.precision,
                s.recall,
                s.f1,
                bool(s.cc),
                None if new is None else counted is not None,
                counted.precision if counted else None,
                counted.recall if counted else None,
                counted.f1 if counted else None,
                bool(counted.cc) if counted else None,
            )
        )
    QuestionResult.objects.filter(submission_id=submission_id).delete()
    _insert_results(rows)
    Score.objects.filter(submission_id=submission_id).delete()
    Score.objects.bulk_create(
        [
            _score_row(submission_id, ev, breakdowns[rules], disclosures[rules])
            for rules, ev in evaluations.items()
        ]
    )
    Submission.objects.filter(pk=submission_id).update(
        status=Status.SCORED,
        progress=100,
        scored_at=timezone.now(),
        gold_claims=gold_claims,
        release=release,
        question_set_sha256=digest,
        question_set_tables=tables,
        stale=False,
    )
    if tell_owner:
        submission_outcome_notify(submission_id=submission_id)
    if refresh_regression:
        enqueue_regression()


_RESULT_COLUMNS = ("submission", "question", "prediction", "answered", *RESULT_FIGURES)


def _insert_results(rows: list[tuple[Any, ...]]) -> None:
    """Insert per-question results, one tuple per row in ``_RESULT_COLUMNS`` order. Plain
    numbers, strings and booleans go to the database as they are: bulk_create would spend
    more time preparing a thousand rows than scoring them (a re-scoring does a thousand
    submissions)."""
    meta = QuestionResult._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(f).column) for f in _RESULT_COLUMNS)
    places = ", ".join(["%s"] * len(_RESULT_COLUMNS))
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({places})"  # noqa: S608
    with connection.cursor() as cursor:
        for start in range(0, len(rows), 2000):
            cursor.executemany(sql, rows[start : start + 2000])


# --- Breakdowns ----------------------------------------------------------------------------


def _groups(
    facts: Mapping[str, selectors.QuestionFacts],
) -> dict[str, tuple[dict[str, list[str]], dict[str, str]]]:
    """The question ids of each group, in display order, with the groups' labels: per table
    property, per query property (human-written questions only, the only ones labelled) and
    per synthetic template."""
    by_table: dict[str, list[str]] = defaultdict(list)
    by_query: dict[str, list[str]] = defaultdict(list)
    by_template: dict[str, list[str]] = defaultdict(list)
    for qid, fact in facts.items():
        for code, value in (fact.table_properties or {}).items():
            if value is True:
                by_table[code].append(qid)
        if fact.origin == QuestionOrigin.HUMAN:
            for code, value in (fact.query_properties or {}).items():
                if value is True:
                    by_query[code].append(qid)
        if fact.template_number is not None:
            by_template[str(fact.template_number)].append(qid)

    def in_taxonomy(
        groups: dict[str, list[str]], tax: taxonomy.Taxonomy
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        labels = {}
        for p in tax.properties:
            parent = tax.get(p.parent).label + ": " if p.parent else ""
            labels[p.code] = parent + p.label
        return {p.code: groups[p.code] for p in tax.properties if p.code in groups}, labels

    templates = dict(sorted(by_template.items(), key=lambda kv: int(kv[0])))
    return {
        "table_properties": in_taxonomy(by_table, taxonomy.TABLE_PROPERTIES),
        "query_properties": in_taxonomy(by_query, taxonomy.QUERY_PROPERTIES),
        "templates": (templates, {k: f"Template {k}" for k in templates}),
    }


@dataclass(frozen=True)
class Disclosure:
    """Which of one rules version's figures on hidden questions are withheld: the overall
    one, each source's and each breakdown group's (by kind and key)."""

    overall: bool
    sources: dict[str, bool]
    groups: dict[tuple[str, str], bool]


def _no_value(key: frozenset[str] | str) -> bool:
    """Whether an answer's key is the empty answer's: no value read from it. It scores 0
    unless the gold answer holds an empty value (3 of the release's 9,835 questions), and
    readers may know which answers are empty: an
    inference run leaves a prompt over the model's context empty, and which prompts those
    are follows from the public prompts, the model's tokenizer and the context length shown
    with the row. So an empty answer is no unknown: with 287 of gemma's 992 official test
    answers left empty as a 2,048-token run leaves them, the figures kept with them counted
    as unknowns gave one question's score once the empty ones were subtracted."""
    return key == "" or (isinstance(key, frozenset) and key <= {""})


def _unknowns(
    evaluations: Mapping[str, Evaluation], hidden: Collection[str]
) -> dict[tuple[str, str], dict[str, tuple[str, int]]]:
    """The unknown each counted hidden answer is, by rules version and by what it feeds
    ("averages": the overall figure and the breakdowns; "sources"), as (question, n): the
    n-th distinct thing the question's score depends on (answer_key). The two versions share
    an unknown where they read the same values from an answer, and so does a GPT-named
    model's split and unsplit 2025-10 score. An empty answer is none (``_no_value``)."""
    seen: dict[str, list[Any]] = defaultdict(list)
    out: dict[tuple[str, str], dict[str, tuple[str, int]]] = {}
    for rules, evaluation in evaluations.items():
        split = evaluation.unsplit_scores is not None
        for part, split_labels in (("averages", split), ("sources", False)):
            if part == "sources" and not split:
                out[rules, part] = out[rules, "averages"]
                continue
            unknowns = {}
            for q in hidden:
                if q not in evaluation.scores:
                    continue
                key = answer_key(
                    evaluation.predictions.get(q, ""),
                    evaluation.modality,
                    rules=rules,  # type: ignore[arg-type]
                    split_labels=split_labels,
                )
                if _no_value(key):
                    continue  # known to score nothing: a reader subtracts it (``_no_value``)
                keys = seen[q]
                if key not in keys:
                    keys.append(key)
                unknowns[q] = (q, keys.index(key))
            out[rules, part] = unknowns
    return out


# ("overall", rules), ("source", rules, source) or ("group", rules, kind, key).
Figure = tuple[str, ...]


def disclosure_candidates(
    evaluations: Mapping[str, Evaluation],
    facts: Mapping[str, selectors.QuestionFacts],
    hidden: Collection[str],
) -> list[tuple[Figure, set[tuple[str, int]]]]:
    """Every figure a submission's pages, API and exports may show on hidden (test-split)
    answers, with the unknowns it sums, in priority order: the overall figures, then the
    sources' (the board's first, largest to smallest), then the breakdown groups' in display
    order; each under 2025-05 before 2025-10."""
    unknowns = _unknowns(evaluations, hidden)
    versions = list(evaluations)
    # The board's sources first, largest to smallest; any other after them.
    found = {s for ev in evaluations.values() for s in ev.by_source}
    sources = [s for s in BOARD_SOURCES if s in found] + sorted(found - set(BOARD_SOURCES))
    out: list[tuple[Figure, set[tuple[str, int]]]] = []

    def offer(figure: Figure, part: str, members: Collection[str]) -> None:
        known = unknowns[figure[1], part]
        out.append((figure, {known[q] for q in members if q in known}))

    for rules in versions:
        offer(("overall", rules), "averages", hidden)
    for source in sources:
        members = [q for q in hidden if source_of(q) == source]
        for rules in versions:
            offer(("source", rules, source), "sources", members)
    for kind, (by_key, _) in _groups(facts).items():
        for key, members in by_key.items():
            for rules in versions:
                offer(("group", rules, kind, key), "averages", members)
    return out


def disclose(
    evaluations: Mapping[str, Evaluation],
    facts: Mapping[str, selectors.QuestionFacts],
    hidden: Collection[str],
) -> dict[str, Disclosure]:
    """Which figures on hidden (test-split) answers are withheld, under every rules version
    at once (hctqa.core.disclosure): no combination of those shown may rest on 1 to
    DISCLOSURE_MARGIN hidden questions. The figures are offered in the priority order of
    ``disclosure_candidates``."""
    candidates = disclosure_candidates(evaluations, facts, hidden)
    shown = dict(
        zip((f for f, _ in candidates), disclosed([u for _, u in candidates]), strict=True)
    )
    return {
        rules: Disclosure(
            overall=not shown["overall", rules],
            sources={f[2]: not ok for f, ok in shown.items() if f[:2] == ("source", rules)},
            groups={f[2:]: not ok for f, ok in shown.items() if f[:2] == ("group", rules)},
        )
        for rules in evaluations
    }


def compute_breakdowns(
    evaluations: Mapping[str, Evaluation],
    facts: Mapping[str, selectors.QuestionFacts],
    *,
    hidden: Collection[str] = frozenset(),
    disclosures: Mapping[str, Disclosure] | None = None,
) -> dict[str, dict[str, Any]]:
    """Mean recall per group, under each rules version (over the answers that version
    counts), by rules version. Every group is listed; on questions with hidden gold
    (``hidden``) those ``disclose`` withholds are marked ``withheld`` and keep no figure."""
    if disclosures is None:
        disclosures = disclose(evaluations, facts, hidden)
    groups = _groups(facts)
    out: dict[str, dict[str, Any]] = {}
    for rules, evaluation in evaluations.items():
        recall = {qid: s.recall for qid, s in evaluation.scores.items()}
        withheld = disclosures[rules].groups
        figures: dict[str, Any] = {}
        for kind, (members, labels) in groups.items():
            rows = []
            for group in group_means(recall, members, labels):
                hide = bool(hidden) and withheld.get((kind, group.key), False)
                rows.append(
                    {
                        "key": group.key,
                        "label": group.label,
                        "recall": None if hide else group.mean,
                        "n": group.n,
                        "withheld": hide,
                    }
                )
            figures[kind] = rows
        figures["margin"] = DISCLOSURE_MARGIN if hidden else 0
        out[rules] = figures
    return out
