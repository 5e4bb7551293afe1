"""Writes to the dataset, by subject. Callers import from here."""

from annotation.services.annotating import (
    DraftResult,
    annotation_skip,
    property_annotation_save,
    property_draft_save,
    question_draft_save,
    question_write,
    table_properties_resolve,
)
from annotation.services.dataset import ImportSummary, release_import
from annotation.services.generation import (
    demo_generated_questions_ensure,
    generation_run_cancel,
    generation_run_create,
    generation_run_execute,
    generation_run_resume,
)
from annotation.services.synthetic import (
    synthetic_generate,
    synthetic_generation_tables,
    synthetic_params,
    synthetic_run_cancel,
    synthetic_run_create,
    synthetic_run_execute,
)
from annotation.services.verification import (
    SubmitResult,
    Verdict,
    adjudication_decide,
    leases_release_expired,
    verification_claim,
    verification_release,
    verification_renew,
    verification_slots_open,
    verification_submit,
    verifier_reinstate,
    verifier_remove,
)

__all__ = [
    "synthetic_generate",
    "synthetic_generation_tables",
    "synthetic_params",
    "synthetic_run_cancel",
    "synthetic_run_create",
    "synthetic_run_execute",
    "DraftResult",
    "ImportSummary",
    "SubmitResult",
    "Verdict",
    "adjudication_decide",
    "annotation_skip",
    "demo_generated_questions_ensure",
    "generation_run_cancel",
    "generation_run_create",
    "generation_run_execute",
    "generation_run_resume",
    "leases_release_expired",
    "property_annotation_save",
    "property_draft_save",
    "question_draft_save",
    "question_write",
    "release_import",
    "table_properties_resolve",
    "verification_claim",
    "verification_release",
    "verification_renew",
    "verification_slots_open",
    "verification_submit",
    "verifier_reinstate",
    "verifier_remove",
]
