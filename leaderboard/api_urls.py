from django.urls import path

from leaderboard import api

urlpatterns = [
    path("leaderboard/", api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("tracks/<slug:track>/board/", api.TrackBoardApi.as_view(), name="api-track-board"),
    path("submissions/", api.SubmissionListApi.as_view(), name="api-submission-list"),
    path("submissions/create/", api.SubmissionCreateApi.as_view(), name="api-submission-create"),
    path("submissions/<int:pk>/", api.SubmissionDetailApi.as_view(), name="api-submission-detail"),
    path(
        "submissions/<int:pk>/rescore/",
        api.SubmissionRescoreApi.as_view(),
        name="api-submission-rescore",
    ),
    path(
        "submissions/<int:pk>/visibility/",
        api.SubmissionVisibilityApi.as_view(),
        name="api-submission-visibility",
    ),
    path(
        "submissions/<int:pk>/delete/",
        api.SubmissionDeleteApi.as_view(),
        name="api-submission-delete",
    ),
    path(
        "submissions/<int:pk>/results/",
        api.SubmissionResultsApi.as_view(),
        name="api-submission-results",
    ),
    path(
        "submissions/<int:pk>/item-results/",
        api.SubmissionItemResultsApi.as_view(),
        name="api-submission-item-results",
    ),
    path("inference-runs/", api.InferenceRunListApi.as_view(), name="api-inference-run-list"),
    path(
        "inference-runs/create/",
        api.InferenceRunCreateApi.as_view(),
        name="api-inference-run-create",
    ),
    path(
        "inference-runs/<int:pk>/",
        api.InferenceRunDetailApi.as_view(),
        name="api-inference-run-detail",
    ),
    path(
        "inference-runs/<int:pk>/cancel/",
        api.InferenceRunCancelApi.as_view(),
        name="api-inference-run-cancel",
    ),
    path(
        "inference-runs/<int:pk>/resume/",
        api.InferenceRunResumeApi.as_view(),
        name="api-inference-run-resume",
    ),
]
