"""The choices and figure names submissions, scores and runs share."""

from __future__ import annotations

from django.db import models

from tracks.registry import choices as track_choices


class Kind(models.TextChoices):
    SUBMISSION = "submission", "Submission"
    REPORTED = "reported", "Reported in paper"
    # The platform's own systems on a track's board (its extractor, pdfplumber, the unpivot),
    # scored like any submission.
    BASELINE = "baseline", "Baseline"


# The tracks a submission may be for (tracks.registry): QA, then the three beside it.
TRACK_CHOICES = track_choices()
QA_TRACK = "qa"


class Modality(models.TextChoices):
    TEXT = "text", "Text"
    VISION = "vision", "Vision"


class Weights(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class SizeClass(models.TextChoices):
    SMALL = "small", "Small (≤ 12B)"
    MEDIUM = "medium", "Medium (13–70B)"
    LARGE = "large", "Large (> 70B or closed)"


class TableFormat(models.TextChoices):
    PAPER = "paper", "pandas text (paper)"
    CSV = "csv", "CSV"
    HTML = "html", "HTML"
    MARKDOWN = "markdown", "Markdown"
    JSON = "json", "JSON"
    LATEX = "latex", "LaTeX"
    NONSENSICAL_CSV = "nonsensical_csv", "Nonsensical CSV"
    IMAGE = "image", "Image"
    OTHER = "other", "Other"


class PromptStyle(models.TextChoices):
    ZERO_SHOT = "zero_shot", "Zero-shot"
    ONE_SHOT = "one_shot", "One-shot"
    FEW_SHOT = "few_shot", "Few-shot"
    CHAIN_OF_THOUGHT = "chain_of_thought", "Chain of thought"
    OTHER = "other", "Other"


class EvalSplit(models.TextChoices):
    TEST = "test", "Test"
    VALIDATION = "validation", "Validation"
    TRAIN = "train", "Train"
    ALL = "all", "All splits"


class DataScope(models.TextChoices):
    """Which tables a submission is scored on: the benchmark's real or synthetic ones, or the
    demo tables made up to try the platform (a board of their own, never beside the
    others)."""

    REAL = "real", "Real tables"
    SYNTHETIC = "synthetic", "Synthetic tables"
    DEMO = "demo", "Demo tables"


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private"


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    SCORING = "scoring", "Scoring"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"


class Rules(models.TextChoices):
    """The reference scorer's published versions (hctqa.core.scoring.RULES)."""

    V2025_05 = "2025-05", "2025-05"
    V2025_10 = "2025-10", "2025-10"


DEFAULT_RULES = Rules.V2025_05.value
# The splits a public board ranks: all questions (the paper's Table 1 protocol, where its
# rows belong) and the test split. Train and validation scores are for their owners only.
BOARD_SPLITS = (EvalSplit.ALL, EvalSplit.TEST)

# The sources with their own recall column on the board, in the paper's order.
BOARD_SOURCES = ("psa", "pak", "census", "arxiv")
# A Score's figures, breakdowns aside.
SCORE_FIGURES = (
    "n_questions",
    "excluded",
    "coverage",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "cc",
    "cc_low",
    "cc_high",
    *(f"recall_{s}" for s in BOARD_SOURCES),
    "by_source",
    "withheld",
)
# A QuestionResult's figures: the 2025-05 ones, then whether 2025-10 counted it and its.
RESULT_FIGURES = (
    "precision",
    "recall",
    "f1",
    "cc",
    "counted_2025_10",
    "precision_2025_10",
    "recall_2025_10",
    "f1_2025_10",
    "cc_2025_10",
)
