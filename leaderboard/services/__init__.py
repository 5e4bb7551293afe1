"""Writes for the leaderboard: submissions and their scoring (``submissions``) and inference
runs that produce submissions (``inference``). Import from here."""

from leaderboard.services.inference import (
    InferenceRunInput,
    inference_run_cancel,
    inference_run_create,
    inference_run_execute,
    inference_run_resume,
    inference_run_sweep,
)
from leaderboard.services.submissions import (
    MIN_GROUP_WITH_TEST_QUESTIONS,
    ReportedImportSummary,
    SubmissionInput,
    SweepResult,
    compute_breakdowns,
    property_regression_refresh,
    reported_results_import,
    submission_create,
    submission_create_from_predictions,
    submission_delete,
    submission_rescore,
    submission_score,
    submission_sweep,
    submission_visibility_set,
    submissions_rescore_for_questions,
)

__all__ = [
    "MIN_GROUP_WITH_TEST_QUESTIONS",
    "InferenceRunInput",
    "ReportedImportSummary",
    "SubmissionInput",
    "SweepResult",
    "compute_breakdowns",
    "inference_run_cancel",
    "inference_run_create",
    "inference_run_execute",
    "inference_run_resume",
    "inference_run_sweep",
    "property_regression_refresh",
    "reported_results_import",
    "submission_create",
    "submission_create_from_predictions",
    "submission_delete",
    "submission_rescore",
    "submission_score",
    "submission_sweep",
    "submission_visibility_set",
    "submissions_rescore_for_questions",
]
