from django.urls import path

from annotation import synthetic_views, views

app_name = "annotation"

urlpatterns = [
    path("dataset/", views.dataset, name="dataset"),
    path("dataset/coverage/", synthetic_views.coverage, name="coverage"),
    path("tables/<str:table_id>/", views.table_detail, name="table_detail"),
    path("tables/<str:table_id>/download/<str:fmt>/", views.table_download, name="table_download"),
]
