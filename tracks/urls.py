from django.urls import path

from tracks import views

app_name = "tracks"

urlpatterns = [
    path("", views.index, name="index"),
    path("build/", views.build_start, name="build_start"),
    path("build/status/", views.build_status, name="build_status"),
]
