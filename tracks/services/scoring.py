"""Scoring predictions on a track's items: the core scorer, then what a board shows of it:
each figure with its bootstrap interval, the figures per item source and per table property,
and which of them the disclosure rule withholds (``hctqa.core.disclosure``).

Nothing here stores anything: the scoring worker (``leaderboard.services.scoring``) saves
the outcome of a submission, ``score_track`` prints one, the baselines are scored as
submissions. The submitted SQL runs in the core's sandbox (a child process) in whichever
process calls this: the scoring worker or a command, never a web request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings

from dataset.models import Question, Split
from dataset.selectors.prompts import prompt_questions
from hctqa.core import taxonomy
from hctqa.core.disclosure import DISCLOSURE_MARGIN, disclosed
from hctqa.core.predictions import PredictionsError, read_predictions
from hctqa.core.scoring import evaluate_all
from hctqa.core.tracks.figures import aggregate, intervals
from hctqa.core.tracks.shared import Item, ItemResult, Scorecard, read_submission
from hctqa.core.wording import counted
from tracks import selectors
from tracks.models import TrackItem
from tracks.registry import TrackInfo, score

# How many missing item ids a refusal names.
MISSING_EXAMPLES = 5


def _rounded(figures: Mapping[str, float]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in figures.items()}


@dataclass(frozen=True)
class TrackOutcome:
    """A file scored on one track's items, as a board keeps it. Withheld figures are None
    (with ``withheld``), so no page, export or API can show them."""

    track: str
    mode: str
    split: str
    scorecard: Scorecard
    n: int
    figures: dict[str, float | None]
    intervals: dict[str, list[float]]
    by_source: list[dict[str, Any]]
    breakdowns: dict[str, Any]
    withheld: bool
    digest: str
    reasons: dict[str, int]

    @property
    def results(self) -> list[ItemResult]:
        return list(self.scorecard.results.values())


def check_covers_items(
    predictions: Mapping[str, Any], hidden_ids: Collection[str], *, stored: bool = False
) -> None:
    """A file scored against hidden (test-split) gold names every hidden item, and gives a
    prediction (not null) for at least half of them: figures on a few predictions among
    many missing ones would tell whether single guesses match the hidden gold (one right
    item of 500 moves a figure by 1/500). ``stored``: a file uploaded earlier, scored again
    after the items changed."""
    if not hidden_ids:
        return
    total = len(hidden_ids)
    missing = sorted(i for i in hidden_ids if i not in predictions)
    when = " (uploaded before the test items changed)" if stored else ""
    if missing:
        examples = ", ".join(missing[:MISSING_EXAMPLES]) + (
            ", …" if len(missing) > MISSING_EXAMPLES else ""
        )
        raise PredictionsError(
            f"The file{when} does not name {len(missing):,} of the "
            f"{counted(total, 'test-split item')} it would be scored on (e.g. {examples}). A "
            "submission scored against hidden gold names every one of them (null for no "
            "prediction); missing ones are not scored as wrong."
        )
    null = sum(1 for i in hidden_ids if predictions.get(i) is None)
    if null > total // 2:
        raise PredictionsError(
            f"The file{when} gives null for {null:,} of its {total:,} test-split items. A "
            f"submission scored against hidden gold predicts at least half of them: figures on "
            "a few predictions would give away whether single guesses match the hidden gold."
        )


def check_matches_items(
    predictions: Collection[str],
    *,
    info: TrackInfo,
    split: str,
    mode: str,
    item_ids: Collection[str],
) -> None:
    """Refuse a file that predicts none of the items it would be scored on, saying where its
    ids are instead (a validation file sent as test, a page file as region)."""
    if not predictions or any(i in item_ids for i in predictions):
        return
    places = selectors.item_places(track=info.slug, item_ids=predictions)
    described = ", ".join(
        f"{n:,} in the {where} split" + (f" ({info.mode_label(m).lower()})" if m else "")
        for (where, m), n in sorted(places.items(), key=lambda kv: -kv[1])
    )
    what = f"the {split} split" + (f" ({info.mode_label(mode).lower()})" if mode else "")
    raise PredictionsError(
        f"None of the {counted(len(predictions), 'prediction')} is for an item of {what} of "
        f"the {info.name} track; its ids are {described or 'none of the track'}. Choose the "
        "split (and mode) the file predicts."
    )


def _groups(
    items: Sequence[Item], facts: Mapping[str, selectors.ItemFacts]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Item ids by source, and by table property (those of the taxonomy, in its order)."""
    by_source: dict[str, list[str]] = defaultdict(list)
    by_property: dict[str, list[str]] = defaultdict(list)
    for item in items:
        fact = facts.get(item.id)
        if fact is None:
            continue
        by_source[fact.source].append(item.id)
        for code, value in fact.table_properties.items():
            if value is True:
                by_property[code].append(item.id)
    ordered = {
        p.code: by_property[p.code]
        for p in taxonomy.TABLE_PROPERTIES.properties
        if p.code in by_property
    }
    return dict(sorted(by_source.items())), ordered


def score_items(
    *,
    info: TrackInfo,
    mode: str,
    split: str,
    predictions: Mapping[str, Any],
    model_name: str = "",
    rows: Sequence[TrackItem] | None = None,
) -> TrackOutcome:
    """Score ``predictions`` (item id → prediction or None) on the track's items of this
    split and mode (``rows``: those items, read already), with every figure a board shows.
    Raises ``PredictionsError`` when there are no items to score on."""
    if rows is None:
        rows = selectors.scoring_rows(track=info.slug, split=split, mode=mode)
    if not rows:
        raise PredictionsError(
            f"The {info.name} track has no items in the {split} split"
            + (f" ({info.mode_label(mode).lower()})" if mode else "")
            + " to score on"
        )
    items = selectors.core_items(rows)
    card = score(info, items, predictions, model_name=model_name)
    results = card.results
    facts = {row.item_id: selectors.item_facts(row) for row in rows}
    hidden = frozenset(i for i, f in facts.items() if f.split == Split.TEST)
    sources, properties = _groups(items, facts)
    labels = selectors.source_labels()

    # The disclosure rule (hctqa.core.disclosure) on the hidden items' scores: the overall
    # figures, the sources' (largest first), then the property groups', in that priority;
    # none shown may combine with the others into a figure on 1 to the margin hidden items.
    # Every figure of a group is a sum over the same items, so one unknown stands for each.
    def unknowns(ids: Collection[str]) -> set[tuple[str, int]]:
        return {(i, 0) for i in ids if i in hidden}

    ordered_sources = sorted(sources, key=lambda s: (-len(sources[s]), s))
    shown = disclosed(
        [
            unknowns(results),
            *(unknowns(sources[s]) for s in ordered_sources),
            *(unknowns(ids) for ids in properties.values()),
        ]
    )
    overall_withheld = not shown[0]
    sources_withheld = {
        s: not ok for s, ok in zip(ordered_sources, shown[1 : 1 + len(sources)], strict=True)
    }
    property_withheld = [not ok for ok in shown[1 + len(sources) :]]

    names = [f.name for f in info.figures(mode)]

    def figures_of(ids: Sequence[str], withheld: bool) -> dict[str, float | None]:
        if withheld:
            return dict.fromkeys(names, None)
        return _rounded(aggregate(info.slug, [results[i] for i in ids], mode))

    overall = {k: v for k, v in card.figures.items() if k in names}
    spans = intervals(info.slug, list(results.values()), mode)
    by_source = [
        {
            "key": source,
            "label": labels.get(source, source),
            "n": len(ids),
            "figures": figures_of(ids, sources_withheld[source]),
            "withheld": sources_withheld[source],
        }
        for source, ids in sources.items()
    ]
    rows_by_property = []
    for (code, ids), withheld in zip(properties.items(), property_withheld, strict=True):
        rows_by_property.append(
            {
                "key": code,
                "label": taxonomy.TABLE_PROPERTIES.full_label(code),
                "n": len(ids),
                "figures": figures_of(ids, withheld),
                "withheld": withheld,
            }
        )
    digest = selectors.item_set_digest((r.item_id, r.digest) for r in rows)
    return TrackOutcome(
        track=info.slug,
        mode=mode,
        split=split,
        scorecard=card,
        n=card.n,
        figures=dict.fromkeys(names, None) if overall_withheld else _rounded(overall),
        intervals={}
        if overall_withheld
        else {k: [round(lo, 6), round(hi, 6)] for k, (lo, hi) in spans.items()},
        by_source=by_source,
        breakdowns={
            "table_properties": rows_by_property,
            "margin": DISCLOSURE_MARGIN if hidden else 0,
        },
        withheld=overall_withheld,
        digest=digest,
        reasons=card.reasons,
    )


def _qa_file(source: IO[bytes], *, split: str, data_scope: str, model_name: str) -> dict[str, Any]:
    """QA's figures for a file, both rule versions, as the reference scorer gives them."""
    questions = prompt_questions(split=split, data_scope=data_scope)
    gold = dict(questions.values_list("id", "gold_answer"))
    if not gold:
        raise PredictionsError(f"There are no {data_scope} questions in the {split} split")
    known = set(Question.objects.filter(in_gold_pool=False).values_list("id", flat=True))
    read = read_predictions(
        source,
        max_bytes=settings.SUBMISSION_MAX_BYTES,
        max_answer_chars=settings.SUBMISSION_MAX_ANSWER_CHARS,
        known_ids=known,
    )
    if read.answers and not any(q in gold for q in read.answers):
        raise PredictionsError(
            f"None of the {counted(len(read.answers), 'prediction')} is for a question of the "
            f"{split} split on {data_scope} tables"
        )
    evaluations = evaluate_all(gold, read.answers, "text", model_name=model_name)
    overall = evaluations["2025-05"].overall
    return {
        "track": "qa",
        "split": split,
        "data_scope": data_scope,
        "n": len(gold),
        "recall": overall.recall,
        "precision": overall.precision,
        "f1": overall.f1,
        "cc": overall.cc,
        "recall_2025_10": evaluations["2025-10"].overall.recall,
        "coverage": evaluations["2025-05"].coverage,
    }


def score_file(
    info: TrackInfo,
    source: IO[bytes],
    *,
    split: str,
    mode: str = "",
    data_scope: str = "real",
    model_name: str = "",
) -> dict[str, Any]:
    """A submission file scored on the track's items of a public split, nothing stored: what
    ``score_track`` prints (``n`` and the track's figures under their names). The caller
    refuses the test split; this refuses it too."""
    if split not in selectors.PUBLIC_SPLITS:
        raise PredictionsError(f"The {split} split's gold is hidden: score on train or validation")
    if info.is_qa:
        return _qa_file(source, split=split, data_scope=data_scope, model_name=model_name)
    predictions = read_submission(
        source,
        track=info.slug,  # type: ignore[arg-type]
        known_ids=selectors.item_ids(track=info.slug),
        max_bytes=settings.TRACK_SUBMISSION_MAX_BYTES,
    )
    rows = list(selectors.items_of(track=info.slug, split=split, mode=mode))
    if not rows:
        raise PredictionsError(f"The {info.name} track has no items in the {split} split")
    check_matches_items(
        predictions, info=info, split=split, mode=mode, item_ids={r.item_id for r in rows}
    )
    card = score(info, selectors.core_items(rows), predictions, model_name=model_name)
    head: dict[str, Any] = {"track": info.slug, "split": split}
    if mode:
        head["mode"] = mode
    return {**head, **card.as_dict()}
