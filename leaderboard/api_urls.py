from django.urls import path

from leaderboard import api

urlpatterns = [
    path("leaderboard/", api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("submissions/", api.SubmissionListApi.as_view(), name="api-submission-list"),
    path("submissions/create/", api.SubmissionCreateApi.as_view(), name="api-submission-create"),
    path("submissions/<int:pk>/", api.SubmissionDetailApi.as_view(), name="api-submission-detail"),
    path(
        "submissions/<int:pk>/rescore/",
        api.SubmissionRescoreApi.as_view(),
        name="api-submission-rescore",
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
]
