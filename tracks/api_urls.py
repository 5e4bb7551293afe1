from django.urls import path

from tracks import api

urlpatterns = [
    path("tracks/", api.TrackListApi.as_view(), name="api-track-list"),
]
