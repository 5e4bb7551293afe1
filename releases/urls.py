from django.urls import path

from releases import views

app_name = "releases"

urlpatterns = [
    path("", views.release_list, name="list"),
    path("cut/", views.release_cut, name="cut"),
    path("builds/<int:build_id>/", views.build_detail, name="build"),
    path("<str:version>/", views.release_detail, name="detail"),
    path("<str:version>/<str:edition>/<path:path>", views.release_download, name="download"),
]
