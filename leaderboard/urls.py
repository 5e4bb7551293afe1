from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.board, name="board"),
    path("vision/", views.board, {"modality": "vision"}, name="board_vision"),
    path("<str:modality>/export.<str:fmt>", views.board_export, name="board_export"),
    path("submit/", views.submit, name="submit"),
    path("tracks/<slug:track>/", views.track_board, name="track_board"),
    path(
        "tracks/<slug:track>/export.<str:fmt>",
        views.track_board_export,
        name="track_board_export",
    ),
    path("tracks/<slug:track>/submit/", views.submit, name="track_submit"),
    path("submissions/", views.my_submissions, name="my_submissions"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission_detail"),
    path("submissions/<int:pk>/rescore/", views.submission_rescore, name="submission_rescore"),
    path(
        "submissions/<int:pk>/visibility/",
        views.submission_visibility,
        name="submission_visibility",
    ),
    path("submissions/<int:pk>/delete/", views.submission_delete, name="submission_delete"),
    path(
        "submissions/<int:pk>/results.<str:fmt>",
        views.submission_results,
        name="submission_results",
    ),
    path("inference/", views.inference_runs, name="inference_runs"),
    path("inference/new/", views.inference_run_new, name="inference_run_new"),
    path("inference/<int:pk>/", views.inference_run_detail, name="inference_run_detail"),
    path("inference/<int:pk>/cancel/", views.inference_run_cancel, name="inference_run_cancel"),
    path("inference/<int:pk>/resume/", views.inference_run_resume, name="inference_run_resume"),
    path("compare/", views.compare, name="compare"),
    path("regression/", views.regression, name="regression"),
    path("rescores/", views.rescores, name="rescores"),
]
