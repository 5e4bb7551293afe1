from django.urls import path

from annotation import verify_api as api

urlpatterns = [
    path("claim/", api.VerifyClaimApi.as_view(), name="api-verify-claim"),
    path("slots/<uuid:slot_id>/renew/", api.VerifyRenewApi.as_view(), name="api-verify-renew"),
    path("slots/<uuid:slot_id>/submit/", api.VerifySubmitApi.as_view(), name="api-verify-submit"),
    path(
        "slots/<uuid:slot_id>/release/", api.VerifyReleaseApi.as_view(), name="api-verify-release"
    ),
    path("adjudication/", api.AdjudicationListApi.as_view(), name="api-verify-adjudication"),
    path(
        "adjudication/<str:question_id>/decide/",
        api.AdjudicationDecideApi.as_view(),
        name="api-verify-decide",
    ),
    path("dashboard/", api.VerificationDashboardApi.as_view(), name="api-verify-dashboard"),
    path("gold-pool/", api.GoldPoolApi.as_view(), name="api-gold-pool"),
    path("gold-pool/add/", api.GoldPoolAddApi.as_view(), name="api-gold-pool-add"),
    path("gold-pool/remove/", api.GoldPoolRemoveApi.as_view(), name="api-gold-pool-remove"),
    path("gold-verdicts/", api.GoldVerdictsApi.as_view(), name="api-gold-verdicts"),
    path("generation-runs/", api.GenerationRunsApi.as_view(), name="api-generation-runs"),
    path(
        "generation-runs/<int:run_id>/", api.GenerationRunApi.as_view(), name="api-generation-run"
    ),
    path(
        "generation-runs/<int:run_id>/cancel/",
        api.GenerationCancelApi.as_view(),
        name="api-generation-cancel",
    ),
]
