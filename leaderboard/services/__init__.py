"""Writes for the leaderboard: submissions (``submissions``), their scoring (``scoring``),
scoring them again when the dataset changes (``rescoring``) and inference runs that produce
submissions (``inference``). Import from here."""

from leaderboard.services.inference import (
    InferenceRunInput,
    inference_run_cancel,
    inference_run_create,
    inference_run_execute,
    inference_run_resume,
    inference_run_sweep,
)
from leaderboard.services.rescoring import (
    RescoreProgress,
    SweepResult,
    current_question_sets,
    rescore_progress,
    rescore_run,
    rescore_start,
    submission_sweep,
    submissions_invalidate,
)
from leaderboard.services.scoring import (
    ScoringContext,
    compute_breakdowns,
    gold_claims_check,
    submission_score,
)
from leaderboard.services.submissions import (
    ReportedImportSummary,
    SubmissionInput,
    check_answers_every_test_question,
    check_matches_split,
    property_regression_refresh,
    reported_results_import,
    submission_create,
    submission_create_from_predictions,
    submission_delete,
    submission_rescore,
    submission_visibility_set,
)

__all__ = [
    "InferenceRunInput",
    "ReportedImportSummary",
    "RescoreProgress",
    "ScoringContext",
    "SubmissionInput",
    "SweepResult",
    "check_answers_every_test_question",
    "check_matches_split",
    "compute_breakdowns",
    "current_question_sets",
    "gold_claims_check",
    "inference_run_cancel",
    "inference_run_create",
    "inference_run_execute",
    "inference_run_resume",
    "inference_run_sweep",
    "property_regression_refresh",
    "reported_results_import",
    "rescore_progress",
    "rescore_run",
    "rescore_start",
    "submission_create",
    "submission_create_from_predictions",
    "submission_delete",
    "submission_rescore",
    "submission_score",
    "submission_sweep",
    "submission_visibility_set",
    "submissions_invalidate",
]
