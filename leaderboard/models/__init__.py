"""Submissions, their per-question results and scores, re-scorings, the property regression
and inference runs, by subject; every model class is imported here, and callers import
from here."""

from leaderboard.models.choices import (
    BOARD_SOURCES,
    BOARD_SPLITS,
    DEFAULT_RULES,
    QA_TRACK,
    RESULT_FIGURES,
    SCORE_FIGURES,
    TRACK_CHOICES,
    DataScope,
    EvalSplit,
    Kind,
    Modality,
    PromptStyle,
    Rules,
    SizeClass,
    Status,
    TableFormat,
    Visibility,
    Weights,
)
from leaderboard.models.inference import (
    ACTIVE_RUN_STATUSES,
    INFERENCE_FORMATS,
    INFERENCE_STYLES,
    CachedResponse,
    InferenceResponse,
    InferenceRun,
    ResponseStatus,
)
from leaderboard.models.regression import PropertyRegression
from leaderboard.models.rescoring import Rescore
from leaderboard.models.submissions import (
    DailyLimitEntry,
    ItemResult,
    KeptUpload,
    QuestionResult,
    Score,
    Submission,
    TrackScore,
    private_storage,
)

# The runs' and re-scorings' status (the job lifecycle's), which callers import from here.
from plumbing.jobs import RunStatus

__all__ = [
    "ACTIVE_RUN_STATUSES",
    "BOARD_SOURCES",
    "BOARD_SPLITS",
    "CachedResponse",
    "DEFAULT_RULES",
    "DailyLimitEntry",
    "DataScope",
    "EvalSplit",
    "INFERENCE_FORMATS",
    "INFERENCE_STYLES",
    "InferenceResponse",
    "InferenceRun",
    "ItemResult",
    "KeptUpload",
    "Kind",
    "Modality",
    "PromptStyle",
    "PropertyRegression",
    "QA_TRACK",
    "QuestionResult",
    "RESULT_FIGURES",
    "Rescore",
    "ResponseStatus",
    "RunStatus",
    "Rules",
    "SCORE_FIGURES",
    "Score",
    "SizeClass",
    "Status",
    "Submission",
    "TRACK_CHOICES",
    "TableFormat",
    "TrackScore",
    "Visibility",
    "Weights",
    "private_storage",
]
