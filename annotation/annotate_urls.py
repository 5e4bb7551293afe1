from django.urls import path

from annotation import annotate_views as views
from annotation import synthetic_views, verify_views

app_name = "annotate"

urlpatterns = [
    path("", views.hub, name="hub"),
    path("synthetic/", synthetic_views.synthetic, name="synthetic"),
    path("synthetic/<int:run_id>/", synthetic_views.synthetic_run, name="synthetic_run"),
    path(
        "synthetic/<int:run_id>/cancel/",
        synthetic_views.synthetic_run_cancel,
        name="synthetic_run_cancel",
    ),
    path("properties/", views.property_next, name="properties_next"),
    path("properties/<str:table_id>/", views.property_tool, name="properties"),
    path("questions/", views.question_next, name="questions_next"),
    path("questions/<str:table_id>/", views.question_tool, name="questions"),
    path("mine/", views.recent, name="recent"),
    path("mine/questions/<str:question_id>/", views.question_change, name="question_change"),
    path("mine/verdicts/<uuid:slot_id>/", verify_views.verdict_change, name="verdict_change"),
    path("assignments/", views.assignments, name="assignments"),
    path("assignments/withdraw/", views.assignments_withdraw, name="assignments_withdraw"),
    path("flags/", views.flags, name="flags"),
    path("flags/new/", views.flag_new, name="flag_new"),
    path("flags/<int:flag_id>/resolve/", views.flag_resolve, name="flag_resolve"),
    path("agreement/", views.agreement, name="agreement"),
    path("agreement/<str:table_id>/", views.resolve, name="resolve"),
    path("verify/", verify_views.verify_next, name="verify_next"),
    path("verify/<uuid:slot_id>/", verify_views.verify, name="verify"),
    path("verify/<uuid:slot_id>/skip/", verify_views.verify_skip, name="verify_skip"),
    path("adjudication/", verify_views.adjudication, name="adjudication"),
    path("adjudication/<str:question_id>/", verify_views.adjudicate, name="adjudicate"),
    path("verification/", verify_views.dashboard, name="verification_dashboard"),
    path(
        "verification/verifiers/<int:user_id>/reinstate/",
        verify_views.verifier_reinstate,
        name="verifier_reinstate",
    ),
    path("gold/", verify_views.gold_pool, name="gold_pool"),
    path("generation/", verify_views.generation, name="generation"),
    path("generation/<int:run_id>/", verify_views.generation_run, name="generation_run"),
    path(
        "generation/<int:run_id>/cancel/",
        verify_views.generation_cancel,
        name="generation_cancel",
    ),
    path(
        "generation/<int:run_id>/resume/",
        verify_views.generation_resume,
        name="generation_resume",
    ),
]
