"""Flat rows for the board's CSV and JSON exports."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from leaderboard.models import BOARD_SOURCES, Submission

BOARD_COLUMNS = (
    "rank",
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
    "precision",
    "recall",
    "f1",
    "cc",
)


def board_rows(submissions: Iterable[Submission]) -> list[dict[str, Any]]:
    rows = []
    for rank, s in enumerate(submissions, start=1):
        rows.append(
            {
                "rank": rank,
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
                "precision": s.precision,
                "precision_ci_low": s.precision_low,
                "precision_ci_high": s.precision_high,
                "recall": s.recall,
                "recall_ci_low": s.recall_low,
                "recall_ci_high": s.recall_high,
                "f1": s.f1,
                "cc": s.cc,
                "cc_ci_low": s.cc_low,
                "cc_ci_high": s.cc_high,
                **{f"recall_{src}": getattr(s, f"recall_{src}") for src in BOARD_SOURCES},
                "coverage": s.coverage,
                "submission_id": s.pk,
                "scored_at": s.scored_at.isoformat() if s.scored_at else None,
            }
        )
    return rows
