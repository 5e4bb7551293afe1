"""Flat rows for the board's CSV and JSON exports and the per-question downloads."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from leaderboard.models import BOARD_SOURCES, Score, Submission
from leaderboard.selectors import RESULT_EXPORT_FIGURES

BOARD_COLUMNS = (
    "rank",
    "rules",
    "model",
    "organisation",
    "reported_in_paper",
    "parameters_billions",
    "size_class",
    "weights",
    "modality",
    "table_format",
    "prompt_style",
    "split",
    "data_scope",
    "n_questions",
    "excluded",
    "too_long_prompts",
    "tables",
    "release",
    "precision",
    "precision_ci_low",
    "precision_ci_high",
    "recall",
    "recall_ci_low",
    "recall_ci_high",
    "f1",
    "cc",
    "cc_ci_low",
    "cc_ci_high",
    *(f"recall_{src}" for src in BOARD_SOURCES),
    "coverage",
    "submission_id",
    "scored_at",
)
RESULT_COLUMNS = (
    "question_id",
    "split",
    "prediction",
    "answered",
    "gold_answer",
    *RESULT_EXPORT_FIGURES,
)


def board_rows(scores: Iterable[Score]) -> list[dict[str, Any]]:
    """The ranked rows of a board, one per score (its submission joined)."""
    rows = []
    for rank, score in enumerate(scores, start=1):
        s = score.submission
        rows.append(
            {
                "rank": rank,
                "rules": score.rules,
                "model": s.model_name,
                "organisation": s.organisation,
                "reported_in_paper": s.is_reported,
                "parameters_billions": float(s.parameters_billions)
                if s.parameters_billions
                else None,
                "size_class": s.size_class,
                "weights": s.weights,
                "modality": s.modality,
                "table_format": s.table_format,
                "prompt_style": s.prompt_style,
                "split": s.split,
                "data_scope": s.data_scope,
                "n_questions": score.n_questions,
                "excluded": score.excluded,
                # Prompts over the model's context length in the run that made it: scored as
                # empty answers (always 0 for uploads and the paper's rows).
                "too_long_prompts": s.too_long_prompts,
                # Where it was computed: the tables of its question set and the release
                # holding them (none for the paper's rows, which are its figures).
                "tables": s.question_set_tables,
                "release": getattr(score, "release_version", None),
                "precision": score.precision,
                "precision_ci_low": score.precision_low,
                "precision_ci_high": score.precision_high,
                "recall": score.recall,
                "recall_ci_low": score.recall_low,
                "recall_ci_high": score.recall_high,
                "f1": score.f1,
                "cc": score.cc,
                "cc_ci_low": score.cc_low,
                "cc_ci_high": score.cc_high,
                **{f"recall_{src}": getattr(score, f"recall_{src}") for src in BOARD_SOURCES},
                "coverage": score.coverage,
                "submission_id": s.pk,
                "scored_at": s.scored_at.isoformat() if s.scored_at else None,
            }
        )
    return rows


def being_rescored_rows(submissions: Iterable[Submission]) -> list[dict[str, Any]]:
    """A board's submissions waiting to be scored again: not ranked, no figures."""
    return [
        {
            "submission_id": s.pk,
            "model": s.model_name,
            "organisation": s.organisation,
            "status": s.status,
            "progress": s.progress,
        }
        for s in submissions
    ]


# --- The tracks beside QA ------------------------------------------------------------------


def item_result_rows(info: Any, rows: list[dict[str, Any]]) -> tuple[list[dict], tuple]:
    """Per-item results, flat: one column per figure of the item (null where its gold is
    hidden), and its detail as JSON text."""
    names = sorted({k for r in rows for k in (r["figures"] or {})})
    out = []
    for r in rows:
        figures = r["figures"] or {}
        out.append(
            {
                "id": r["id"],
                "split": r["split"],
                "reason": r["reason"],
                "message": r["message"],
                **{name: figures.get(name) for name in names},
                "detail": None if r["detail"] is None else json.dumps(r["detail"]),
            }
        )
    return out, ("id", "split", "reason", "message", *names, "detail")


def track_board_rows(info: Any, filters: Any, rows: Iterable[Any]) -> tuple[list[dict], tuple]:
    """A track board's ranked rows, flat, with the columns in order: each figure with its
    interval (all items) and the primary figure per item source."""
    figures = [f.name for f in info.figures(filters.mode)]
    out = []
    sources: set[str] = set()
    for rank, row in enumerate(rows, start=1):
        s = row.submission
        record: dict[str, Any] = {
            "rank": rank,
            "track": s.track,
            "mode": s.mode,
            "figures_on": filters.group or "all items",
            "model": s.model_name,
            "organisation": s.organisation,
            "baseline": s.is_baseline,
            "parameters_billions": float(s.parameters_billions) if s.parameters_billions else None,
            "weights": s.weights,
            "modality": s.modality,
            "split": s.split,
            "n_items": row.n,
        }
        for name in figures:
            record[name] = row.figures.get(name)
            low_high = row.intervals.get(name) or [None, None]
            record[f"{name}_ci_low"], record[f"{name}_ci_high"] = low_high
        for source, value in row.by_source.items():
            record[f"{info.primary}_{source}"] = value
            sources.add(source)
        record["submission_id"] = s.pk
        record["scored_at"] = s.scored_at.isoformat() if s.scored_at else None
        out.append(record)
    columns = (
        "rank",
        "track",
        "mode",
        "figures_on",
        "model",
        "organisation",
        "baseline",
        "parameters_billions",
        "weights",
        "modality",
        "split",
        "n_items",
        *(c for name in figures for c in (name, f"{name}_ci_low", f"{name}_ci_high")),
        *(f"{info.primary}_{source}" for source in sorted(sources)),
        "submission_id",
        "scored_at",
    )
    return out, columns
